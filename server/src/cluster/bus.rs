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
use std::time::Duration;

use futures::StreamExt;
use redis::AsyncConnectionConfig;
use redis::aio::MultiplexedConnection;
use tictactoe_protocol::OnlinePlayer;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use crate::signal::Shutdown;

/// How often the bus is checked (and, while down, tried again).
const PING: Duration = Duration::from_secs(1);

/// Longest a connection attempt or a command waits for Redis.
const ANSWER: Duration = Duration::from_secs(1);

/// The channel an instance's stop is announced on: its name.
pub const RELEASED: &str = "ttt:released";

/// The set of the instances that said who is online on them.
const WHO: &str = "ttt:who";

/// How long an instance's list of who is online on it lasts unless rewritten.
const WHO_LASTS: Duration = Duration::from_secs(3);

/// Who is online, between the lobby and the bus.
pub struct Presence {
    /// This instance's name.
    pub instance: String,
    /// Who is online here, every second, from the lobby.
    pub here: mpsc::Receiver<Vec<OnlinePlayer>>,
    /// Who is online on the other instances, to the lobby.
    pub elsewhere: mpsc::Sender<Vec<OnlinePlayer>>,
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

/// Starts the bus's task on `url`: it keeps `state` true while Redis
/// answers, and calls `released` with each stopped instance's name.
pub fn start(
    url: &str,
    mut presence: Presence,
    stop: Shutdown,
    tracker: &TaskTracker,
    released: impl Fn(&str) + Send + Sync + 'static,
) -> Result<Arc<BusState>, String> {
    let client = redis::Client::open(url).map_err(|_| "--redis is not a Redis URL".to_owned())?;
    let state = Arc::new(BusState::default());
    let shared = state.clone();
    ::metrics::gauge!("ttt_bus_up").set(0.0);
    tracker.spawn(async move {
        loop {
            let ended = tokio::select! {
                _ = stop.started() => return,
                ended = session(&client, &shared, &mut presence, &released) => ended,
            };
            shared.set(false);
            // Without the bus, `who` lists this instance's players only.
            let _ = presence.elsewhere.try_send(Vec::new());
            tracing::debug!("the bus's connection ended: {ended}");
            tokio::select! {
                _ = stop.started() => return,
                _ = tokio::time::sleep(PING) => {}
            }
        }
    });
    Ok(state)
}

/// One connection's life: subscribed, checked every [`PING`], until it
/// fails (returns why).
async fn session(
    client: &redis::Client,
    state: &BusState,
    presence: &mut Presence,
    released: &(impl Fn(&str) + Sync),
) -> String {
    let config = AsyncConnectionConfig::new().set_connection_timeout(ANSWER).set_response_timeout(ANSWER);
    let mut conn = match client.get_multiplexed_async_connection_with_config(&config).await {
        Ok(c) => c,
        Err(e) => return e.to_string(),
    };
    let mut pubsub = match tokio::time::timeout(ANSWER, client.get_async_pubsub()).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => return e.to_string(),
        Err(_) => return "no answer".into(),
    };
    match tokio::time::timeout(ANSWER, pubsub.subscribe(RELEASED)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return e.to_string(),
        Err(_) => return "no answer".into(),
    }
    let mut messages = pubsub.on_message();
    let mut every = tokio::time::interval(PING);
    loop {
        tokio::select! {
            _ = every.tick() => {
                let pong: redis::RedisResult<String> = redis::cmd("PING").query_async(&mut conn).await;
                match pong {
                    Ok(_) => state.set(true),
                    Err(e) => return e.to_string(),
                }
            }
            Some(here) = presence.here.recv() => {
                match tell_who(&mut conn, &presence.instance, &here).await {
                    Ok(elsewhere) => {
                        let _ = presence.elsewhere.try_send(elsewhere);
                    }
                    Err(e) => return e.to_string(),
                }
            }
            msg = messages.next() => match msg {
                Some(msg) => {
                    if let Ok(name) = msg.get_payload::<String>() {
                        released(&name);
                    }
                }
                None => return "the subscription ended".into(),
            },
        }
    }
}

/// Says who is online on `instance` (`here`), and reads who is on the
/// others: their lists, in one.
async fn tell_who(
    conn: &mut MultiplexedConnection,
    instance: &str,
    here: &[OnlinePlayer],
) -> redis::RedisResult<Vec<OnlinePlayer>> {
    let list = serde_json::to_string(here).unwrap_or_else(|_| "[]".into());
    let lasts = WHO_LASTS.as_millis() as u64;
    let (_, _, names): ((), (), Vec<String>) = redis::pipe()
        .cmd("SET")
        .arg(format!("{WHO}:{instance}"))
        .arg(list)
        .arg("PX")
        .arg(lasts)
        .cmd("SADD")
        .arg(WHO)
        .arg(instance)
        .cmd("SMEMBERS")
        .arg(WHO)
        .query_async(conn)
        .await?;
    let others: Vec<&String> = names.iter().filter(|n| n.as_str() != instance).collect();
    if others.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = others.iter().map(|n| format!("{WHO}:{n}")).collect();
    let lists: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query_async(conn).await?;
    let mut elsewhere = Vec::new();
    for (name, list) in others.iter().zip(lists) {
        match list {
            Some(list) => {
                elsewhere.extend(serde_json::from_str::<Vec<OnlinePlayer>>(&list).unwrap_or_default())
            }
            // Gone (its instance stopped saying): out of the set too.
            None => {
                let _: i64 = redis::cmd("SREM").arg(WHO).arg(name.as_str()).query_async(conn).await?;
            }
        }
    }
    Ok(elsewhere)
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
