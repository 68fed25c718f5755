//! Games in progress in SQLite: each commit's changes appended to the
//! journal (`journal`), and reading the saved games back at start (setting
//! aside what cannot be read).

use std::sync::Arc;

use rusqlite::{Connection, Transaction, params};
use rustc_hash::FxHashMap;

use crate::store::Restored;
use crate::store::changes::LiveGame;
use crate::store::live::RoomChange;
use crate::store::row;
use crate::store::sqlite::journal::{self, Journal};
use crate::store::sqlite::journal_bytes::SNAPSHOT;

/// Appends one commit's changes to games in progress within `tx`, as one
/// row. Returns the row's bytes (for [`Journal::committed`] once the commit
/// is done), 0 for no row.
pub(super) fn write(tx: &Transaction<'_>, changes: &[RoomChange<'_>]) -> rusqlite::Result<usize> {
    let Some(row) = journal::encode_changes(changes) else { return Ok(0) };
    // The writer's journal follows the changes without reading the row
    // back; in tests, every row written is one a restart can read.
    debug_assert!(journal::decode(&row).is_ok(), "a journal row that does not decode");
    tx.prepare_cached("INSERT INTO live_log (data) VALUES (?1)")?.execute([&row])?;
    Ok(row.len())
}

/// Replaces the journal's rows by one snapshot of the games in progress,
/// in a transaction of its own.
pub(super) fn snapshot(conn: &mut Connection, journal: &mut Journal) -> rusqlite::Result<()> {
    let row = journal::encode_snapshot(journal.games.values());
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM live_log", [])?;
    tx.execute("INSERT INTO live_log (data) VALUES (?1)", [&row])?;
    tx.commit()?;
    journal.snapshotted(row.len());
    Ok(())
}

/// Every saved game, and the standings of the accounts that play in them
/// (their games are rated when they end), with the journal that now holds
/// just them. A game whose record exists has ended: it goes. A row that
/// cannot be read back, or a game that cannot be played on (a move off its
/// board), is logged and set aside in `quarantine`; it never stops the start.
pub(super) fn load(conn: &mut Connection) -> rusqlite::Result<(Restored, Journal)> {
    let tx = conn.transaction()?;
    let mut games: FxHashMap<Arc<str>, LiveGame> = FxHashMap::default();
    for game in super::legacy::take(&tx)? {
        games.insert(game.room.clone(), game);
    }
    {
        let mut stmt = tx.prepare("SELECT seq, data FROM live_log ORDER BY seq")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let seq: i64 = r.get(0)?;
            let data = r.get::<_, Vec<u8>>(1);
            let decoded = match &data {
                Ok(data) => journal::decode(data),
                Err(e) => Err(e.to_string()),
            };
            match decoded {
                Ok((kind, entries)) => {
                    if kind == SNAPSHOT {
                        games.clear();
                    }
                    for entry in entries {
                        journal::apply(&mut games, entry);
                    }
                }
                Err(why) => {
                    tracing::error!(
                        seq,
                        reason = %why,
                        "a saved row of games in progress cannot be read back: set aside in the quarantine table"
                    );
                    let data = data.as_deref().map(hex).unwrap_or_default();
                    quarantine(&tx, "live_log", &seq.to_string(), &why, &data)?;
                }
            }
        }
    }
    let mut ended = 0;
    {
        let mut has_record = tx.prepare("SELECT 1 FROM games WHERE id = ?1")?;
        let mut gone = Vec::new();
        for (room, game) in &games {
            if let Some(why) = game.unplayable() {
                tracing::error!(room = %room, "a saved game cannot be played on ({why}): set aside in the quarantine table");
                quarantine(&tx, "live_log", room, why, &describe(game))?;
                gone.push(room.clone());
            } else if has_record.exists([&*game.id])? {
                ended += 1;
                gone.push(room.clone());
            }
        }
        for room in gone {
            games.remove(&room);
        }
    }
    if ended > 0 {
        tracing::warn!(games = ended, "saved games that have a record were dropped: those games ended");
    }
    // From now on the journal is just these games.
    let row = journal::encode_snapshot(games.values());
    tx.execute("DELETE FROM live_log", [])?;
    if !games.is_empty() {
        tx.execute("INSERT INTO live_log (data) VALUES (?1)", [&row])?;
    }
    let mut standings = Vec::new();
    {
        let mut stmt = tx.prepare_cached(
            "SELECT rating, rd, volatility, games FROM ratings WHERE account = ?1 AND size = ?2 AND win = ?3",
        )?;
        for g in games.values() {
            for account in g.players.iter().filter_map(|p| p.account) {
                let mut rows = stmt.query(params![account, g.rules.size, g.rules.win])?;
                if let Some(r) = rows.next()? {
                    standings.push((account, g.rules, row::standing(r)?));
                }
            }
        }
    }
    tx.commit()?;
    let restored = Restored { games: games.values().cloned().collect(), standings };
    Ok((restored, Journal::from_snapshot(games, row.len())))
}

/// Sets a saved thing that cannot be read back aside: `what` it was,
/// its `key` there, why, and its data.
pub(super) fn quarantine(
    tx: &Transaction<'_>,
    what: &str,
    key: &str,
    reason: &str,
    data: &str,
) -> rusqlite::Result<()> {
    let now = crate::store::record::unix_ms(std::time::SystemTime::now());
    tx.execute(
        "INSERT INTO quarantine (what, key, reason, data, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![what, key, reason, data, now],
    )?;
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|x| format!("{x:02x}")).collect()
}

/// A game as JSON, for the quarantine.
fn describe(g: &LiveGame) -> String {
    serde_json::json!({
        "room": &*g.room,
        "game_id": &*g.id,
        "size": g.rules.size,
        "win": g.rules.win,
        "players": g.players.iter().map(|p| serde_json::json!({"name": &*p.name, "account": p.account, "bot": p.bot})).collect::<Vec<_>>(),
        "moves": g.moves,
        "started_at": g.started_at_ms,
        "tournament": g.tournament.as_deref(),
        "berserk": g.berserk,
    })
    .to_string()
}
