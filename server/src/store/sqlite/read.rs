//! Reading SQLite for the API and for sign-in, on a read-only connection of
//! the reader's own: in WAL mode it reads the last commit while the writer
//! goes on.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};
use skillratings::glicko2::Glicko2Rating;
use tictactoe_protocol::api::{
    self, GamePlayer, Leaderboard, LeaderboardEntry, PlayerGames, PlayerProfile, PoolStanding, RatingMove,
    Results,
};

use crate::core::account::{TokenHash, name_key};
use crate::core::text::look_alike_key;
use crate::ratings::{Standing, pool_key};
use crate::store::Account;
use crate::store::answer::{self, rfc3339, rounded};
use crate::store::backend::{BackendError, Reader};
use tictactoe_protocol::Rules;

/// A read-only connection to the database.
pub struct SqliteReader {
    conn: Connection,
}

impl SqliteReader {
    /// Opens `path` read-only (the writer has created and migrated it).
    pub(super) fn open(path: &Path) -> rusqlite::Result<SqliteReader> {
        let flags =
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        Ok(SqliteReader { conn })
    }
}

/// The columns [`game`] reads, from `games g`.
const GAME_COLUMNS: &str = "g.id, g.room, g.size, g.win, g.x_name, g.x_account, g.x_bot, g.o_name, g.o_account, \
     g.o_bot, g.moves, g.winner, g.reason, g.line, g.rated, g.x_before, g.x_after, g.o_before, g.o_after, \
     g.started_at, g.ended_at";

/// A stored value that cannot be what the column holds: the row is broken.
fn broken(column: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, what.into())
}

/// One game record from a row of [`GAME_COLUMNS`].
fn game(r: &Row) -> rusqlite::Result<api::GameRecord> {
    let rated: bool = r.get(14)?;
    let rating = |i: usize| -> rusqlite::Result<Option<i64>> { Ok(r.get::<_, Option<f64>>(i)?.map(rounded)) };
    let player = |name: usize, before: usize| -> rusqlite::Result<GamePlayer> {
        Ok(GamePlayer {
            account: r.get::<_, Option<i64>>(name + 1)?.is_some(),
            bot: r.get(name + 2)?,
            name: r.get(name)?,
            rating: if rated { rating(before)? } else { None },
        })
    };
    let change = |before: usize| -> rusqlite::Result<Option<RatingMove>> {
        Ok(match (rating(before)?, rating(before + 1)?) {
            (Some(before), Some(after)) => Some(RatingMove { after, before }),
            _ => None,
        })
    };
    let ratings = match (rated, change(15)?, change(17)?) {
        (true, Some(x), Some(o)) => Some([x, o]),
        _ => None,
    };
    let moves: String = r.get(10)?;
    let line: Option<String> = r.get(13)?;
    let reason: String = r.get(12)?;
    Ok(api::GameRecord {
        ended_at: rfc3339(r.get(20)?),
        id: r.get(0)?,
        line: match line {
            None => None,
            Some(text) => Some(serde_json::from_str(&text).map_err(|_| broken(13, "not a line"))?),
        },
        moves: serde_json::from_str(&moves).map_err(|_| broken(10, "not a list of moves"))?,
        players: [player(4, 15)?, player(7, 17)?],
        rated,
        ratings,
        reason: answer::parse_reason(&reason).ok_or_else(|| broken(12, "not an end reason"))?,
        room: r.get(1)?,
        size: r.get(2)?,
        started_at: rfc3339(r.get(19)?),
        win: r.get(3)?,
        winner: r.get(11)?,
    })
}

fn account_id(conn: &Connection, name: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT id FROM accounts WHERE name_key = ?1")?
        .query_row([name_key(name)], |r| r.get(0))
        .optional()
}

