//! A stored game record read back for the API: one decoder, by column
//! name, for both backends. Each gives its driver's row through
//! [`RecordRow`]; the SQL that selects the row names its columns with
//! [`record_columns!`].

use tictactoe_protocol::api::{self, GamePlayer, RatingMove};

use crate::store::spelling::{parse_reason, rfc3339, rounded};

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
         g.started_at AS started_at, g.ended_at AS ended_at"
    };
}
pub(super) use record_columns;

/// A driver's row, read by column name in the types the schemas give the
/// `games` table (Postgres is strict: `int4` is an `i32`, `int8` an `i64`).
pub(super) trait RecordRow {
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
pub(super) fn decode<R: RecordRow>(r: &R) -> Result<api::GameRecord, R::Error> {
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
    let side_length = |column: &str| -> Result<usize, R::Error> {
        usize::try_from(r.int4(column)?).map_err(|_| r.broken(column, "a negative size"))
    };
    let line = match r.opt_text("line")? {
        None => None,
        Some(text) => Some(serde_json::from_str(&text).map_err(|_| r.broken("line", "not a line"))?),
    };
    Ok(api::GameRecord {
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
        size: side_length("size")?,
        started_at: rfc3339(r.int8("started_at")?),
        win: side_length("win")?,
        winner: u8::try_from(r.int4("winner")?).map_err(|_| r.broken("winner", "not a winner"))?,
    })
}
