//! The tictactoe game server: `serve(listener, config, shutdown)` runs it on a
//! bound listener until `shutdown` completes; the `ttt-server` binary and the
//! tests both call it.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod cluster;
pub mod cmd;
pub mod config;
pub mod core;
pub(crate) mod house;
pub mod lobby;
pub(crate) mod metrics;
pub mod net;
pub mod ratings;
pub mod room;
pub mod session;
pub mod store;
pub mod tournament;

pub use crate::core::stats::Stats;
pub use config::{Config, runtime};

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};

use tictactoe_protocol::{PROTOCOL_VERSION, ServerMessage};

use net::tls;
use session::admission;
use session::registrations;
use store::record;

/// A server with its configuration and live counters, before it runs.
pub struct Server {
    config: Config,
    stats: Arc<Stats>,
}

impl Server {
    /// A server that will run with `config`.
    pub fn new(config: Config) -> Self {
        Server { config, stats: Arc::new(Stats::default()) }
    }

    /// The live counters (connections, rooms, games), readable while it runs.
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// Opens again the games saved when it last stopped, accepts connections
    /// on `listener` until `shutdown` completes, then saves every game in
    /// progress and closes every connection with 1012 (without a database:
    /// ends every game with `shutdown` and closes with 1001), and returns once
    /// every task has finished and the store has written what it was given.
    pub async fn serve(self, listener: TcpListener, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let config = self.config;
        config.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => Some(tls::acceptor(cert, key)?),
            (None, None) => None,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "--tls-cert and --tls-key go together",
                ));
            }
        };
        metrics::init();
        let instance: Arc<str> =
            config.instance.clone().map_or_else(|| record::new_instance_name(&mut rand::rng()), Into::into);
        let cluster = config.redis.clone();
        let store::Opened { store, thread: store_thread, restored, leases } = store::Store::open(
            &config.database,
            config.database_max_pages,
            &config.spill_dir,
            &instance,
            cluster.is_some(),
        )
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let records = store.enabled();
        let stop = crate::core::signal::Shutdown::default();
        let tracker = TaskTracker::new();
        let (lobby_tx, lobby_rx) = mpsc::channel(config::LOBBY_INBOX);
        // In a cluster, rooms act only while this instance's lease runs.
        let fence = cluster.is_some().then(|| Arc::new(store::fence::Fence::new(std::time::Instant::now())));
        let ctx = room::task::RoomContext {
            fence: fence.clone(),
            lobby: lobby_tx.clone(),
            shutdown: stop.clone(),
            stats: self.stats.clone(),
            store: store.clone(),
            house_think: config.house_think(),
            searches: config.house_searches(),
        };
        let settings = config.room_settings(records);
        let standings = restored.standings.into_iter().map(|(a, r, s)| ((a, r), s)).collect();
        let rooms = restore(restored.games, &standings, &settings);
        let lifetime = config.challenge_expiry();
        let (adopted_tx, adopted_rx) = mpsc::channel(4);
        let adopter =
            cluster::adopt::Adopter { lobby: adopted_tx, store: store.clone(), settings: settings.clone() };
        let (here_tx, here_rx) = mpsc::channel(2);
        let (elsewhere_tx, elsewhere_rx) = mpsc::channel(2);
        let (to_bus, from_lobby) = mpsc::unbounded_channel();
        let links = cluster.is_some().then_some(lobby::task::ClusterLinks {
            looks: adopted_rx,
            here: here_tx,
            elsewhere: elsewhere_rx,
            bus: to_bus,
            me: instance.clone(),
        });
        let (outbox, outgoing) = mpsc::channel(cluster::relay::TO_INSTANCES);
        let router =
            cluster::route::Router::new(instance.clone(), lobby_tx.clone(), outbox, config.outbound_queue)
                .lookups_per_second(config.lookups_per_second_per_ip);
        let lobby = lobby_tx.clone();
        let (free_tx, tournament_free) = tokio::sync::watch::channel(Vec::new());
        let relay =
            cluster::bus::Relay { router, from_lobby, lobby, outgoing, run: rand::random(), tournament_free };
        tracker.spawn(lobby::task::run(lobby_rx, links, settings, rooms, lifetime, ctx, tracker.clone()));
        // In a cluster: the leases' thread (beats and adoptions), and the bus.
        let (bus, leases) = match (&cluster, leases, fence) {
            (Some(url), Some(leases), Some(fence)) => {
                let (wake, thread) = cluster::adopt::start(leases, adopter, url.clone(), fence)?;
                let look = std::sync::Mutex::new(wake.clone());
                let presence = cluster::bus::WhoLists {
                    instance: instance.to_string(),
                    here: here_rx,
                    elsewhere: elsewhere_tx,
                };
                let bus = cluster::bus::start(url, presence, relay, stop.clone(), &tracker, move |_| {
                    let _ = look.lock().map(|w| w.send(cluster::adopt::Wake::Look));
                })
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                (Some(bus), Some((wake, thread)))
            }
            // Alone: nothing to adopt (and no handle on the store kept for it).
            _ => {
                drop((adopter, relay));
                (None, None)
            }
        };
        // In a cluster the leader pairs tournament players, unless the bus is down.
        let tournament_ctx = tournament::Ctx {
            store: store.clone(),
            lobby: lobby_tx.clone(),
            shutdown: stop.clone(),
            cluster: bus.clone().map(|bus| (free_tx, bus)),
        };
        let tournaments = tournament::spawn(tournament_ctx, &tracker);
        tracker.spawn(metrics_upkeep(stop.clone()));
        if store.enabled() {
            let stats = store.stats().clone();
            let stopping = stop.clone();
            tracker.spawn(async move { stats.priority.watch(&stats, stopping.started()).await });
        }

        let welcome = ServerMessage::Welcome {
            protocol: PROTOCOL_VERSION,
            server: format!("ttt-server/{}", env!("CARGO_PKG_VERSION")),
            limits: config.limits(),
        };
        let config_registrations = (config.registration_burst, config.registrations_per_minute);
        let admission = admission::Admission::new(
            config.max_connections,
            config.max_http_connections,
            config.max_connections_per_ip,
        );
        tracker.spawn(refusal_summaries(admission.clone(), stop.clone()));
        let limits = Arc::new(session::Limits {
            sizes: config.min_size..=config.max_size,
            rate: config.max_messages_per_second,
        });
        let shared = Arc::new(session::Shared {
            limits,
            ws_config: config.ws_config(),
            welcome: cmd::encode(&welcome),
            config,
            lobby: lobby_tx,
            tournaments,
            stats: self.stats.clone(),
            shutdown: stop.clone(),
            next_id: AtomicU64::new(1),
            tls,
            store,
            instance,
            handed_over: bus.as_ref().map(|_| tokio_util::sync::CancellationToken::new()),
            bus,
            admission: admission.clone(),
            registrations: registrations::Registrations::new(config_registrations.0, config_registrations.1),
        });
        let scheme = if shared.tls.is_some() { "wss" } else { "ws" };
        info!(addr = %listener.local_addr()?, scheme, "listening");
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        backoff(&e).await;
                        continue;
                    }
                },
            };
            match admission.accept(peer.ip()) {
                Ok(place) => net::accept::spawn(stream, peer, shared.clone(), place, &tracker),
                Err(why) => refuse(&stream, why),
            }
        }
        info!("shutting down");
        drop(listener);
        if let Some((wake, _)) = &leases {
            let _ = wake.send(cluster::adopt::Wake::Stop);
        }
        stop.trigger();
        let handover = match (leases, &shared.handed_over) {
            (Some((wake, thread)), Some(done)) => Some(tokio::spawn(hand_over(
                shared.clone(),
                cluster::adopt::Leaving { wake, thread },
                done.clone(),
            ))),
            _ => None,
        };
        tracker.close();
        tracker.wait().await;
        if let Some(handover) = handover {
            // Bounded: a stop never hangs on the database or Redis.
            let _ = tokio::time::timeout(config::HANDOVER * 2, handover).await;
        }
        drop(shared);
        // Every handle on the store is gone with the tasks: what is queued
        // gets written (or spilled) before the server says it stopped.
        let written = tokio::task::spawn_blocking(move || store_thread.join())
            .await
            .unwrap_or_else(|e| Err(format!("the store's last writes did not finish: {e}")));

        info!("stopped");
        written.map_err(io::Error::other)
    }
}

