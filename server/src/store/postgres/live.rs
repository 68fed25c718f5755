//! Games in progress in Postgres, read back when this instance takes them
//! over: at start (alone on its database, every saved game; in a cluster,
//! its own) and when it adopts a dead or stopped instance's. Drops those
//! that have a record (they ended) and sets aside what cannot be read back.

use std::sync::Arc;
use std::time::Duration;

use rustc_hash::{FxHashMap, FxHashSet};
use tokio_postgres::{Error, Row, Transaction};

use crate::core::account::{Identity, TokenHash};
use crate::ratings::Standing;
use crate::store::Restored;
use crate::store::changes::{LiveGame, decode_cells, saved_rules};
use crate::store::postgres::Conn;
use crate::store::record::unix_ms;
use crate::store::row;
use crate::store::tournaments::berserk_sides;
use tictactoe_protocol::HouseLevel;
use tictactoe_protocol::Rules;

/// Whose saved games a load takes over.
pub(super) enum Whose {
    /// Every saved game: a server alone on its database.
    All,
    /// This instance's own, at its start in a cluster: it says it is alive
    /// in the same transaction.
    Own,
    /// Those of these instances, which were not alive (an adoption): any of
    /// them alive again by now (restarted under its name) keeps its games.
    Dead(Vec<String>),
}

/// The advisory lock on an instance's name: a start under that name and an
/// adoption of its games take it, so that one of them sees the other done.
const NAME_LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtext('ttt-instance:' || n)) FROM unnest($1::text[]) AS n";

