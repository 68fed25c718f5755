//! The store's rows read back, by column name, one decoder each for both
//! backends: a game record, a standing, a pool, a leaderboard's entry, a
//! player's results. Each backend gives its driver's row through
//! [`StoredRow`]; its SQL names the columns as the decoder reads them
//! (a record's with [`record_columns!`]).

use skillratings::glicko2::Glicko2Rating;
use tictactoe_protocol::api::{self, GamePlayer, LeaderboardEntry, PoolStanding, RatingMove, Results};
use tictactoe_protocol::{Fischer, Rules};

use crate::ratings::Standing;
use crate::store::record::both_sides;
use crate::store::spelling::{parse_reason, rfc3339, rounded};
use crate::store::tournaments::{Entrant, TournamentRow, berserk_sides, own_moves};
use tictactoe_protocol::Player;
use tictactoe_protocol::tournament::{ScoredGame, Terms};

/// The columns of a stored record, from `games g`, each under the name
/// [`decode`] reads it by. A macro, so that a backend's SQL is one
/// `concat!`-ed literal (Postgres prepares `&'static str`s).
macro_rules! record_columns {
    () => {
        "g.id AS id, g.room AS room, g.size AS size, g.win AS win, \
         g.x_name AS x_name, g.x_account AS x_account, g.x_bot AS x_bot, \
         g.o_name AS o_name, g.o_account AS o_account, g.o_bot AS o_bot, \
         g.moves AS moves, g.winner AS winner, g.reason AS reason, g.line AS line, g.rated AS rated, \
         g.x_before AS x_before, g.x_after AS x_after, g.o_before AS o_before, g.o_after AS o_after, \
         g.started_at AS started_at, g.ended_at AS ended_at, g.clock AS clock, g.times AS times, \
         g.opening AS opening, g.host AS host, g.tournament AS tournament, g.berserk AS berserk"
    };
}
pub(super) use record_columns;

/// The columns of a record as a tournament's scoring reads it, from
/// `games g`, each under the name [`scored_game`] reads it by.
macro_rules! scored_columns {
    () => {
        "g.id AS id, g.x_name AS x_name, g.o_name AS o_name, g.winner AS winner, g.reason AS reason, \
         g.moves AS moves, g.berserk AS berserk, g.rated AS rated, g.x_before AS x_before, \
         g.o_before AS o_before, g.ended_at AS ended_at"
    };
}
pub(super) use scored_columns;

/// The columns of a tournament, from `tournaments t`, each under the name
/// [`tournament_row`] reads it by, with its entrants' count as `players`.
macro_rules! tournament_columns {
    () => {
        "t.id AS id, t.name AS name, t.created_by AS created_by, t.size AS size, t.win AS win, \
         t.initial_ms AS initial_ms, t.increment_ms AS increment_ms, t.duration_ms AS duration_ms, \
         t.starts_at AS starts_at, \
         (SELECT count(*) FROM tournament_players p WHERE p.tournament = t.id) AS players"
    };
}
pub(super) use tournament_columns;

/// A driver's row, read by column name in the types the schemas give the
/// columns (Postgres is strict: `int4` is an `i32`, `int8` an `i64`).
pub(super) trait StoredRow {
    /// The driver's error, or the backend's.
    type Error;

    /// An `int4` column.
    fn int4(&self, column: &str) -> Result<i32, Self::Error>;
    /// An `int8` column.
    fn int8(&self, column: &str) -> Result<i64, Self::Error>;
    /// An `int8` column that may be NULL.
    fn opt_int8(&self, column: &str) -> Result<Option<i64>, Self::Error>;
    /// A boolean column.
    fn flag(&self, column: &str) -> Result<bool, Self::Error>;
    /// A `float8` column.
    fn float(&self, column: &str) -> Result<f64, Self::Error>;
    /// A `float8` column that may be NULL.
    fn opt_float(&self, column: &str) -> Result<Option<f64>, Self::Error>;
    /// A text column.
    fn text(&self, column: &str) -> Result<String, Self::Error>;
    /// A text column that may be NULL.
    fn opt_text(&self, column: &str) -> Result<Option<String>, Self::Error>;
    /// The error for a stored value that cannot be what `column` holds: the row is broken.
    fn broken(&self, column: &str, what: &str) -> Self::Error;
}