/// A stopping instance of a cluster lets its games go: once its rooms have
/// saved them (or the shutdown grace is over), what is queued is written,
/// the leases' thread lets them go (another instance adopts them at once),
/// and `done` lets the connections close with 1012.
async fn hand_over(
    shared: Arc<session::Shared>,
    leaving: cluster::adopt::Leaving,
    done: tokio_util::sync::CancellationToken,
) {
    let deadline = tokio::time::Instant::now() + shared.config.shutdown_grace();
    while shared.stats.rooms() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let written = shared.store.flush().await;
    drop(shared);
    if !written {
        // Let go now, the games would be adopted without what is not
        // written; held until the lease runs out, the writer keeps trying.
        tracing::error!(
            "this instance's games cannot all be saved: they are adopted when its lease runs out"
        );
    }
    let _ = tokio::task::spawn_blocking(move || leaving.leave(written)).await;
    done.cancel();
}

/// The rooms of the games saved when the server last stopped, each as of
/// its last saved move.
pub(crate) fn restore(
    games: Vec<store::LiveGame>,
    standings: &std::collections::HashMap<
        (crate::core::account::AccountId, tictactoe_protocol::Rules),
        ratings::Standing,
    >,
    settings: &room::Settings,
) -> Vec<room::Room> {
    if games.is_empty() {
        return Vec::new();
    }
    let started = std::time::Instant::now();
    let wall = record::unix_ms(std::time::SystemTime::now());
    let saved = games.len();
    let rooms: Vec<_> = games
        .into_iter()
        .filter_map(|mut game| {
            // Its players show the ratings they had in its pool.
            for who in &mut game.players {
                let Some(account) = who.account else { continue };
                if let Some(standing) = standings.get(&(account, game.rules)) {
                    *who = Arc::new(who.rated(game.rules, standing.shown()));
                }
            }
            let age = std::time::Duration::from_millis(u64::try_from(wall - game.started_at_ms).unwrap_or(0));
            let code = game.room.clone();
            room::Room::restore(
                game,
                settings.clone(),
                <rand::rngs::StdRng as rand::SeedableRng>::from_os_rng(),
                age,
                started,
            )
            .map_err(|e| warn!(room = %code, "a saved game cannot be played on: {e:?}"))
            .ok()
        })
        .collect();
    info!(
        games = rooms.len(),
        of = saved,
        took_ms = started.elapsed().as_millis() as u64,
        "games in progress restored"
    );
    rooms
}