/// The saved games `whose` names, now held by `owner` with `epoch` (the
/// session's hold), and the standings of the accounts that play in them
/// (their games are rated when they end). Waits on no other session's
/// locks: a game locked by a transaction of its old holder that has not
/// ended yet (it hangs) is skipped, and taken the next time.
pub(super) async fn load(c: &mut Conn, owner: &str, epoch: i64, whose: &Whose) -> Result<Restored, Error> {
    let tx = c.client.transaction().await?;
    // Taking games over is allowed in this transaction only (see the triggers).
    tx.batch_execute("SET LOCAL ttt.taking = 'on'").await?;
    let owners: Vec<String> = match whose {
        Whose::All => Vec::new(),
        Whose::Own => {
            let me = vec![owner.to_owned()];
            tx.execute(NAME_LOCK, &[&me]).await?;
            super::beat_in(&tx, owner, epoch).await?;
            me
        }
        Whose::Dead(names) => {
            let mut names = names.clone();
            names.sort();
            tx.execute(NAME_LOCK, &[&names]).await?;
            let lease = super::LEASE.as_secs_f64();
            let alive: Vec<String> = tx
                .query(
                    "SELECT name FROM instances WHERE name = ANY($1) AND beat_at > now() - make_interval(secs => $2)",
                    &[&names, &lease],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            names.retain(|n| !alive.contains(n));
            names
        }
    };
    let taken: Vec<String> = match whose {
        Whose::All => tx
            .query("UPDATE live_games SET owner = $1, epoch = $2 RETURNING room", &[&owner, &epoch])
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect(),
        Whose::Own | Whose::Dead(_) => tx
            .query(
                "UPDATE live_games SET owner = $1, epoch = $2 WHERE room IN
                   (SELECT room FROM live_games WHERE owner = ANY($3) FOR UPDATE SKIP LOCKED)
                 RETURNING room",
                &[&owner, &epoch, &owners],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect(),
    };
    let ended = tx
        .execute(
            "DELETE FROM live_games l USING games g WHERE g.id = l.game_id AND l.room = ANY($1)",
            &[&taken],
        )
        .await?;
    if ended > 0 {
        tracing::warn!(games = ended, "saved games that have a record were dropped: those games ended");
    }
    // Moves whose game is gone (it ended, or its start was never saved):
    // alone, any; in a cluster, another instance may be writing a game's
    // first moves, so only those of the games taken.
    let orphans = match whose {
        Whose::All => {
            "DELETE FROM live_moves m WHERE NOT EXISTS (SELECT 1 FROM live_games g WHERE g.room = m.room)"
        }
        Whose::Own | Whose::Dead(_) => {
            "DELETE FROM live_moves m WHERE m.room = ANY($1)
               AND NOT EXISTS (SELECT 1 FROM live_games g WHERE g.room = m.room)"
        }
    };
    match whose {
        Whose::All => tx.execute(orphans, &[]).await?,
        Whose::Own | Whose::Dead(_) => tx.execute(orphans, &[&taken]).await?,
    };
    let mut moves: FxHashMap<String, SavedMoves> = FxHashMap::default();
    let mut unused = Vec::new();
    let chunks = tx
        .query(
            "SELECT room, seq, cells, times FROM live_moves WHERE room = ANY($1) ORDER BY room, seq",
            &[&taken],
        )
        .await?;
    for r in chunks {
        let (room, seq, cells): (String, i32, Vec<u8>) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        let times: Option<Vec<u8>> = r.try_get(3)?;
        let (list, list_times) = moves.entry(room.clone()).or_default();
        // Moves after a gap (or a broken chunk) cannot be replayed; kept,
        // they would be taken for moves of this game's future.
        // A chunk's times, if any, are 8 bytes for each move's 4.
        let whole = cells.len() % 4 == 0 && times.as_ref().is_none_or(|t| t.len() == cells.len() * 2);
        if usize::try_from(seq).is_ok_and(|s| s == list.len()) && whole {
            list.extend(decode_cells(&cells));
            let times = times.unwrap_or_default();
            list_times
                .extend(times.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default())));
        } else {
            unused.push((room, seq));
        }
    }
    for (room, seq) in &unused {
        set_aside_moves(&tx, room, *seq).await?;
    }
    let mut games = Vec::new();
    let rows = tx
        .query(
            "SELECT room, size, win, turn_timeout_ms, x_name, x_account, x_bot, x_token,
                o_name, o_account, o_bot, o_token, clock_left_ms, started_at, game_id, house_level, clock, opening,
                tournament, berserk
             FROM live_games WHERE room = ANY($1)",
            &[&taken],
        )
        .await?;
    for r in rows {
        let room: String = r.get(0);
        match live_game(&r, &mut moves) {
            Ok(game) => games.push(game),
            Err(why) => set_aside(&tx, &room, &why).await?,
        }
    }
    let standings = standings(&tx, &games).await?;
    tx.commit().await?;
    Ok(Restored { games, standings })
}

/// The standings of the accounts in `games`, in those games' pools.
async fn standings(tx: &Transaction<'_>, games: &[LiveGame]) -> Result<Vec<(i64, Rules, Standing)>, Error> {
    let wanted: FxHashSet<(i64, usize, usize)> = games
        .iter()
        .flat_map(|g| g.players.iter().filter_map(move |p| p.account.map(|a| (a, g.rules.size, g.rules.win))))
        .collect();
    let accounts: Vec<i64> = wanted.iter().map(|w| w.0).collect();
    let rows = tx
        .query(
            "SELECT account, size, win, rating, rd, volatility, games FROM ratings WHERE account = ANY($1)",
            &[&accounts],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            // A row that cannot be read leaves its account's game rated
            // from the book or, failing that, from the database again.
            let account: i64 = r.try_get("account").ok()?;
            let rules = row::pool(r).ok()?;
            if !wanted.contains(&(account, rules.size, rules.win)) {
                return None;
            }
            Some((account, rules, row::standing(r).ok()?))
        })
        .collect())
}

