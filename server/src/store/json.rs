//! The HTTP API's answers, read from SQLite in the contract's shapes.

use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::{Map, Value, json};
use tictactoe_protocol::EndReason;

use super::Query;
use crate::ratings::pool_key;
use crate::rules::Rules;

/// `reason` as the wire spells it.
pub(super) fn reason(r: EndReason) -> String {
    serde_json::to_value(r).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// An RFC 3339 UTC time from milliseconds since the epoch, by SQLite.
const TIME: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', {} / 1000.0, 'unixepoch')";

fn time(col: &str) -> String {
    TIME.replace("{}", col)
}

fn game_columns() -> String {
    format!(
        "g.id, g.room, g.size, g.win, g.x_name, g.x_account, g.x_bot, g.o_name, g.o_account, g.o_bot,
         g.moves, g.winner, g.reason, g.line, g.rated, g.x_before, g.x_after, g.o_before, g.o_after, {}, {}",
        time("g.started_at"),
        time("g.ended_at")
    )
}

/// One game record as `/api/games/{id}` gives it.
fn game(r: &Row) -> rusqlite::Result<Value> {
    let rated: bool = r.get(14)?;
    let rating = |i: usize| -> rusqlite::Result<Option<i64>> {
        Ok(r.get::<_, Option<f64>>(i)?.map(|v| v.round() as i64))
    };
    let player = |name: usize| -> rusqlite::Result<Value> {
        let account: Option<i64> = r.get(name + 1)?;
        Ok(json!({
            "name": r.get::<_, String>(name)?,
            "account": account.is_some(),
            "bot": r.get::<_, bool>(name + 2)?,
            "rating": if rated { rating(if name == 4 { 15 } else { 17 })? } else { None },
        }))
    };
    let parse = |text: Option<String>| {
        text.and_then(|t| serde_json::from_str::<Value>(&t).ok()).unwrap_or(Value::Null)
    };
    let ratings = if rated {
        json!([
            {"before": rating(15)?, "after": rating(16)?},
            {"before": rating(17)?, "after": rating(18)?},
        ])
    } else {
        Value::Null
    };
    Ok(json!({
        "id": r.get::<_, String>(0)?,
        "room": r.get::<_, String>(1)?,
        "size": r.get::<_, i64>(2)?,
        "win": r.get::<_, i64>(3)?,
        "players": [player(4)?, player(7)?],
        "moves": parse(r.get(10)?),
        "winner": r.get::<_, i64>(11)?,
        "reason": r.get::<_, String>(12)?,
        "line": parse(r.get(13)?),
        "rated": rated,
        "ratings": ratings,
        "started_at": r.get::<_, String>(19)?,
        "ended_at": r.get::<_, String>(20)?,
    }))
}

/// A record not yet committed, as `/api/games/{id}` gives it.
pub(super) fn held(g: &crate::store::record::GameRecord) -> Value {
    let r = g.ratings.as_ref();
    let shown = |i: usize, after: bool| {
        r.map(|r| if after { r[i].after.rating.rating } else { r[i].before.rating.rating }.round() as i64)
    };
    let player = |i: usize| {
        let p = &g.players[i];
        json!({"name": &*p.name, "account": p.account.is_some(), "bot": p.bot, "rating": shown(i, false)})
    };
    json!({
        "id": &*g.id,
        "room": &*g.room,
        "size": g.rules.size,
        "win": g.rules.win,
        "players": [player(0), player(1)],
        "moves": g.moves,
        "winner": g.winner.map_or(0, |p| p.number()),
        "reason": reason(g.reason),
        "line": g.line,
        "rated": r.is_some(),
        "ratings": r.map(|_| json!([
            {"before": shown(0, false), "after": shown(0, true)},
            {"before": shown(1, false), "after": shown(1, true)},
        ])),
        "started_at": rfc3339(g.started_at_ms),
        "ended_at": rfc3339(g.ended_at_ms),
    })
}

/// Milliseconds since the epoch as SQLite's `strftime` above writes them
/// (`2026-11-25T06:31:29.123Z`).
fn rfc3339(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) =
        (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// Answers one API query: its JSON, or `None` for what does not exist.
pub(super) fn query(conn: &mut Connection, q: Query) -> rusqlite::Result<Option<Value>> {
    match q {
        Query::Game(id) => {
            let sql = format!("SELECT {} FROM games g WHERE g.id = ?1", game_columns());
            conn.prepare_cached(&sql)?.query_row([id], game).optional()
        }
        Query::Player(name) => player(conn, &name),
        Query::PlayerGames { name, limit, before } => {
            let Some(id) = account_id(conn, &name)? else { return Ok(None) };
            let before_seq = match before {
                Some(b) => match conn
                    .prepare_cached("SELECT seq FROM games WHERE id = ?1")?
                    .query_row([b], |r| r.get::<_, i64>(0))
                    .optional()?
                {
                    Some(seq) => seq,
                    // An unknown cursor is an empty page, not everything.
                    None => return Ok(Some(json!({"games": []}))),
                },
                None => i64::MAX,
            };
            // Two index range scans merged: the player's games as X and as O.
            let sql = format!(
                "SELECT {} FROM games g WHERE g.seq IN (
                    SELECT seq FROM (SELECT seq FROM games WHERE x_account = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3)
                    UNION ALL
                    SELECT seq FROM (SELECT seq FROM games WHERE o_account = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3)
                 ) ORDER BY g.seq DESC LIMIT ?3",
                game_columns()
            );
            let games = conn
                .prepare_cached(&sql)?
                .query_map(rusqlite::params![id, before_seq, limit as i64], game)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Some(json!({ "games": games })))
        }
        Query::Leaderboard { rules, limit } => {
            let mut stmt = conn.prepare_cached(
                "SELECT a.name, a.bot, r.rating, r.rd, r.games FROM ratings r JOIN accounts a ON a.id = r.account
                 WHERE r.size = ?1 AND r.win = ?2 AND r.games > 0 ORDER BY r.rating DESC, a.name_key LIMIT ?3",
            )?;
            let players = stmt
                .query_map(rusqlite::params![rules.size, rules.win, limit as i64], |r| {
                    Ok(json!({
                        "name": r.get::<_, String>(0)?,
                        "bot": r.get::<_, bool>(1)?,
                        "rating": r.get::<_, f64>(2)?.round() as i64,
                        "rd": r.get::<_, f64>(3)?.round() as i64,
                        "games": r.get::<_, i64>(4)?,
                    }))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Some(json!({ "size": rules.size, "win": rules.win, "players": players })))
        }
    }
}

fn account_id(conn: &Connection, name: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT id FROM accounts WHERE name_key = ?1")?
        .query_row([crate::session::account::name_key(name)], |r| r.get(0))
        .optional()
}

fn player(conn: &Connection, name: &str) -> rusqlite::Result<Option<Value>> {
    let row = conn
        .prepare_cached(&format!(
            "SELECT id, name, bot, {} FROM accounts WHERE name_key = ?1",
            time("created_at")
        ))?
        .query_row([crate::session::account::name_key(name)], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?, r.get::<_, String>(3)?))
        })
        .optional()?;
    let Some((id, name, bot, created_at)) = row else { return Ok(None) };
    let mut ratings = Map::new();
    let mut stmt =
        conn.prepare_cached("SELECT size, win, rating, rd, games FROM ratings WHERE account = ?1")?;
    for pool in stmt.query_map([id], |r| {
        let rules = Rules { size: r.get(0)?, win: r.get(1)? };
        let entry = json!({
            "rating": r.get::<_, f64>(2)?.round() as i64,
            "rd": r.get::<_, f64>(3)?.round() as i64,
            "games": r.get::<_, i64>(4)?,
        });
        Ok((pool_key(rules), entry))
    })? {
        let (key, entry) = pool?;
        ratings.insert(key, entry);
    }
    let (wins, draws, losses) = conn
        .prepare_cached(
            "SELECT
            COALESCE(SUM((x_account = ?1 AND winner = 1) OR (o_account = ?1 AND winner = 2)), 0),
            COALESCE(SUM(reason = 'draw'), 0),
            COALESCE(SUM((x_account = ?1 AND winner = 2) OR (o_account = ?1 AND winner = 1)), 0)
         FROM games WHERE x_account = ?1 OR o_account = ?1",
        )?
        .query_row([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))?;
    Ok(Some(json!({
        "name": name,
        "bot": bot,
        "created_at": created_at,
        "ratings": ratings,
        "results": {"wins": wins, "draws": draws, "losses": losses},
    })))
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_read_as_sqlite_writes_them() {
        let conn = rusqlite::Connection::open_in_memory().expect("open");
        for ms in [0, 1_764_052_289_123, 951_782_400_000, 4_102_444_799_999, 1_709_208_000_001] {
            let sqlite: String = conn
                .query_row(&format!("SELECT {}", super::time("?1")), [ms], |r| r.get(0))
                .expect("strftime");
            assert_eq!(super::rfc3339(ms), sqlite, "{ms}");
        }
    }
}