/// Folds the metrics' histogram samples into their summaries every few
/// seconds: without it they pile up in memory until the next scrape. The
/// fold (a sample per durable move) runs off the runtime's thread, so that
/// no connection waits for it.
async fn metrics_upkeep(stop: crate::core::signal::Shutdown) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = stop.started() => return,
            _ = every.tick() => {
                let _ = tokio::task::spawn_blocking(metrics::upkeep).await;
            }
        }
    }
}

/// Runs a server with `config` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    Server::new(config).serve(listener, shutdown).await
}

/// An accept error never ends the loop; running out of file descriptors is
/// said plainly, since it is a limit the operator can raise.
async fn backoff(e: &io::Error) {
    if e.raw_os_error() == Some(24) || e.raw_os_error() == Some(23) {
        error!(
            "accept failed: the process's open-file limit is reached (raise `ulimit -n` or lower --max-connections)"
        );
    } else {
        warn!("accept failed: {e}");
    }
    tokio::time::sleep(config::ACCEPT_BACKOFF).await;
}

/// Over a cap: answer HTTP 503 without spawning a task, and close. Counted,
/// and logged only in the once-a-second summary.
fn refuse(stream: &TcpStream, why: admission::TurnedAway) {
    const FULL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 21\r\nConnection: close\r\n\r\nserver is full, retry";
    const PER_IP: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 38\r\nConnection: close\r\n\r\ntoo many connections from your address";
    let _ = stream.try_write(if why == admission::TurnedAway::PerIp { PER_IP } else { FULL });
}

/// Logs the refused connections at most once a second, as one line.
async fn refusal_summaries(admission: Arc<admission::Admission>, stop: crate::core::signal::Shutdown) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(1));
    // A late tick must not be caught up at once: two lines a moment apart
    // would break the once a second.
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.started() => return admission.summarize(),
            _ = every.tick() => admission.summarize(),
        }
    }
}
