//! Reading SQLite for the API and for sign-in, on a read-only connection of
//! the reader's own: in WAL mode it reads the last commit while the writer
//! goes on.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};
use tictactoe_protocol::api::{self, Leaderboard, PlayerGames, PlayerProfile};

use crate::core::account::{TokenHash, name_key};
use crate::core::text::look_alike_key;
use crate::ratings::pool_key;
use crate::store::Account;
use crate::store::backend::{BackendError, Fetched, Reader};
use crate::store::row::{self, StoredRow, record_columns};
use crate::store::spelling::rfc3339;
use crate::store::tournaments::TournamentData;
use tictactoe_protocol::Rules;
use tictactoe_protocol::tournament::TournamentSummary;

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

impl StoredRow for Row<'_> {
    type Error = rusqlite::Error;

    fn int4(&self, column: &str) -> rusqlite::Result<i32> {
        self.get(column)
    }
    fn int8(&self, column: &str) -> rusqlite::Result<i64> {
        self.get(column)
    }
    fn opt_int8(&self, column: &str) -> rusqlite::Result<Option<i64>> {
        self.get(column)
    }
    fn flag(&self, column: &str) -> rusqlite::Result<bool> {
        self.get(column)
    }
    fn float(&self, column: &str) -> rusqlite::Result<f64> {
        self.get(column)
    }
    fn opt_float(&self, column: &str) -> rusqlite::Result<Option<f64>> {
        self.get(column)
    }
    fn text(&self, column: &str) -> rusqlite::Result<String> {
        self.get(column)
    }
    fn opt_text(&self, column: &str) -> rusqlite::Result<Option<String>> {
        self.get(column)
    }
    fn broken(&self, column: &str, what: &str) -> rusqlite::Error {
        let index = self.as_ref().column_index(column).unwrap_or_default();
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, what.into())
    }
}

fn account_id(conn: &Connection, name: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT id FROM accounts WHERE name_key = ?1")?
        .query_row([name_key(name)], |r| r.get("id"))
        .optional()
}

impl Reader for SqliteReader {
    fn game(&mut self, id: &str) -> Fetched<api::GameRecord> {
        let sql = concat!("SELECT ", record_columns!(), " FROM games g WHERE g.id = ?1");
        Ok(self.conn.prepare_cached(sql)?.query_row([id], |r| row::record(r)).optional()?)
    }

    fn player_games(&mut self, name: &str, limit: usize, before: Option<&str>) -> Fetched<PlayerGames> {
        let conn = &self.conn;
        let Some(id) = account_id(conn, name)? else { return Ok(None) };
        let before_seq = match before {
            Some(b) => match conn
                .prepare_cached("SELECT seq FROM games WHERE id = ?1")?
                .query_row([b], |r| r.get::<_, i64>("seq"))
                .optional()?
            {
                Some(seq) => seq,
                // An unknown cursor is an empty page, not everything.
                None => return Ok(Some(PlayerGames::default())),
            },
            None => i64::MAX,
        };
        // Two index range scans merged: the player's games as X and as O.
        let sql = concat!(
            "SELECT ",
            record_columns!(),
            " FROM games g WHERE g.seq IN (
                SELECT seq FROM (SELECT seq FROM games WHERE x_account = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3)
                UNION ALL
                SELECT seq FROM (SELECT seq FROM games WHERE o_account = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3)
             ) ORDER BY g.seq DESC LIMIT ?3"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let games = conn
            .prepare_cached(sql)?
            .query_map(params![id, before_seq, limit], |r| row::record(r))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some(PlayerGames { games }))
    }

    fn leaderboard(&mut self, rules: Rules, limit: usize) -> Result<Leaderboard, BackendError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT a.name AS name, a.bot AS bot, r.rating AS rating, r.rd AS rd, r.games AS games
             FROM ratings r JOIN accounts a ON a.id = r.account
             WHERE r.size = ?1 AND r.win = ?2 AND r.games > 0 ORDER BY r.rating DESC, a.name_key LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let players = stmt
            .query_map(params![rules.size, rules.win, limit], |r| row::leaderboard_entry(r))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Leaderboard { players, size: rules.size, win: rules.win })
    }

    fn player(&mut self, name: &str) -> Fetched<PlayerProfile> {
        let conn = &self.conn;
        let row = conn
            .prepare_cached("SELECT id, name, bot, created_at FROM accounts WHERE name_key = ?1")?
            .query_row([name_key(name)], |r| {
                Ok((
                    r.get::<_, i64>("id")?,
                    r.get::<_, String>("name")?,
                    r.get::<_, bool>("bot")?,
                    r.get::<_, i64>("created_at")?,
                ))
            })
            .optional()?;
        let Some((id, name, bot, created_at)) = row else { return Ok(None) };
        let mut ratings = BTreeMap::new();
        let mut stmt =
            conn.prepare_cached("SELECT size, win, rating, rd, games FROM ratings WHERE account = ?1")?;
        for pool in stmt.query_map([id], |r| Ok((pool_key(row::pool(r)?), row::pool_standing(r)?)))? {
            let (key, standing) = pool?;
            ratings.insert(key, standing);
        }
        let results = conn
            .prepare_cached(
                "SELECT
                COALESCE(SUM((x_account = ?1 AND winner = 1) OR (o_account = ?1 AND winner = 2)), 0) AS wins,
                COALESCE(SUM(reason = 'draw'), 0) AS draws,
                COALESCE(SUM((x_account = ?1 AND winner = 2) OR (o_account = ?1 AND winner = 1)), 0) AS losses,
                COALESCE(SUM(reason = 'aborted'), 0) AS aborted,
                COALESCE(SUM(reason = 'shutdown'), 0) AS interrupted
             FROM games WHERE x_account = ?1 OR o_account = ?1",
            )?
            .query_row([id], |r| row::results(r))?;
        Ok(Some(PlayerProfile { bot, created_at: rfc3339(created_at), name, ratings, results }))
    }

    fn tournament(&mut self, id: &str) -> Fetched<TournamentData> {
        Ok(super::tournaments::read(&self.conn, id)?)
    }

    fn tournaments(&mut self, now_ms: i64) -> Result<Vec<TournamentSummary>, BackendError> {
        Ok(super::tournaments::list(&self.conn, now_ms)?)
    }

    fn account(&mut self, name: &str) -> Fetched<(Account, TokenHash)> {
        let conn = &self.conn;
        let row = conn
            .prepare_cached(
                "SELECT id, name, bot, token_hash FROM accounts WHERE name_key = ?1 OR name_skeleton = ?2
                 ORDER BY name_key = ?1 DESC LIMIT 1",
            )?
            .query_row([name_key(name), look_alike_key(name)], |r| {
                Ok((
                    r.get::<_, i64>("id")?,
                    r.get::<_, String>("name")?,
                    r.get::<_, bool>("bot")?,
                    r.get::<_, Vec<u8>>("token_hash")?,
                ))
            })
            .optional()?;
        let Some((id, name, bot, hash)) = row else { return Ok(None) };
        let Ok(hash) = TokenHash::try_from(hash.as_slice()) else { return Ok(None) };
        let mut stmt = conn.prepare_cached(
            "SELECT size, win, rating, rd, volatility, games FROM ratings WHERE account = ?1",
        )?;
        let standings = stmt
            .query_map([id], |r| Ok((row::pool(r)?, row::standing(r)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some((Account { id, name: name.into(), bot, standings }, hash)))
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
