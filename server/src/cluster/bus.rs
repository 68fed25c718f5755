//! The Redis bus between the instances of a cluster: whether it is
//! reachable (what `/healthz` says); who is online on each instance (a key
//! per instance, rewritten every second, gone 3 s after its instance is);
//! and the word an instance sends when it lets its games go at a stop, so
//! that another adopts them at once rather than at its next look.
//!
//! Its task keeps one connection for commands and one subscription; a
//! Redis that stops answering is noticed within [`PING`] + [`ANSWER`], and
//! tried again every [`PING`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use redis::AsyncConnectionConfig;
use tictactoe_protocol::OnlinePlayer;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

mod calls;

use calls::{BATCH, carry, lead, pair, relay_out, resign, tell_waiting, tell_who};

use super::matchmaker::{Matchmaker, PASS, WAIT};
use super::relay::{Envelope, Outgoing};
use super::route::{Input, Router, ToBus, WHO};
use crate::cmd::LobbyCmd;
use crate::core::signal::Shutdown;

/// How often the bus is checked (and, while down, tried again).
const PING: Duration = Duration::from_secs(1);

/// Longest a connection attempt or a command waits for Redis.
const ANSWER: Duration = Duration::from_secs(1);

/// The channel an instance announces its stop on (its name), when it starts
/// stopping and again once its games are let go.
pub const RELEASED: &str = "ttt:released";

/// The channel an instance whose bus was away says it is back on (its name):
/// the others re-send what its players may have missed.
const BACK: &str = "ttt:back";

/// How long an instance's list of who is online on it lasts unless rewritten.
const WHO_LASTS: Duration = Duration::from_secs(3);

/// Who is online, between the lobby and the bus.
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub struct WhoLists {
    pub instance: String,
    /// Who is online here, every second, from the lobby.
    pub here: mpsc::Receiver<Vec<OnlinePlayer>>,
    /// Who is online on the other instances, each with its instance, to the lobby.
    pub elsewhere: mpsc::Sender<Vec<(Arc<str>, OnlinePlayer)>>,
}

/// Whether this instance reaches the bus.
#[derive(Debug, Default)]
pub struct BusState {
    up: AtomicBool,
}

impl BusState {
    /// Whether Redis answered within the last check.
    pub fn up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// What `/healthz` says of the bus.
    pub fn text(&self) -> &'static str {
        match self.up() {
            true => "ok",
            false => "cannot reach Redis",
        }
    }

    fn set(&self, up: bool) {
        if self.up.swap(up, Ordering::Relaxed) != up {
            match up {
                true => info!("the bus (Redis) is reachable"),
                false => warn!("the bus (Redis) cannot be reached; this instance keeps its own games going"),
            }
            ::metrics::gauge!("ttt_bus_up").set(if up { 1.0 } else { 0.0 });
        }
    }
}

/// Checks that `url` names a Redis server (`redis://HOST:PORT`,
/// `redis+unix:///path`), saying what is wrong if not.
pub fn check_url(url: &str) -> Result<(), String> {
    match redis::Client::open(url) {
        Ok(_) => Ok(()),
        // Not quoted: it may hold a password.
        Err(_) => {
            Err("--redis is not a Redis URL: use redis://HOST:PORT or redis+unix:///path/to/socket".into())
        }
    }
}

/// What the bus carries besides presence: the lobby's asks, messages for
/// other instances, and the routing of relayed connections.
pub struct Relay {
    /// The routing state.
    pub router: Router,
    /// What the lobby asks.
    pub from_lobby: mpsc::UnboundedReceiver<ToBus>,
    /// The lobby's inbox, for what the router hands it.
    pub lobby: mpsc::Sender<LobbyCmd>,
    /// Messages for other instances, from links and ghosts.
    pub outgoing: mpsc::Receiver<Outgoing>,
    /// This run of the instance (drawn at its start).
    pub run: u64,
    /// This instance's tournament players free now, as its tournament task
    /// last wrote them.
    pub tournament_free: tokio::sync::watch::Receiver<Vec<super::tournaments::FreePlayer>>,
}

/// The channel of instance `name`'s messages.
pub fn channel(name: &str) -> String {
    format!("ttt:i:{name}")
}

