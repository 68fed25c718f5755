//! The Redis bus between the instances of a cluster: whether it is
//! reachable (what `/healthz` says); who is online on each instance (a key
//! per instance, rewritten every second, gone 3 s after its instance is);
//! and the word an instance sends when it lets its games go at a stop, so
//! that another adopts them at once rather than at its next look.
//!
//! Its task keeps one connection for commands, one subscription, and one
//! connection for the messages to other instances, which a publisher task
//! of its own sends (`bus/publish.rs`): a relayed move waits behind no
//! lookup, no list of who is online, no matchmaker's pass. The router runs
//! in a control loop that never waits for Redis (`bus/serve.rs`); what it
//! asks of Redis a worker carries out (`bus/worker.rs`) and answers back.
//! A Redis that stops answering is noticed within [`PING`] + [`ANSWER`]
//! (by whichever part fails first; all three then end together), and tried
//! again every [`PING`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tictactoe_protocol::OnlinePlayer;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

mod calls;
mod publish;
mod serve;
mod worker;

use calls::{carry, resign};
use publish::Outbox;
use worker::Job;

use super::matchmaker::{Matchmaker, WAIT};
use super::relay::Outgoing;
use super::route::{Input, Output, Router, ToBus, WHO};
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

/// What the bus's task keeps across its connections to Redis.
struct Kept {
    presence: WhoLists,
    router: Router,
    from_lobby: mpsc::UnboundedReceiver<ToBus>,
    lobby: mpsc::Sender<LobbyCmd>,
    outgoing: Outbox,
    run: u64,
    tournament_free: tokio::sync::watch::Receiver<Vec<super::tournaments::FreePlayer>>,
    matchmaker: Matchmaker,
    /// What the router hands the worker, and what it answers: kept here so
    /// that what one connection left undone is answered, not lost.
    to_worker: mpsc::UnboundedSender<Job>,
    jobs: mpsc::UnboundedReceiver<Job>,
    to_router: mpsc::UnboundedSender<Input>,
    answers: mpsc::UnboundedReceiver<Input>,
    /// What the worker took and had not carried out.
    pending: Vec<Output>,
}

impl Kept {
    /// What the last connection left undone, handled without Redis: the
    /// worker's answers and its lookups (which find nothing); writes wait
    /// for the bus to come back, when every room is written again.
    async fn without_redis(&mut self) {
        let mut outputs = std::mem::take(&mut self.pending);
        while let Ok(job) = self.jobs.try_recv() {
            if let Job::Redis(asks) = job {
                outputs.extend(asks);
            }
        }
        while let Ok(input) = self.answers.try_recv() {
            outputs.extend(self.router.handle(input, Instant::now()));
        }
        let _ = carry(&mut self.router, &self.lobby, outputs, None).await;
    }
}

/// Starts the bus's task on `url`: it keeps `state` true while Redis
/// answers, relays connections to and from rooms on other instances, pairs
/// quick matches when it leads, and calls `released` with each stopped
/// instance's name.
pub fn start(
    url: &str,
    presence: WhoLists,
    relay: Relay,
    stop: Shutdown,
    tracker: &TaskTracker,
    released: impl Fn(&str) + Send + Sync + 'static,
) -> Result<Arc<BusState>, String> {
    let client = redis::Client::open(url).map_err(|_| "--redis is not a Redis URL".to_owned())?;
    let state = Arc::new(BusState::default());
    let shared = state.clone();
    ::metrics::gauge!("ttt_bus_up").set(0.0);
    ::metrics::gauge!("ttt_matchmaker_leading").set(0.0);
    let Relay { router, from_lobby, lobby, outgoing, run, tournament_free } = relay;
    let (to_worker, jobs) = mpsc::unbounded_channel();
    let (to_router, answers) = mpsc::unbounded_channel();
    let mut kept = Kept {
        presence,
        router,
        from_lobby,
        lobby,
        outgoing: Arc::new(tokio::sync::Mutex::new(outgoing)),
        run,
        tournament_free,
        matchmaker: Matchmaker::default(),
        to_worker,
        jobs,
        to_router,
        answers,
        pending: Vec::new(),
    };
    tracker.spawn(async move {
        loop {
            let ended: Result<std::convert::Infallible, String> = tokio::select! {
                _ = stop.started() => {
                    // The others stop sending this one's players here now;
                    // they resume there once the games are saved.
                    // The lead goes to another at once, not when it runs out.
                    let name = kept.presence.instance.clone();
                    let matchmaker = &mut kept.matchmaker;
                    let said = async {
                        let mut conn = client.get_multiplexed_async_connection().await?;
                        resign(matchmaker, &name, &mut conn).await;
                        // Nobody is paired with, or looked for, here any more.
                        let keys = [format!("{WAIT}:{name}"), format!("{WHO}:{name}")];
                        redis::cmd("DEL").arg(&keys).query_async::<i64>(&mut conn).await?;
                        redis::cmd("PUBLISH").arg(RELEASED).arg(name).query_async::<i64>(&mut conn).await
                    };
                    let _ = tokio::time::timeout(ANSWER, said).await;
                    return;
                }
                ended = serve::serve(&client, &shared, &mut kept, &released) => ended,
            };
            shared.set(false);
            kept.matchmaker.leading = false;
            kept.without_redis().await;
            let down = kept.router.handle(Input::Down, Instant::now());
            let _ = carry(&mut kept.router, &kept.lobby, down, None).await;
            // Without the bus, `who` lists this instance's players only.
            let _ = kept.presence.elsewhere.try_send(Vec::new());
            let Err(why) = ended;
            tracing::debug!("the bus's connection ended: {why}");
            // The publisher, aborted with its connection, lets the queue go.
            let outgoing = kept.outgoing.clone();
            let mut outgoing = tokio::select! {
                _ = stop.started() => return,
                held = outgoing.lock() => held,
            };
            let wait = tokio::time::sleep(PING);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    _ = stop.started() => return,
                    _ = &mut wait => break,
                    Some(ask) = kept.from_lobby.recv() => {
                        let outputs = kept.router.handle(Input::Lobby(ask), Instant::now());
                        let _ = carry(&mut kept.router, &kept.lobby, outputs, None).await;
                    }
                    // What cannot be published now: the router answers
                    // what it can here.
                    Some(msg) = outgoing.recv() => {
                        let outputs = kept.router.handle(Input::Undeliverable(msg), Instant::now());
                        let _ = carry(&mut kept.router, &kept.lobby, outputs, None).await;
                    }
                }
            }
        }
    });
    Ok(state)
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