/// Moves the row of `room`'s game, and its moves, into `quarantine`.
async fn set_aside(tx: &Transaction<'_>, room: &str, why: &str) -> Result<(), Error> {
    tracing::error!(
        room,
        reason = why,
        "a saved game cannot be read back: set aside in the quarantine table"
    );
    let now = unix_ms(std::time::SystemTime::now());
    tx.execute(
        "INSERT INTO quarantine (what, key, reason, data, at)
         SELECT 'live_games', $1, $2, row_to_json(l)::text, $3 FROM live_games l WHERE l.room = $1",
        &[&room, &why, &now],
    )
    .await?;
    tx.execute(
        "INSERT INTO quarantine (what, key, reason, data, at)
         SELECT 'live_moves', $1, 'its game cannot be read back', row_to_json(m)::text, $2
         FROM live_moves m WHERE m.room = $1",
        &[&room, &now],
    )
    .await?;
    tx.execute("DELETE FROM live_moves WHERE room = $1", &[&room]).await?;
    tx.execute("DELETE FROM live_games WHERE room = $1", &[&room]).await?;
    Ok(())
}

/// Moves a chunk of moves that cannot be replayed (after a gap, or broken)
/// into `quarantine`.
async fn set_aside_moves(tx: &Transaction<'_>, room: &str, seq: i32) -> Result<(), Error> {
    tracing::error!(
        room,
        seq,
        "saved moves cannot be replayed (a gap before them): set aside in the quarantine table"
    );
    let now = unix_ms(std::time::SystemTime::now());
    tx.execute(
        "INSERT INTO quarantine (what, key, reason, data, at)
         SELECT 'live_moves', $1, 'moves after a gap, or not whole moves', row_to_json(m)::text, $3
         FROM live_moves m WHERE m.room = $1 AND m.seq = $2",
        &[&room, &seq, &now],
    )
    .await?;
    tx.execute("DELETE FROM live_moves WHERE room = $1 AND seq = $2", &[&room, &seq]).await?;
    Ok(())
}

/// One saved game from its row (and its moves, taken from `moves`), or why
/// it cannot be played on.
/// A saved game's moves and, with a Fischer clock, the movers' times after them.
type SavedMoves = (Vec<[u16; 2]>, Vec<u64>);

fn live_game(r: &Row, moves: &mut FxHashMap<String, SavedMoves>) -> Result<LiveGame, String> {
    let room: String = r.get(0);
    let identity = |i: usize| -> Arc<Identity> {
        Arc::new(Identity {
            name: r.get::<_, String>(i).into(),
            account: r.get(i + 1),
            bot: r.get(i + 2),
            ratings: Box::default(),
        })
    };
    let token = |i: usize| -> Result<TokenHash, String> {
        TokenHash::try_from(r.get::<_, &[u8]>(i))
            .map_err(|_| "a resume token's hash is not 32 bytes".to_owned())
    };
    let ms = |i: usize| -> Result<Option<Duration>, String> {
        match r.get::<_, Option<i64>>(i) {
            None => Ok(None),
            Some(v) => {
                u64::try_from(v).map(|v| Some(Duration::from_millis(v))).map_err(|_| format!("{v} ms"))
            }
        }
    };
    let mut rules = saved_rules(r.get::<_, i32>(1).into(), r.get::<_, i32>(2).into())?;
    if let Some(text) = r.get::<_, Option<String>>(16) {
        rules.clock =
            Some(serde_json::from_str(&text).map_err(|_| format!("clock {text:?} is not a clock"))?);
    }
    let (moves, times) = moves.remove(&room).unwrap_or_default();
    let house = match r.get::<_, Option<String>>(15) {
        None => None,
        Some(level) => Some(HouseLevel::from_name(&level).ok_or(format!("house level {level:?}"))?),
    };
    let game = LiveGame {
        tournament: r.get::<_, Option<String>>(18).map(Arc::from),
        berserk: berserk_sides(r.get(19)),
        opening: usize::try_from(r.get::<_, i32>(17)).unwrap_or(0),
        id: r.get::<_, String>(14).into(),
        moves,
        times,
        room: room.into(),
        rules,
        turn_timeout: ms(3)?,
        players: [identity(4), identity(8)],
        tokens: [token(7)?, token(11)?],
        clock_left: ms(12)?,
        started_at_ms: r.get(13),
        house,
    };
    match game.unplayable() {
        Some(why) => Err(why.into()),
        None => Ok(game),
    }
}