/// The columns of one side of a game: X's or O's.
struct Side {
    name: &'static str,
    account: &'static str,
    bot: &'static str,
    before: &'static str,
    after: &'static str,
}

const SIDES: [Side; 2] = [
    Side { name: "x_name", account: "x_account", bot: "x_bot", before: "x_before", after: "x_after" },
    Side { name: "o_name", account: "o_account", bot: "o_bot", before: "o_before", after: "o_after" },
];

/// One game record from a row of [`record_columns!`].
pub(super) fn record<R: StoredRow>(r: &R) -> Result<api::GameRecord, R::Error> {
    let rated = r.flag("rated")?;
    let rating = |column: &str| -> Result<Option<i64>, R::Error> { Ok(r.opt_float(column)?.map(rounded)) };
    let player = |side: &Side| -> Result<GamePlayer, R::Error> {
        Ok(GamePlayer {
            account: r.opt_int8(side.account)?.is_some(),
            bot: r.flag(side.bot)?,
            name: r.text(side.name)?,
            rating: if rated { rating(side.before)? } else { None },
        })
    };
    let change = |side: &Side| -> Result<Option<RatingMove>, R::Error> {
        Ok(match (rating(side.before)?, rating(side.after)?) {
            (Some(before), Some(after)) => Some(RatingMove { after, before }),
            _ => None,
        })
    };
    let ratings = match (rated, change(&SIDES[0])?, change(&SIDES[1])?) {
        (true, Some(x), Some(o)) => Some([x, o]),
        _ => None,
    };
    let line = match r.opt_text("line")? {
        None => None,
        Some(text) => Some(serde_json::from_str(&text).map_err(|_| r.broken("line", "not a line"))?),
    };
    let clock: Option<Fischer> = match r.opt_text("clock")? {
        None => None,
        Some(text) => Some(serde_json::from_str(&text).map_err(|_| r.broken("clock", "not a clock"))?),
    };
    let times: Vec<u64> = match r.opt_text("times")? {
        None => Vec::new(),
        Some(text) => serde_json::from_str(&text).map_err(|_| r.broken("times", "not a list of times"))?,
    };
    Ok(api::GameRecord {
        berserk: berserk_sides(r.int4("berserk")?),
        tournament: r.opt_text("tournament")?,
        host: r.opt_text("host")?,
        opening: usize::try_from(r.int4("opening")?).unwrap_or(0),
        clocks: clock.map(|c| both_sides(c, &times)),
        clock,
        ended_at: rfc3339(r.int8("ended_at")?),
        id: r.text("id")?,
        line,
        moves: serde_json::from_str(&r.text("moves")?)
            .map_err(|_| r.broken("moves", "not a list of moves"))?,
        players: [player(&SIDES[0])?, player(&SIDES[1])?],
        rated,
        ratings,
        reason: parse_reason(&r.text("reason")?).ok_or_else(|| r.broken("reason", "not an end reason"))?,
        room: r.text("room")?,
        size: side_length(r, "size")?,
        started_at: rfc3339(r.int8("started_at")?),
        win: side_length(r, "win")?,
        winner: u8::try_from(r.int4("winner")?).map_err(|_| r.broken("winner", "not a winner"))?,
    })
}

/// A tournament's row from [`tournament_columns!`], and its entrants' count.
pub(super) fn tournament_row<R: StoredRow>(r: &R) -> Result<(TournamentRow, usize), R::Error> {
    let clock =
        tictactoe_protocol::Fischer::checked(Some(r.int8("initial_ms")?), Some(r.int8("increment_ms")?))
            .map_err(|_| r.broken("initial_ms", "not a clock"))?;
    let terms = Terms {
        name: r.text("name")?,
        size: side_length(r, "size")?,
        win: side_length(r, "win")?,
        clock,
        duration_ms: u64::try_from(r.int8("duration_ms")?)
            .map_err(|_| r.broken("duration_ms", "negative"))?,
    };
    let row = TournamentRow {
        id: r.text("id")?.into(),
        terms,
        created_by: r.text("created_by")?.into(),
        starts_at: r.int8("starts_at")?,
    };
    Ok((row, usize::try_from(count(r, "players")?).unwrap_or(usize::MAX)))
}

