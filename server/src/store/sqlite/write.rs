//! Writing to SQLite: one commit's records, accounts and live changes in
//! one transaction, and spilled records put back.

use rusqlite::{Connection, Transaction, params};

use crate::core::account::{TokenHash, name_key};
use crate::core::text::look_alike_key;
use crate::store::backend::Commit;
use crate::store::live::RoomChange;
use crate::store::rating;
use crate::store::record::{GameRecord, unix_ms};
use crate::store::spelling;
use crate::store::tournaments::berserk_mask;
use crate::store::{Account, StoreError};

/// Each registration's answer, in order, and the bytes of the journal's new row.
type Written = (Vec<Result<Account, StoreError>>, usize);

/// One transaction: the records, the new accounts, the tournaments' changes,
/// the live changes (`live`, the batch's).
pub(super) fn commit(
    conn: &mut Connection,
    batch: &Commit<'_>,
    live: &[RoomChange<'_>],
) -> rusqlite::Result<Written> {
    let tx = conn.transaction()?;
    insert_games(&tx, batch.records)?;
    let accounts = batch
        .accounts
        .iter()
        .map(|a| register(&tx, &a.name, a.bot, &a.token))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    super::tournaments::write(&tx, batch.tournaments)?;
    let row = super::live::write(&tx, live)?;
    tx.commit()?;
    Ok((accounts, row))
}

/// Puts spilled records into the database in one transaction (their games
/// in progress, if saved, are dropped at the next start: they ended).
/// Returns how many records were new.
pub(super) fn import(conn: &mut Connection, games: &[GameRecord]) -> rusqlite::Result<usize> {
    let tx = conn.transaction()?;
    let before: i64 = tx.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?;
    insert_games(&tx, games)?;
    let after: i64 = tx.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?;
    tx.commit()?;
    Ok(usize::try_from(after - before).unwrap_or(0))
}

/// Inserts `games` (and the standings they leave) within `tx`; a game whose id
/// is kept already is left as it is.
pub(super) fn insert_games(tx: &Transaction<'_>, games: &[GameRecord]) -> rusqlite::Result<()> {
    {
        let mut game = tx.prepare_cached(
            "INSERT INTO games (id, room, size, win, x_name, x_account, x_bot, o_name, o_account, o_bot,
                moves, winner, reason, line, rated, x_before, x_after, o_before, o_after, started_at, ended_at,
                clock, times, opening, host, tournament, berserk)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25, ?26, ?27)
             ON CONFLICT (id) DO NOTHING",
        )?;
        let mut standing = tx.prepare_cached(
            "INSERT INTO ratings (account, size, win, rating, rd, volatility, games) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (account, size, win) DO UPDATE SET
                rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, games = excluded.games
             WHERE excluded.games > ratings.games",
        )?;
        for g in games {
            let [x, o] = &g.players;
            let r = g.ratings.as_ref();
            let rating_of = |i: usize, after: bool| {
                r.map(|r| if after { r[i].after.rating.rating } else { r[i].before.rating.rating })
            };
            game.execute(params![
                &*g.id,
                &*g.room,
                g.rules.size,
                g.rules.win,
                &*x.name,
                x.account,
                x.bot,
                &*o.name,
                o.account,
                o.bot,
                serde_json::to_string(&g.moves).unwrap_or_default(),
                g.winner.map_or(0, |p| p.number()),
                spelling::reason(g.reason),
                g.line.as_ref().map(|l| serde_json::to_string(l).unwrap_or_default()),
                r.is_some(),
                rating_of(0, false),
                rating_of(0, true),
                rating_of(1, false),
                rating_of(1, true),
                g.started_at_ms,
                g.ended_at_ms,
                g.clock_text(),
                g.times_text(),
                g.opening,
                g.host.as_deref(),
                g.tournament.as_deref(),
                berserk_mask(g.berserk),
            ])?;
        }
        // The standings the records leave; the guard keeps a newer one
        // (an import of older games) from being overwritten.
        for ((account, rules), s) in rating::latest(games) {
            standing.execute(params![
                account,
                rules.size,
                rules.win,
                s.rating.rating,
                s.rating.deviation,
                s.rating.volatility,
                s.games
            ])?;
        }
    }
    Ok(())
}

/// Inserts an account within the batch's transaction: its row, or
/// `NameTaken` when the name (ignoring case), or one that looks like it,
/// has one already.
fn register(
    tx: &Transaction<'_>,
    name: &str,
    bot: bool,
    token: &TokenHash,
) -> rusqlite::Result<Result<Account, StoreError>> {
    let now = unix_ms(std::time::SystemTime::now());
    let inserted = tx
        .prepare_cached(
            "INSERT INTO accounts (name, name_key, name_skeleton, bot, token_hash, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
        )?
        .execute(params![name, name_key(name), look_alike_key(name), bot, &token[..], now])?;
    Ok(match inserted {
        0 => Err(StoreError::NameTaken),
        _ => Ok(Account { id: tx.last_insert_rowid(), name: name.into(), bot, standings: Vec::new() }),
    })
}
