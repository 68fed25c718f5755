//! Arena tournaments in SQLite: their rows and entrants written in a
//! commit's transaction, and read back with the records that name them.

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use tictactoe_protocol::tournament::TournamentSummary;

use crate::core::account::name_key;
use crate::store::record::unix_ms;
use crate::store::row::{self, scored_columns, tournament_columns};
use crate::store::tournaments::{LISTED, LISTED_AFTER_MS, TournamentData, TournamentWrite};

/// Writes `writes` within `tx`, in order. A tournament created again (by
/// id) is left as it was; a join of an entrant who paused clears its pause
/// and keeps when it first joined.
pub(super) fn write(tx: &Transaction<'_>, writes: &[TournamentWrite]) -> rusqlite::Result<()> {
    let now = unix_ms(std::time::SystemTime::now());
    for w in writes {
        match w {
            TournamentWrite::Create(t) => {
                let clock = t.terms.clock;
                tx.prepare_cached(
                    "INSERT INTO tournaments (id, name, created_by, created_by_account, size, win, initial_ms,
                        increment_ms, duration_ms, starts_at, created_at)
                     VALUES (?1, ?2, ?3, (SELECT id FROM accounts WHERE name_key = ?4), ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                     ON CONFLICT (id) DO NOTHING",
                )?
                .execute(params![
                    &*t.id,
                    t.terms.name,
                    &*t.created_by,
                    name_key(&t.created_by),
                    t.terms.size,
                    t.terms.win,
                    clock.initial_ms,
                    clock.increment_ms,
                    t.terms.duration_ms,
                    t.starts_at,
                    now
                ])?;
            }
            TournamentWrite::Join { tournament, account, name } => {
                tx.prepare_cached(
                    "INSERT INTO tournament_players (tournament, account, name, paused, joined_at)
                     VALUES (?1, ?2, ?3, 0, ?4)
                     ON CONFLICT (tournament, account) DO UPDATE SET paused = 0",
                )?
                .execute(params![&**tournament, account, &**name, now])?;
            }
            TournamentWrite::Pause { tournament, account } => {
                tx.prepare_cached(
                    "UPDATE tournament_players SET paused = 1 WHERE tournament = ?1 AND account = ?2",
                )?
                .execute(params![&**tournament, account])?;
            }
        }
    }
    Ok(())
}

/// Tournament `id` with its entrants and recorded games, if there is one.
pub(super) fn read(conn: &Connection, id: &str) -> rusqlite::Result<Option<TournamentData>> {
    let sql = concat!("SELECT ", tournament_columns!(), " FROM tournaments t WHERE t.id = ?1");
    let Some((row, _)) = conn.prepare_cached(sql)?.query_row([id], |r| row::tournament_row(r)).optional()?
    else {
        return Ok(None);
    };
    let entrants = conn
        .prepare_cached(
            "SELECT account, name, paused FROM tournament_players WHERE tournament = ?1
             ORDER BY joined_at, account",
        )?
        .query_map([id], |r| row::entrant(r))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let sql = concat!("SELECT ", scored_columns!(), " FROM games g WHERE g.tournament = ?1");
    let games = conn
        .prepare_cached(sql)?
        .query_map([id], |r| row::scored_game(r))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some(TournamentData { row, entrants, games }))
}

/// The tournaments listed at `now_ms`: not finished, or finished within a
/// day; newest start first.
pub(super) fn list(conn: &Connection, now_ms: i64) -> rusqlite::Result<Vec<TournamentSummary>> {
    let sql = concat!(
        "SELECT ",
        tournament_columns!(),
        " FROM tournaments t WHERE t.starts_at + t.duration_ms > ?1
          ORDER BY t.starts_at DESC, t.id DESC LIMIT ?2"
    );
    let limit = i64::try_from(LISTED).unwrap_or(i64::MAX);
    conn.prepare_cached(sql)?
        .query_map(params![now_ms.saturating_sub(LISTED_AFTER_MS), limit], |r| {
            let (row, players) = row::tournament_row(r)?;
            Ok(row.summary(players, now_ms))
        })?
        .collect()
}