/// Starts the bus's task on `url`: it keeps `state` true while Redis
/// answers, relays connections to and from rooms on other instances, pairs
/// quick matches when it leads, and calls `released` with each stopped
/// instance's name.
pub fn start(
    url: &str,
    mut presence: WhoLists,
    mut relay: Relay,
    stop: Shutdown,
    tracker: &TaskTracker,
    released: impl Fn(&str) + Send + Sync + 'static,
) -> Result<Arc<BusState>, String> {
    let client = redis::Client::open(url).map_err(|_| "--redis is not a Redis URL".to_owned())?;
    let state = Arc::new(BusState::default());
    let shared = state.clone();
    ::metrics::gauge!("ttt_bus_up").set(0.0);
    ::metrics::gauge!("ttt_matchmaker_leading").set(0.0);
    tracker.spawn(async move {
        let mut matchmaker = Matchmaker::default();
        loop {
            let ended: Result<std::convert::Infallible, String> = tokio::select! {
                _ = stop.started() => {
                    // The others stop sending this one's players here now;
                    // they resume there once the games are saved.
                    // The lead goes to another at once, not when it runs out.
                    let name = presence.instance.clone();
                    let said = async {
                        let mut conn = client.get_multiplexed_async_connection().await?;
                        resign(&mut matchmaker, &name, &mut conn).await;
                        // Nobody is paired with, or looked for, here any more.
                        let keys = [format!("{WAIT}:{name}"), format!("{WHO}:{name}")];
                        redis::cmd("DEL").arg(&keys).query_async::<i64>(&mut conn).await?;
                        redis::cmd("PUBLISH").arg(RELEASED).arg(name).query_async::<i64>(&mut conn).await
                    };
                    let _ = tokio::time::timeout(ANSWER, said).await;
                    return;
                }
                ended = serve(&client, &shared, &mut presence, &mut relay, &mut matchmaker, &released) => ended,
            };
            shared.set(false);
            matchmaker.leading = false;
            let down = relay.router.handle(Input::Down, Instant::now());
            let _ = carry(&mut relay.router, &relay.lobby, down, None).await;
            // Without the bus, `who` lists this instance's players only.
            let _ = presence.elsewhere.try_send(Vec::new());
            let Err(why) = ended;
            tracing::debug!("the bus's connection ended: {why}");
            let wait = tokio::time::sleep(PING);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    _ = stop.started() => return,
                    _ = &mut wait => break,
                    Some(ask) = relay.from_lobby.recv() => {
                        let outputs = relay.router.handle(Input::Lobby(ask), Instant::now());
                        let _ = carry(&mut relay.router, &relay.lobby, outputs, None).await;
                    }
                    Some(msg) = relay.outgoing.recv() => {
                        let outputs = relay.router.handle(Input::Undeliverable(msg), Instant::now());
                        let _ = carry(&mut relay.router, &relay.lobby, outputs, None).await;
                    }
                }
            }
        }
    });
    Ok(state)
}

