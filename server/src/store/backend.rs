//! The seam between the store and a database: what a backend (SQLite now,
//! Postgres next) must do. The writer's batching (`writer`) and the API's
//! reads (`reads`) know only these traits; SQL and a driver's types stay in
//! the backend's own module.

use std::sync::Arc;

use tictactoe_protocol::api::{self, Leaderboard, PlayerGames, PlayerProfile};

use crate::core::account::{AccountId, TokenHash};
use crate::ratings::Standing;
use crate::store::live::{Fold, RoomChange};
use crate::store::record::GameRecord;
use crate::store::tournaments::TournamentData;
use crate::store::tournaments::TournamentWrite;
use crate::store::{Account, Restored, StoreError};
use tictactoe_protocol::Rules;
use tictactoe_protocol::tournament::TournamentSummary;

/// A database's own words for what failed: for the log, never for a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(pub String);

/// The SQLSTATE the database refuses a write with when another instance
/// holds the game it touches.
pub const REFUSED: &str = "TT001";

impl BackendError {
    /// Whether the database refused the write because another instance
    /// holds a game it touches (and not because it failed).
    pub fn is_refusal(&self) -> bool {
        self.0.starts_with(REFUSED)
    }
}

/// An account to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAccount {
    /// As asked for; refused when the name, or one that looks like it, is taken.
    pub name: String,
    /// Registered by a bot, which the API shows.
    pub bot: bool,
    /// Only the token's hash is kept: a copy of the database signs nobody in.
    pub token: TokenHash,
}

/// Everything one commit writes, in one transaction: finished games (with
/// the ratings they moved), new accounts, changes to tournaments and to
/// games in progress.
pub struct Commit<'a> {
    /// Finished games; one already kept (by id) is left as it is.
    pub records: &'a [GameRecord],
    /// New accounts, in order.
    pub accounts: &'a [NewAccount],
    /// Tournaments created, joined and left, in order.
    pub tournaments: &'a [TournamentWrite],
    live: &'a Fold,
}

impl<'a> Commit<'a> {
    pub(super) fn new(
        records: &'a [GameRecord],
        accounts: &'a [NewAccount],
        tournaments: &'a [TournamentWrite],
        live: &'a Fold,
    ) -> Commit<'a> {
        Commit { records, accounts, tournaments, live }
    }

    /// The changes to games in progress, in the order they apply.
    pub fn live(&self) -> Vec<RoomChange<'a>> {
        self.live.changes()
    }

    /// How many things it writes (records, accounts, tournaments' and
    /// rooms' changes): a backlog written after an outage is a big commit,
    /// given longer.
    pub fn size(&self) -> usize {
        self.records.len() + self.accounts.len() + self.tournaments.len() + self.live.held()
    }
}

/// What a commit did besides writing its batch.
#[derive(Debug, Default)]
pub struct Committed {
    /// Each new account's row, or [`StoreError::NameTaken`], in order.
    pub accounts: Vec<Result<Account, StoreError>>,
    /// Standings the commit rated again from the database's own, because
    /// another writer had moved them since this one read them: the
    /// writer's book takes these.
    pub standings: Vec<(AccountId, Rules, Standing)>,
    /// The ratings of the records rated again, by game id: what the records
    /// keep, and so what their `game_over` shows.
    pub ratings: rustc_hash::FxHashMap<Arc<str>, Option<[crate::ratings::Rated; 2]>>,
    /// Records left out because another instance holds their game or
    /// recorded it (it adopted the game while this one was cut off): by id.
    pub refused: Vec<Arc<str>>,
}

/// The write side of a database, owned by the store's writer thread.
pub trait Backend: Send + 'static {
    /// What answers the API's reads, each on a connection of its own.
    type Reader: Reader;

    /// Writes `batch` in one transaction, durable when it returns `Ok`
    /// (but for the records it says it refused). A record this writer kept
    /// already (a commit whose answer was lost, tried again) is not written
    /// or rated twice. On `Err` nothing of it was kept.
    fn commit(&mut self, batch: &Commit<'_>) -> Result<Committed, BackendError>;

    /// Which of `rooms` another instance holds now (it adopted them): their
    /// changes are refused, and this writer gives them up. Alone on its
    /// database (SQLite) a writer holds every game it saves.
    fn not_held(&mut self, rooms: &[Arc<str>]) -> Result<Vec<Arc<str>>, BackendError> {
        let _ = rooms;
        Ok(Vec::new())
    }

    /// Checks that the database still takes a write (an idle server's
    /// `/healthz` must tell the truth too).
    fn probe(&mut self) -> Result<(), BackendError>;

    /// An account's stored standing in the pool of `rules`, if it has one
    /// (what the writer rates a game from, for an account it has not seen).
    fn standing(&mut self, account: AccountId, rules: Rules) -> Result<Option<Standing>, BackendError>;

    /// Puts spilled records back; games in progress they ended are not
    /// restored ([`Backend::load`] drops a saved game that has a record).
    /// Returns how many records were new.
    fn import(&mut self, games: &[GameRecord]) -> Result<usize, BackendError>;

    /// The games in progress when the server last stopped (not those that
    /// have a record: they ended), and their players' standings; rows that
    /// cannot be read back are set aside.
    fn load(&mut self) -> Result<Restored, BackendError>;

    /// A reader of its own, which never waits for this writer's transactions.
    fn reader(&self) -> Result<Self::Reader, BackendError>;
}

/// What a read finds: the thing, `None` when there is no such thing, or
/// the database's error.
pub type Fetched<T> = Result<Option<T>, BackendError>;

/// The read side of a database: the API's answers and sign-in's lookups.
pub trait Reader: Send + 'static {
    /// The account called `name` (ignoring case), else one whose name looks
    /// like it, with its token's hash.
    fn account(&mut self, name: &str) -> Fetched<(Account, TokenHash)>;

    /// The record of game `id`.
    fn game(&mut self, id: &str) -> Fetched<api::GameRecord>;

    /// The profile of the account called `name` (ignoring case).
    fn player(&mut self, name: &str) -> Fetched<PlayerProfile>;

    /// Up to `limit` of the games of the account called `name`, newest
    /// first, older than game `before`; an unknown `before` is an empty page.
    fn player_games(&mut self, name: &str, limit: usize, before: Option<&str>) -> Fetched<PlayerGames>;

    /// The best `limit` accounts of a pool.
    fn leaderboard(&mut self, rules: Rules, limit: usize) -> Result<Leaderboard, BackendError>;

    /// Tournament `id`: its row, its entrants in the order they joined, and
    /// its recorded games.
    fn tournament(&mut self, id: &str) -> Fetched<TournamentData>;

    /// The tournaments at `now_ms` not finished or finished within
    /// [`crate::store::tournaments::LISTED_AFTER_MS`], newest start first,
    /// at most [`crate::store::tournaments::LISTED`].
    fn tournaments(&mut self, now_ms: i64) -> Result<Vec<TournamentSummary>, BackendError>;
}
