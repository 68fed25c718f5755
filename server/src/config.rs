//! Every limit and tuning knob of the server, each a flag with a default.

use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The server's configuration; `Config::default()` gives the documented defaults.
#[derive(Debug, Clone, Parser)]
#[command(name = "ttt-server", version, about = "The tictactoe game server")]
pub struct Config {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:7878", env = "TTT_BIND")]
    pub bind: SocketAddr,
    /// Smallest board size a game may use.
    #[arg(long, default_value_t = 2)]
    pub min_size: usize,
    /// Largest board size a game may use.
    #[arg(long, default_value_t = 100)]
    pub max_size: usize,
    /// Time the player to move has, in ms; 0 turns the timer off.
    #[arg(long, default_value_t = 30_000)]
    pub turn_timeout_ms: u64,
    /// How long a dropped player keeps the seat, in ms.
    #[arg(long, default_value_t = 30_000)]
    pub reconnect_grace_ms: u64,
    /// Most WebSocket players connected at once; beyond, an upgrade gets HTTP 503.
    #[arg(long, default_value_t = 10_000)]
    pub max_connections: usize,
    /// Most plain HTTP clients (the API, the page, /metrics) kept alive at
    /// once, apart from the players; beyond, a request is answered and its
    /// connection closed.
    #[arg(long, default_value_t = 256)]
    pub max_http_connections: usize,
    /// Most connections open at once from one address (loopback included);
    /// beyond, new ones get HTTP 503.
    #[arg(long, default_value_t = 1000)]
    pub max_connections_per_ip: usize,
    /// Largest inbound message or frame in bytes; bigger closes with 1009.
    #[arg(long, default_value_t = 4096)]
    pub max_message_bytes: usize,
    /// Inbound frames per second per connection (and the burst); 0 = no limit.
    #[arg(long, default_value_t = 50)]
    pub max_messages_per_second: u32,
    /// Time a new TCP connection has to finish the WebSocket handshake, in ms.
    #[arg(long, default_value_t = 5_000)]
    pub handshake_timeout_ms: u64,
    /// Interval of WebSocket pings; a client silent for two intervals is dropped.
    #[arg(long, default_value_t = 15_000)]
    pub ping_interval_ms: u64,
    /// Frames that may wait for one connection's socket; a client further behind is dropped.
    #[arg(long, default_value_t = 256)]
    pub outbound_queue: usize,
    /// WebSocket read buffer per connection, in bytes (allocated once per
    /// connection); a message longer than this takes several reads.
    #[arg(long, default_value_t = 256)]
    pub read_buffer_bytes: usize,
    /// Most bytes buffered for writing on one connection before writes fail.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_write_buffer_bytes: usize,
    /// Time the server waits at shutdown for final messages to reach clients, in ms.
    #[arg(long, default_value_t = 2_000)]
    pub shutdown_grace_ms: u64,
    /// Runtime worker threads; 0 = one per core this process may run on. With
    /// one, the server runs on tokio's single-threaded scheduler (no work stealing).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// PEM certificate chain: serve `wss://` (TLS, by rustls) instead of `ws://`.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Where accounts, game records and ratings are kept: `sqlite:PATH`
    /// (created if missing) or `none` (nothing kept, no accounts).
    #[arg(long, default_value = "sqlite:ttt.db", env = "TTT_DATABASE")]
    pub database: crate::store::Database,
    /// Caps the database file at this many pages, as a full disk would
    /// (for tests of what a full disk does).
    #[arg(long, hide = true)]
    pub database_max_pages: Option<u64>,
    /// Where a stop whose database cannot be written leaves what it could not
    /// write (`ttt-unsaved-*.jsonl`); the next start imports what it finds here.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub spill_dir: PathBuf,
    /// This instance's name in `/healthz`, logs and metrics (default:
    /// random): letters, digits, `.`, `_` and `-`, up to 40.
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// Joins the cluster of every instance on this Redis and the same
    /// Postgres database (`redis://HOST:PORT` or
    /// `redis+unix:///path/to/socket`): the games of an instance that stops
    /// or dies go on on another.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// Accounts one address may register in a burst; after it, one more
    /// every `60000 / --registrations-per-minute` ms.
    #[arg(long, default_value_t = 20)]
    pub registration_burst: u32,
    /// Accounts one address may register per minute after its burst; 0 = no limit.
    #[arg(long, default_value_t = 60)]
    pub registrations_per_minute: u32,
    /// In a cluster, rooms on other instances one address may look up per
    /// second (`join_room`, `spectate`, `resume`), after a burst of twice
    /// as many; 0 = no limit (a load generator on one address).
    #[arg(long, default_value_t = crate::cluster::route::budget::LOOKUPS_PER_SECOND)]
    pub lookups_per_second_per_ip: u32,
    /// Time the house bot has for one move, in ms, from when it is asked
    /// for: waiting for a search's turn included, so it moves within this
    /// however busy it is (at most 900, leaving the rest of the second for
    /// the network).
    #[arg(long, default_value_t = 500)]
    pub house_think_ms: u64,
    /// House searches at once, server-wide (players take turns at them:
    /// the least search time had goes first); 0 = all cores but one (at least 1).
    #[arg(long, default_value_t = 0)]
    pub house_searches: usize,
    /// How long a challenge stays open unanswered, in ms (1 to 300000).
    #[arg(long, default_value_t = 30_000)]
    pub challenge_expiry_ms: u64,
    /// PEM private key for `--tls-cert`.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config::parse_from(["ttt-server"])
    }
}