/// One connection's life: subscribed, checked every [`PING`], until it
/// fails (returns why).
async fn serve(
    client: &redis::Client,
    state: &BusState,
    presence: &mut WhoLists,
    relay: &mut Relay,
    matchmaker: &mut Matchmaker,
    released: &(impl Fn(&str) + Sync),
) -> Result<std::convert::Infallible, String> {
    let config = AsyncConnectionConfig::new().set_connection_timeout(ANSWER).set_response_timeout(ANSWER);
    let mut conn =
        client.get_multiplexed_async_connection_with_config(&config).await.map_err(|e| e.to_string())?;
    let mut pubsub = match tokio::time::timeout(ANSWER, client.get_async_pubsub()).await {
        Ok(p) => p.map_err(|e| e.to_string())?,
        Err(_) => return Err("no answer".into()),
    };
    let mine = channel(&presence.instance);
    match tokio::time::timeout(ANSWER, pubsub.subscribe(&[RELEASED, BACK, mine.as_str()])).await {
        Ok(r) => r.map_err(|e| e.to_string())?,
        Err(_) => return Err("no answer".into()),
    }
    let me: Arc<str> = presence.instance.as_str().into();
    let (run, lobby) = (relay.run, &relay.lobby);
    let router = &mut relay.router;
    // What was written or lost while the bus was away.
    let outputs = router.handle(Input::Resync, Instant::now());
    carry(router, lobby, outputs, Some(&mut conn)).await.map_err(|e| e.to_string())?;
    // Listed before it says it is back: the others look it up at once.
    let listed = format!("{WHO}:{}", presence.instance);
    redis::pipe()
        .cmd("SET")
        .arg(&listed)
        .arg("[]")
        .arg("PX")
        .arg(WHO_LASTS.as_millis() as u64)
        .arg("NX")
        .ignore()
        .cmd("SADD")
        .arg(WHO)
        .arg(&*me)
        .ignore()
        .query_async::<()>(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    let _: i64 =
        redis::cmd("PUBLISH").arg(BACK).arg(&*me).query_async(&mut conn).await.map_err(|e| e.to_string())?;
    let mut messages = pubsub.on_message();
    let mut every = tokio::time::interval(PING);
    let mut pass = tokio::time::interval(PASS);
    pass.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut instances: Vec<Arc<str>> = Vec::new();
    let mut told_waiting = false;
    let mut tournaments = tokio::time::interval(super::tournaments::TOURNAMENT_PASS);
    tournaments.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut pairing = super::tournaments::Pairing::default();
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        tokio::select! {
            _ = every.tick() => {
                let pong: redis::RedisResult<String> = redis::cmd("PING").query_async(&mut conn).await;
                pong.map_err(|e| e.to_string())?;
                state.set(true);
                let outputs = router.handle(Input::Sweep, Instant::now());
                carry(router, lobby, outputs, Some(&mut conn)).await.map_err(|e| e.to_string())?;
                lead(matchmaker, &me, &mut conn).await.map_err(|e| e.to_string())?;
                let (ghosts, relayed) = router.counts();
                ::metrics::gauge!("ttt_relay_ghosts").set(ghosts as f64);
                ::metrics::gauge!("ttt_relay_connections").set(relayed as f64);
                told_waiting = false;
            }
            _ = pass.tick() => {
                let outputs = router.handle(Input::Retry, Instant::now());
                carry(router, lobby, outputs, Some(&mut conn)).await.map_err(|e| e.to_string())?;
                // Who waits here, written when it changes and every second.
                if !told_waiting || !router.waiting.is_empty() {
                    tell_waiting(&me, &router.waiting, &mut conn).await.map_err(|e| e.to_string())?;
                    told_waiting = true;
                }
                if matchmaker.leading {
                    let moves = pair(matchmaker, &instances, &mut conn).await.map_err(|e| e.to_string())?;
                    for m in moves {
                        let _ = relay_out((&me, run), &mut conn, vec![m]).await;
                    }
                }
            }
            _ = tournaments.tick() => {
                let free = relay.tournament_free.borrow().clone();
                let moves = calls::tournament_pass(&me, &free, matchmaker.leading.then_some((&mut pairing, &instances[..])), &mut conn)
                    .await
                    .map_err(|e| e.to_string())?;
                if !moves.is_empty() {
                    relay_out((&me, run), &mut conn, moves).await.map_err(|e| e.to_string())?;
                }
            }
            Some(here) = presence.here.recv() => {
                let (elsewhere, names) = tell_who(&mut conn, &presence.instance, &here).await.map_err(|e| e.to_string())?;
                let outputs = router.handle(Input::Listed(names.clone()), Instant::now());
                carry(router, lobby, outputs, Some(&mut conn)).await.map_err(|e| e.to_string())?;
                instances = names;
                let _ = presence.elsewhere.try_send(elsewhere);
            }
            msg = messages.next() => {
                let Some(msg) = msg else { return Err("the subscription ended".into()) };
                let input = match msg.get_channel_name() {
                    BACK => match msg.get_payload::<String>() {
                        Ok(name) if *name != *me => Input::Returned(name),
                        _ => continue,
                    },
                    RELEASED => match msg.get_payload::<String>() {
                        Ok(name) => {
                            released(&name);
                            Input::Stopped(name)
                        }
                        Err(_) => continue,
                    },
                    _ => {
                        ::metrics::counter!("ttt_relay_messages_total", "way" => "in").increment(1);
                        match serde_json::from_slice::<Envelope>(msg.get_payload_bytes()) {
                            Ok(env) => {
                                ::metrics::counter!("ttt_relay_items_total", "way" => "in").increment(env.items() as u64);
                                Input::Incoming(env)
                            }
                            Err(e) => {
                                warn!("a message on the bus could not be read: {e}");
                                continue;
                            }
                        }
                    }
                };
                let outputs = router.handle(input, Instant::now());
                carry(router, lobby, outputs, Some(&mut conn)).await.map_err(|e| e.to_string())?;
            }
            Some(ask) = relay.from_lobby.recv() => {
                let mut outputs = router.handle(Input::Lobby(ask), Instant::now());
                while let Ok(ask) = relay.from_lobby.try_recv() {
                    outputs.extend(router.handle(Input::Lobby(ask), Instant::now()));
                }
                carry(router, lobby, outputs, Some(&mut conn)).await.map_err(|e| e.to_string())?;
            }
            n = relay.outgoing.recv_many(&mut batch, BATCH) => {
                if n == 0 {
                    return Err("the relay's queue closed".into());
                }
                relay_out((&me, run), &mut conn, std::mem::take(&mut batch)).await.map_err(|e| e.to_string())?;
            }
        }
    }
}

/// Tells every instance that `instance` let its games go (it stopped), on
/// a connection of its own: the bus's task has stopped by then. Best
/// effort: without it they adopt at their next look, within a second.
pub fn announce_release(url: &str, instance: &str) {
    let sent =
        redis::Client::open(url).and_then(|c| c.get_connection_with_timeout(ANSWER)).and_then(|mut c| {
            c.set_read_timeout(Some(ANSWER))?;
            c.set_write_timeout(Some(ANSWER))?;
            redis::cmd("PUBLISH").arg(RELEASED).arg(instance).query::<i64>(&mut c)
        });
    if let Err(e) = sent {
        warn!("could not tell the other instances that this one stopped: {e}");
    }
}