/// A count from SQL, which is never negative.
fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl SqliteReader {
    fn game(&self, id: &str) -> rusqlite::Result<Option<api::GameRecord>> {
        let sql = format!("SELECT {GAME_COLUMNS} FROM games g WHERE g.id = ?1");
        self.conn.prepare_cached(&sql)?.query_row([id], game).optional()
    }

    fn player_games(
        &self,
        name: &str,
        limit: usize,
        before: Option<&str>,
    ) -> rusqlite::Result<Option<PlayerGames>> {
        let conn = &self.conn;
        let Some(id) = account_id(conn, name)? else { return Ok(None) };
        let before_seq = match before {
            Some(b) => match conn
                .prepare_cached("SELECT seq FROM games WHERE id = ?1")?
                .query_row([b], |r| r.get::<_, i64>(0))
                .optional()?
            {
                Some(seq) => seq,
                // An unknown cursor is an empty page, not everything.
                None => return Ok(Some(PlayerGames::default())),
            },
            None => i64::MAX,
        };
        // Two index range scans merged: the player's games as X and as O.
        let sql = format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE g.seq IN (
                SELECT seq FROM (SELECT seq FROM games WHERE x_account = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3)
                UNION ALL
                SELECT seq FROM (SELECT seq FROM games WHERE o_account = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3)
             ) ORDER BY g.seq DESC LIMIT ?3"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let games = conn
            .prepare_cached(&sql)?
            .query_map(params![id, before_seq, limit], game)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some(PlayerGames { games }))
    }

    fn leaderboard(&self, rules: Rules, limit: usize) -> rusqlite::Result<Leaderboard> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT a.name, a.bot, r.rating, r.rd, r.games FROM ratings r JOIN accounts a ON a.id = r.account
             WHERE r.size = ?1 AND r.win = ?2 AND r.games > 0 ORDER BY r.rating DESC, a.name_key LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let players = stmt
            .query_map(params![rules.size, rules.win, limit], |r| {
                Ok(LeaderboardEntry {
                    bot: r.get(1)?,
                    games: count(r.get(4)?),
                    name: r.get(0)?,
                    rating: rounded(r.get(2)?),
                    rd: rounded(r.get(3)?),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Leaderboard { players, size: rules.size, win: rules.win })
    }

    fn player(&self, name: &str) -> rusqlite::Result<Option<PlayerProfile>> {
        let conn = &self.conn;
        let row = conn
            .prepare_cached("SELECT id, name, bot, created_at FROM accounts WHERE name_key = ?1")?
            .query_row([name_key(name)], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?, r.get::<_, i64>(3)?))
            })
            .optional()?;
        let Some((id, name, bot, created_at)) = row else { return Ok(None) };
        let mut ratings = BTreeMap::new();
        let mut stmt =
            conn.prepare_cached("SELECT size, win, rating, rd, games FROM ratings WHERE account = ?1")?;
        for pool in stmt.query_map([id], |r| {
            let rules = Rules { size: r.get(0)?, win: r.get(1)? };
            let standing =
                PoolStanding { games: count(r.get(4)?), rating: rounded(r.get(2)?), rd: rounded(r.get(3)?) };
            Ok((pool_key(rules), standing))
        })? {
            let (key, standing) = pool?;
            ratings.insert(key, standing);
        }
        let results = conn
            .prepare_cached(
                "SELECT
                COALESCE(SUM((x_account = ?1 AND winner = 1) OR (o_account = ?1 AND winner = 2)), 0),
                COALESCE(SUM(reason = 'draw'), 0),
                COALESCE(SUM((x_account = ?1 AND winner = 2) OR (o_account = ?1 AND winner = 1)), 0),
                COALESCE(SUM(reason = 'aborted'), 0),
                COALESCE(SUM(reason = 'shutdown'), 0)
             FROM games WHERE x_account = ?1 OR o_account = ?1",
            )?
            .query_row([id], |r| {
                Ok(Results {
                    wins: count(r.get(0)?),
                    draws: count(r.get(1)?),
                    losses: count(r.get(2)?),
                    aborted: count(r.get(3)?),
                    interrupted: count(r.get(4)?),
                })
            })?;
        Ok(Some(PlayerProfile { bot, created_at: rfc3339(created_at), name, ratings, results }))
    }

    /// The account of `name` (ignoring case), else the one whose name looks
    /// like it.
    fn account(&self, name: &str) -> rusqlite::Result<Option<(Account, TokenHash)>> {
        let conn = &self.conn;
        let row = conn
            .prepare_cached(
                "SELECT id, name, bot, token_hash FROM accounts WHERE name_key = ?1 OR name_skeleton = ?2
                 ORDER BY name_key = ?1 DESC LIMIT 1",
            )?
            .query_row([name_key(name), look_alike_key(name)], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, Vec<u8>>(3)?,
                ))
            })
            .optional()?;
        let Some((id, name, bot, hash)) = row else { return Ok(None) };
        let Ok(hash) = TokenHash::try_from(hash.as_slice()) else { return Ok(None) };
        let mut stmt = conn.prepare_cached(
            "SELECT size, win, rating, rd, volatility, games FROM ratings WHERE account = ?1",
        )?;
        let standings = stmt
            .query_map([id], |r| {
                let rules = Rules { size: r.get(0)?, win: r.get(1)? };
                let rating = Glicko2Rating { rating: r.get(2)?, deviation: r.get(3)?, volatility: r.get(4)? };
                Ok((rules, Standing { rating, games: r.get(5)? }))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some((Account { id, name: name.into(), bot, standings }, hash)))
    }
}

impl Reader for SqliteReader {
    fn account(&mut self, name: &str) -> Result<Option<(Account, TokenHash)>, BackendError> {
        Ok(SqliteReader::account(self, name)?)
    }

    fn game(&mut self, id: &str) -> Result<Option<api::GameRecord>, BackendError> {
        Ok(SqliteReader::game(self, id)?)
    }

    fn player(&mut self, name: &str) -> Result<Option<PlayerProfile>, BackendError> {
        Ok(SqliteReader::player(self, name)?)
    }

    fn player_games(
        &mut self,
        name: &str,
        limit: usize,
        before: Option<&str>,
    ) -> Result<Option<PlayerGames>, BackendError> {
        Ok(SqliteReader::player_games(self, name, limit, before)?)
    }

    fn leaderboard(&mut self, rules: Rules, limit: usize) -> Result<Leaderboard, BackendError> {
        Ok(SqliteReader::leaderboard(self, rules, limit)?)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_read_as_sqlite_writes_them() {
        let conn = rusqlite::Connection::open_in_memory().expect("open");
        for ms in [0, 1_764_052_289_123, 951_782_400_000, 4_102_444_799_999, 1_709_208_000_001] {
            let sqlite: String = conn
                .query_row("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?1 / 1000.0, 'unixepoch')", [ms], |r| {
                    r.get(0)
                })
                .expect("strftime");
            assert_eq!(super::rfc3339(ms), sqlite, "{ms}");
        }
    }
}