impl Config {
    /// The turn timer, or `None` when it is off.
    pub fn turn_timeout(&self) -> Option<Duration> {
        (self.turn_timeout_ms > 0).then(|| Duration::from_millis(self.turn_timeout_ms))
    }

    /// The `limits` object that `welcome` announces.
    pub fn limits(&self) -> tictactoe_protocol::Limits {
        tictactoe_protocol::Limits {
            min_size: self.min_size,
            max_size: self.max_size,
            turn_timeout_ms: self.turn_timeout_ms,
            reconnect_grace_ms: self.reconnect_grace_ms,
            max_message_bytes: self.max_message_bytes,
            max_messages_per_second: self.max_messages_per_second,
            ping_interval_ms: self.ping_interval_ms,
            handshake_timeout_ms: self.handshake_timeout_ms,
        }
    }
}

impl Config {
    /// Checks the settings that no server could run with, naming the flags
    /// at fault: a size range that is empty or beyond the engine's, and
    /// limits of zero where zero would stop every game or connection.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(name) = &self.instance {
            let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
            // Postgres keeps 63 bytes of a session's name ("ttt-server NAME").
            if name.is_empty() || name.len() > 40 || !name.chars().all(fits) {
                return Err(format!(
                    "--instance {name:?}: a name is 1 to 40 letters, digits, '.', '_' or '-'"
                ));
            }
        }
        if let Some(url) = &self.redis {
            crate::cluster::bus::check_url(url)?;
            if !matches!(self.database, crate::store::Database::Postgres(_)) {
                return Err(format!(
                    "--redis needs --database postgres://…: the instances of a cluster share one \
                     Postgres database (this one is {}), where each finds the others' games to adopt",
                    self.database
                ));
            }
        }
        let max = tictactoe_protocol::Game::MAX_SIZE;
        if self.min_size == 0 || self.max_size > max {
            return Err(format!(
                "board sizes run from 1 to {max}: --min-size {} --max-size {}",
                self.min_size, self.max_size
            ));
        }
        if self.min_size > self.max_size {
            return Err(format!(
                "--min-size {} is larger than --max-size {}: no game could be played",
                self.min_size, self.max_size
            ));
        }
        let positive = [
            ("--max-connections", self.max_connections as u64),
            ("--max-http-connections", self.max_http_connections as u64),
            ("--max-connections-per-ip", self.max_connections_per_ip as u64),
            ("--handshake-timeout-ms", self.handshake_timeout_ms),
            ("--ping-interval-ms", self.ping_interval_ms),
            ("--outbound-queue", self.outbound_queue as u64),
        ];
        if let Some((flag, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{flag} must be at least 1"));
        }
        // The contract: the house moves within one second, the way to the player included.
        if self.house_think_ms > MAX_HOUSE_THINK_MS {
            return Err(format!(
                "--house-think-ms {} is over {MAX_HOUSE_THINK_MS}: the house moves within a second",
                self.house_think_ms
            ));
        }
        // An open challenge holds a slot of its challenger's and of the
        // challenged player's: it must end, and soon (the contract: 30 s).
        if !(1..=MAX_CHALLENGE_EXPIRY_MS).contains(&self.challenge_expiry_ms) {
            return Err(format!(
                "--challenge-expiry-ms {} is out of range: from 1 to {MAX_CHALLENGE_EXPIRY_MS} (5 minutes)",
                self.challenge_expiry_ms
            ));
        }
        // The longest request a client may need to send: a hello with a full name, a resume with a token.
        if self.max_message_bytes < 256 {
            return Err(format!(
                "--max-message-bytes {} is too small for a request; use 256 or more",
                self.max_message_bytes
            ));
        }
        Ok(())
    }

    /// Time allowed for the WebSocket handshake.
    pub fn handshake_timeout(&self) -> Duration {
        Duration::from_millis(self.handshake_timeout_ms)
    }

    /// Interval between server pings (at least 1 ms).
    pub fn ping_interval(&self) -> Duration {
        Duration::from_millis(self.ping_interval_ms.max(1))
    }

    /// How long after it is asked for the house's move is due.
    pub fn house_think(&self) -> Duration {
        Duration::from_millis(self.house_think_ms)
    }

    /// The pool the house's searches run on (`--house-searches`).
    pub fn house_searches(&self) -> crate::house::Searches {
        match self.house_searches {
            0 => crate::house::Searches::per_core(),
            n => crate::house::Searches::new(n),
        }
    }

    /// How long a challenge stays open unanswered.
    pub fn challenge_expiry(&self) -> Duration {
        Duration::from_millis(self.challenge_expiry_ms)
    }

    /// How long shutdown waits for final messages.
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_millis(self.shutdown_grace_ms)
    }

    /// The room timers; `records` when games are recorded and rated.
    pub fn room_settings(&self, records: bool) -> crate::room::Settings {
        crate::room::Settings {
            turn_timeout: self.turn_timeout(),
            grace: Duration::from_millis(self.reconnect_grace_ms),
            records,
            wall: crate::room::WallClock::now(),
        }
    }

    /// The WebSocket limits: small read buffer, capped frames and write buffer.
    pub fn ws_config(&self) -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
        tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .read_buffer_size(self.read_buffer_bytes)
            .write_buffer_size(WRITE_BUFFER_BYTES)
            .max_write_buffer_size(self.max_write_buffer_bytes)
            .max_message_size(Some(self.max_message_bytes))
            .max_frame_size(Some(self.max_message_bytes))
    }
}