/// An entrant from a row's `account`, `name` and `paused`.
pub(super) fn entrant<R: StoredRow>(r: &R) -> Result<Entrant, R::Error> {
    Ok(Entrant { account: r.int8("account")?, name: r.text("name")?.into(), paused: r.flag("paused")? })
}

/// A tournament's game as its scoring reads it, from [`scored_columns!`].
pub(super) fn scored_game<R: StoredRow>(r: &R) -> Result<ScoredGame, R::Error> {
    let moves: Vec<[u16; 2]> =
        serde_json::from_str(&r.text("moves")?).map_err(|_| r.broken("moves", "not a list of moves"))?;
    let rated = r.flag("rated")?;
    let before = |column: &str| -> Result<Option<i64>, R::Error> {
        Ok(if rated { r.opt_float(column)?.map(rounded) } else { None })
    };
    let winner = u8::try_from(r.int4("winner")?).map_err(|_| r.broken("winner", "not a winner"))?;
    Ok(ScoredGame {
        id: r.text("id")?.into(),
        ended_at: r.int8("ended_at")?,
        players: [r.text("x_name")?, r.text("o_name")?],
        winner: Player::from_number(winner),
        reason: parse_reason(&r.text("reason")?).ok_or_else(|| r.broken("reason", "not an end reason"))?,
        moves: own_moves(moves.len()),
        berserk: berserk_sides(r.int4("berserk")?),
        ratings: [before("x_before")?, before("o_before")?],
    })
}

/// A board's side or win length.
fn side_length<R: StoredRow>(r: &R, column: &str) -> Result<usize, R::Error> {
    usize::try_from(r.int4(column)?).map_err(|_| r.broken(column, "a negative size"))
}

/// A count from SQL, which is never negative.
fn count<R: StoredRow>(r: &R, column: &str) -> Result<u64, R::Error> {
    Ok(u64::try_from(r.int8(column)?).unwrap_or(0))
}

/// The pool of a row's `size` and `win`.
pub(super) fn pool<R: StoredRow>(r: &R) -> Result<Rules, R::Error> {
    Ok(Rules { clock: None, size: side_length(r, "size")?, win: side_length(r, "win")? })
}

/// A standing from a row's `rating`, `rd`, `volatility` and `games`.
pub(super) fn standing<R: StoredRow>(r: &R) -> Result<Standing, R::Error> {
    let rating = Glicko2Rating {
        rating: r.float("rating")?,
        deviation: r.float("rd")?,
        volatility: r.float("volatility")?,
    };
    let games = u32::try_from(r.int8("games")?).unwrap_or(u32::MAX);
    Ok(Standing { rating, games })
}

/// A standing as a profile shows it, from a row's `rating`, `rd` and `games`.
pub(super) fn pool_standing<R: StoredRow>(r: &R) -> Result<PoolStanding, R::Error> {
    Ok(PoolStanding {
        games: count(r, "games")?,
        rating: rounded(r.float("rating")?),
        rd: rounded(r.float("rd")?),
    })
}

/// A leaderboard's entry: a row's `name`, `bot`, `rating`, `rd` and `games`.
pub(super) fn leaderboard_entry<R: StoredRow>(r: &R) -> Result<LeaderboardEntry, R::Error> {
    Ok(LeaderboardEntry {
        bot: r.flag("bot")?,
        games: count(r, "games")?,
        name: r.text("name")?,
        rating: rounded(r.float("rating")?),
        rd: rounded(r.float("rd")?),
    })
}

/// A player's results: a row's counts `wins`, `draws`, `losses`, `aborted`
/// and `interrupted`.
pub(super) fn results<R: StoredRow>(r: &R) -> Result<Results, R::Error> {
    Ok(Results {
        wins: count(r, "wins")?,
        draws: count(r, "draws")?,
        losses: count(r, "losses")?,
        aborted: count(r, "aborted")?,
        interrupted: count(r, "interrupted")?,
    })
}
