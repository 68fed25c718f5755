//! What the server remembers — accounts, finished games, ratings, games in
//! progress — behind one small handle, so that another backend (Postgres, for
//! many instances) can take SQLite's place.
//!
//! Writes go on one queue, read by the writer's thread (`writer`): finished
//! games and every accepted move are put on it without waiting (never
//! blocking the move path) and committed in batches, one transaction per
//! batch, by a [`backend::Backend`]. Reads (the API, sign-in's lookups) go
//! on another queue, to reader threads (`reads`) with connections of their
//! own, so a read never waits behind a batch. A `game_over` is sent once its
//! record is committed, so a query sent after it sees that game; a record
//! that cannot be committed yet is shown from memory.
//!
//! The writer rates a record as it takes it, whatever the backend
//! (`rating`); a backend only reads and writes rows, and reads each kind
//! of row back with one decoder, by column name (`row`).

pub mod backend;
pub mod changes;
pub mod fence;
mod handle;
mod health;
mod live;
mod open;
mod postgres;
pub mod priority;
mod rating;
mod reads;
pub mod record;
mod row;
mod spelling;
mod spill;
mod sqlite;
#[cfg(test)]
pub(super) mod tests;
pub mod tournaments;
mod unwritten;
mod writer;

pub use crate::store::changes::{LiveGame, LiveWrite};
pub use crate::store::handle::Store;
pub use crate::store::health::{Health, STUCK, StoreStats};
pub use crate::store::open::{Opened, Restored, StoreThread, import};

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use tictactoe_protocol::api;
use tokio::sync::oneshot;

use crate::core::account::AccountId;
use crate::ratings::{Rated, Standing};
pub use crate::store::postgres::{Adopted, LEASE, Leases};
use tictactoe_protocol::Rules;

/// Where the server keeps its records: `--database sqlite:PATH`,
/// `postgres://…` or `none`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// Nothing is kept: no accounts, no records, no ratings.
    None,
    /// A SQLite file (created if missing).
    Sqlite(PathBuf),
    /// A Postgres database, by its URL (`postgres://` or `postgresql://`).
    Postgres(String),
}

impl FromStr for Database {
    type Err = String;

    fn from_str(s: &str) -> Result<Database, String> {
        match s.strip_prefix("sqlite:") {
            _ if s == "none" => Ok(Database::None),
            _ if s.starts_with("postgres://") || s.starts_with("postgresql://") => {
                postgres::config(s)?;
                Ok(Database::Postgres(s.to_owned()))
            }
            Some(path) if !path.is_empty() => Ok(Database::Sqlite(PathBuf::from(path))),
            _ => Err(format!(
                "{s:?} is not a database: use sqlite:PATH (e.g. sqlite:ttt.db), postgres://USER@HOST/DB or none"
            )),
        }
    }
}

impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::None => f.write_str("none"),
            Database::Sqlite(p) => write!(f, "sqlite:{}", p.display()),
            Database::Postgres(url) => f.write_str(&postgres::redacted(url)),
        }
    }
}

/// Most jobs waiting for the store; records and saved moves beyond it are
/// dropped (and counted) rather than held up on the move path.
pub const QUEUE: usize = 65_536;

/// Most finished games held in memory while writes fail (a full disk, say),
/// retried every second; beyond it the oldest are dropped, counted and logged.
pub const BACKLOG: usize = 100_000;

/// An account as sign-in finds it, with its standings in every pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    /// What records and standings name the account by.
    pub id: AccountId,
    /// As registered: sign-in finds it by its key, ignoring case.
    pub name: Arc<str>,
    /// Registered by a bot: shown as one wherever its name is.
    pub bot: bool,
    /// In the pools it has played: the writer rates its next game from these.
    pub standings: Vec<(Rules, Standing)>,
}

/// Why a store request failed. None carries a database's own words: they
/// go to the log, never to a player or an HTTP answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// An account already has the name (ignoring case), or one that looks like it.
    #[error("an account already has that name")]
    NameTaken,
    /// The server keeps no records.
    #[error("this server keeps no accounts or records")]
    Disabled,
    /// Too many requests are waiting for the store.
    #[error("the server is busy; try again in a moment")]
    Busy,
    /// The database cannot do it now (it cannot write, or it failed to read).
    #[error("the server cannot reach its database right now; try again in a moment")]
    Unavailable,
}

/// A read for the HTTP API; each answers a [`QueryAnswer`], or `None` for 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// `/api/games/{id}`.
    Game(String),
    /// `/api/players/{name}`.
    Player(String),
    /// `/api/players/{name}/games`: newest first, before the game `before`.
    PlayerGames {
        /// Whose games, ignoring case.
        name: String,
        /// The page's size.
        limit: usize,
        /// The cursor: the page's games are older than this game.
        before: Option<String>,
    },
    /// `/api/leaderboard`.
    Leaderboard {
        /// Which pool's board.
        rules: Rules,
        /// The board's length.
        limit: usize,
    },
    /// `/api/tournaments`: those listed at `now_ms`.
    Tournaments {
        /// Now (Unix ms): what is finished, and for how long.
        now_ms: i64,
    },
    /// `/api/tournaments/{id}`: its standings and games at `now_ms`.
    Tournament {
        /// The tournament's id.
        id: String,
        /// Now (Unix ms): its status.
        now_ms: i64,
    },
}

/// What an API query answers: the body of a 200, as the contract spells it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum QueryAnswer {
    /// `/api/games/{id}`.
    Game(Box<api::GameRecord>),
    /// `/api/players/{name}`.
    Player(api::PlayerProfile),
    /// `/api/players/{name}/games`.
    PlayerGames(api::PlayerGames),
    /// `/api/leaderboard`.
    Leaderboard(api::Leaderboard),
    /// `/api/tournaments`: `{"tournaments": [...]}`.
    Tournaments {
        /// Newest start first.
        tournaments: Vec<tictactoe_protocol::tournament::TournamentSummary>,
    },
    /// `/api/tournaments/{id}`.
    Tournament(Box<tictactoe_protocol::tournament::TournamentView>),
}

/// What became of a finished game's record, as its room hears it: what
/// `game_over` waits for, and the ratings it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Committed, with the ratings the record keeps (`None`: not rated).
    Written(Option<[Rated; 2]>),
    /// Not written yet: the store cannot write; the record waits in memory
    /// and is retried. The ratings as this instance's writer rated them.
    Waiting(Option<[Rated; 2]>),
    /// Refused: another instance adopted this game while this one was cut
    /// off or stalled, and holds or recorded it. Nothing of it may be said.
    Refused,
}

/// What a room waits for after it gave the store a finished game: the
/// [`Outcome`], once the commit holding the record is over (while the
/// store writes), or once it is rated (while it cannot). `answer` is `None`
/// when there is nothing to wait for (a game nobody rates, while the store
/// cannot write).
pub struct Recorded {
    /// Answered once the commit is over, or the record rated (see above).
    pub answer: Option<oneshot::Receiver<Outcome>>,
}