/// The longest `--challenge-expiry-ms`: an unanswered challenge holds its
/// slots this long at most.
pub const MAX_CHALLENGE_EXPIRY_MS: u64 = 300_000;

/// The longest `--house-think-ms`: the house moves within a second of being
/// asked, and 100 ms of it are left for the way to the player.
pub const MAX_HOUSE_THINK_MS: u64 = 900;

/// Longest display name, in characters (kept with the other name rules).
pub use crate::core::text::MAX_NAME_CHARS;

/// Inbox capacity of a room; its senders are rate-limited connections, which
/// wait for space.
pub const ROOM_INBOX: usize = 64;

/// Inbox capacity of the lobby.
pub const LOBBY_INBOX: usize = 1024;

/// Most outbound items a connection writes before one flush.
pub const WRITE_BATCH: usize = 64;

/// Longest a stopping instance of a cluster keeps its connections open
/// while it lets its games go (saves them, for another to adopt) before it
/// closes them with 1012 anyway.
pub const HANDOVER: Duration = Duration::from_secs(5);

/// How long closing a connection may take (close frame out, peer's bytes drained).
pub const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// The pause after a failed `accept` before the next one.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Bytes of outgoing frames gathered before a write to the socket; a flush
/// writes whatever is gathered, so a batch of frames costs one syscall.
pub const WRITE_BUFFER_BYTES: usize = 16 * 1024;

/// Tasks the scheduler runs between two polls of the I/O driver while tasks
/// stay ready (tokio's default is 61). Under full load a larger batch means
/// fewer `epoll_wait` calls, each bringing more events. When the server is not
/// saturated the run queue empties first and the driver is polled at once.
pub const EVENT_INTERVAL: u32 = 256;

/// Builds the tokio runtime for `threads` workers (0 = one per core this
/// process may run on): the single-threaded scheduler for one, since with one
/// core there is nobody to steal work from, the multi-threaded one otherwise.
pub fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    builder.event_interval(EVENT_INTERVAL).enable_all().build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_names_and_redis_urls_are_checked() {
        let named = |name: &str| Config { instance: Some(name.into()), ..Config::default() }.validate();
        assert_eq!(named("eu-1.b_2"), Ok(()));
        assert_eq!(named(&"a".repeat(40)), Ok(()));
        for bad in ["", "a b", "é", "x'; DROP", &"a".repeat(41)] {
            assert!(named(bad).expect_err(bad).contains("--instance"), "{bad}");
        }
        let pg = crate::store::Database::Postgres("postgres://ttt@/ttt".into());
        let redis = |url: &str, database| {
            Config { redis: Some(url.into()), database, ..Config::default() }.validate()
        };
        assert_eq!(redis("redis+unix:///run/r.sock", pg.clone()), Ok(()));
        assert!(redis("http://x", pg).expect_err("not redis").contains("not a Redis URL"));
        let alone = redis("redis://127.0.0.1:6379", crate::store::Database::None).expect_err("no postgres");
        assert!(alone.contains("--redis needs --database postgres"), "{alone}");
    }

    #[test]
    fn the_house_may_think_up_to_900_ms_and_the_flag_is_named_beyond() {
        let at = |ms| Config { house_think_ms: ms, ..Config::default() }.validate();
        assert_eq!(at(MAX_HOUSE_THINK_MS), Ok(()));
        let refused = at(MAX_HOUSE_THINK_MS + 1).expect_err("over the second");
        assert!(refused.contains("--house-think-ms 901"), "{refused}");
        let parsed = Config::parse_from(["ttt-server", "--house-searches", "3", "--house-think-ms", "200"]);
        assert_eq!((parsed.house_searches, parsed.house_think()), (3, Duration::from_millis(200)));
        assert_eq!(Config::default().house_searches, 0, "all cores but one unless told");
    }
}
