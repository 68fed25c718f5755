//! Games in progress in SQLite: the rows the fold's changes become, and
//! reading the saved games back at start (setting aside what cannot be read).

use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, Transaction, params};
use rustc_hash::FxHashMap;
use skillratings::glicko2::Glicko2Rating;

use crate::ratings::Standing;
use crate::rules::Rules;
use crate::session::account::{Identity, TokenHash};
use crate::store::Restored;
use crate::store::changes::LiveGame;
use crate::store::live::RoomChange;
use tictactoe_protocol::HouseLevel;

/// Writes one commit's changes to games in progress within `tx`, in order.
pub(super) fn write(tx: &Transaction<'_>, changes: &[RoomChange<'_>]) -> rusqlite::Result<()> {
    let mut del_game = tx.prepare_cached("DELETE FROM live_games WHERE room = ?1")?;
    let mut del_moves = tx.prepare_cached("DELETE FROM live_moves WHERE room = ?1")?;
    let mut game = tx.prepare_cached(
        "INSERT OR REPLACE INTO live_games (room, size, win, turn_timeout_ms, x_name, x_account, x_bot, x_token,
            o_name, o_account, o_bot, o_token, clock_left_ms, started_at, game_id, house_level)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?;
    let mut chunk =
        tx.prepare_cached("INSERT OR REPLACE INTO live_moves (room, first, cells) VALUES (?1, ?2, ?3)")?;
    let mut clock = tx.prepare_cached("UPDATE live_games SET clock_left_ms = ?2 WHERE room = ?1")?;
    for c in changes {
        if c.delete_game {
            del_game.execute([c.room])?;
        }
        if c.delete_moves {
            del_moves.execute([c.room])?;
        }
        if let Some(g) = c.start {
            let [x, o] = &g.players;
            game.execute(params![
                &*g.room,
                g.rules.size,
                g.rules.win,
                g.turn_timeout.map(millis),
                &*x.name,
                x.account,
                x.bot,
                &g.tokens[0][..],
                &*o.name,
                o.account,
                o.bot,
                &g.tokens[1][..],
                None::<i64>,
                g.started_at_ms,
                &*g.id,
                g.house.map(HouseLevel::name),
            ])?;
        }
        if !c.moves.is_empty() {
            chunk.execute(params![c.room, c.first, encode(c.moves)])?;
        }
        if let Some(left) = c.clock {
            clock.execute(params![c.room, left.map(millis)])?;
        }
    }
    Ok(())
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn encode(moves: &[[u16; 2]]) -> Vec<u8> {
    moves.iter().flat_map(|[r, c]| r.to_le_bytes().into_iter().chain(c.to_le_bytes())).collect()
}

fn decode(cells: &[u8]) -> impl Iterator<Item = [u16; 2]> + '_ {
    cells.chunks_exact(4).map(|b| [u16::from_le_bytes([b[0], b[1]]), u16::from_le_bytes([b[2], b[3]])])
}

/// Every saved game, and the standings of the accounts that play in them
/// (their games are rated when they end). Moves after a gap are dropped from
/// the file, so that the game goes on from its last contiguous move. A game
/// whose record exists has ended: its rows go. A row that cannot be read
/// back (a bad value) is logged and set aside in `quarantine` with its moves;
/// it never stops the start.
pub(super) fn load(conn: &mut Connection) -> rusqlite::Result<Restored> {
    let tx = conn.transaction()?;
    // Ended games are never live again (the record commits with the delete,
    // so this finds only what an import or a hand-made row left behind).
    let ended = tx.execute(
        "DELETE FROM live_moves WHERE room IN
            (SELECT l.room FROM live_games l JOIN games g ON g.id = l.game_id)",
        [],
    )?;
    let ended = ended + tx.execute("DELETE FROM live_games WHERE game_id IN (SELECT id FROM games)", [])?;
    if ended > 0 {
        tracing::warn!(
            rows = ended,
            "saved rows of games that have a record were dropped: those games ended"
        );
    }
    let mut moves: FxHashMap<String, Vec<[u16; 2]>> = FxHashMap::default();
    let mut gaps = Vec::new();
    let mut bad = Vec::new();
    {
        let mut stmt = tx.prepare("SELECT room, first, cells FROM live_moves ORDER BY room, first")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let read =
                || -> rusqlite::Result<(String, i64, Vec<u8>)> { Ok((r.get(0)?, r.get(1)?, r.get(2)?)) };
            let (room, first, cells) = match read() {
                Ok(row) => row,
                Err(e) => {
                    bad.push(Bad::of("live_moves", r, 3, e.to_string()));
                    continue;
                }
            };
            let list = moves.entry(room.clone()).or_default();
            if first == list.len() as i64 && cells.len() % 4 == 0 {
                list.extend(decode(&cells));
            } else {
                gaps.push((room, first));
            }
        }
    }
    for (room, first) in &gaps {
        tx.execute("DELETE FROM live_moves WHERE room = ?1 AND first = ?2", params![room, first])?;
    }
    let mut games = Vec::new();
    {
        let mut stmt = tx.prepare(
            "SELECT room, size, win, turn_timeout_ms, x_name, x_account, x_bot, x_token,
                o_name, o_account, o_bot, o_token, clock_left_ms, started_at, game_id, house_level
             FROM live_games",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            match live_game(r, &mut moves) {
                Ok(game) => games.push(game),
                Err(why) => bad.push(Bad::of("live_games", r, 16, why)),
            }
        }
    }
    for b in &bad {
        b.set_aside(&tx)?;
    }
    // Moves of games whose start was never saved cannot be played on.
    for room in moves.keys() {
        tx.execute("DELETE FROM live_moves WHERE room = ?1", [room])?;
    }
    let mut standings = Vec::new();
    {
        let mut stmt = tx.prepare_cached(
            "SELECT rating, rd, volatility, games FROM ratings WHERE account = ?1 AND size = ?2 AND win = ?3",
        )?;
        for g in &games {
            for account in g.players.iter().filter_map(|p| p.account) {
                let mut rows = stmt.query(params![account, g.rules.size, g.rules.win])?;
                if let Some(r) = rows.next()? {
                    let rating =
                        Glicko2Rating { rating: r.get(0)?, deviation: r.get(1)?, volatility: r.get(2)? };
                    standings.push((account, g.rules, Standing { rating, games: r.get(3)? }));
                }
            }
        }
    }
    tx.commit()?;
    Ok(Restored { games, standings })
}

/// One saved game from its row (and its moves, taken from `moves`), or why
/// it cannot be played on.
fn live_game(
    r: &rusqlite::Row<'_>,
    moves: &mut FxHashMap<String, Vec<[u16; 2]>>,
) -> Result<LiveGame, String> {
    let e = |e: rusqlite::Error| e.to_string();
    let room: String = r.get(0).map_err(e)?;
    let identity = |i: usize| -> Result<Arc<Identity>, String> {
        Ok(Arc::new(Identity {
            name: r.get::<_, String>(i).map_err(e)?.into(),
            account: r.get(i + 1).map_err(e)?,
            bot: r.get(i + 2).map_err(e)?,
            ratings: Box::default(),
        }))
    };
    let token = |i: usize| -> Result<TokenHash, String> {
        TokenHash::try_from(r.get::<_, Vec<u8>>(i).map_err(e)?.as_slice())
            .map_err(|_| "a resume token's hash is not 32 bytes".to_owned())
    };
    let ms = |i: usize| -> Result<Option<Duration>, String> {
        match r.get::<_, Option<i64>>(i).map_err(e)? {
            None => Ok(None),
            Some(v) => {
                u64::try_from(v).map(|v| Some(Duration::from_millis(v))).map_err(|_| format!("{v} ms"))
            }
        }
    };
    let size: i64 = r.get(1).map_err(e)?;
    let win: i64 = r.get(2).map_err(e)?;
    let (Ok(size), Ok(win)) = (usize::try_from(size), usize::try_from(win)) else {
        return Err(format!("size {size} or win {win} is not a board"));
    };
    tictactoe_protocol::Game::with_win(size, win)
        .map_err(|_| format!("size {size} and win {win} are not a board"))?;
    let house = match r.get::<_, Option<String>>(15).map_err(e)? {
        None => None,
        Some(level) => Some(HouseLevel::from_name(&level).ok_or(format!("house level {level:?}"))?),
    };
    let game = LiveGame {
        id: r.get::<_, String>(14).map_err(e)?.into(),
        moves: moves.remove(&room).unwrap_or_default(),
        room: room.into(),
        rules: Rules { size, win },
        turn_timeout: ms(3)?,
        players: [identity(4)?, identity(8)?],
        tokens: [token(7)?, token(11)?],
        clock_left: ms(12)?,
        started_at_ms: r.get(13).map_err(e)?,
        house,
    };
    let outside = game.moves.iter().any(|&[row, col]| usize::from(row) >= size || usize::from(col) >= size);
    if outside {
        return Err("a saved move is off the board".into());
    }
    Ok(game)
}

/// A saved row that cannot be read back, to be set aside.
struct Bad {
    what: &'static str,
    key: Option<String>,
    reason: String,
    data: serde_json::Value,
}

impl Bad {
    /// The first `columns` values of `r`, as JSON, with why they are bad.
    fn of(what: &'static str, r: &rusqlite::Row<'_>, columns: usize, reason: String) -> Bad {
        use rusqlite::types::ValueRef;
        let data = (0..columns)
            .map(|i| match r.get_ref(i) {
                Ok(ValueRef::Null) | Err(_) => serde_json::Value::Null,
                Ok(ValueRef::Integer(n)) => n.into(),
                Ok(ValueRef::Real(f)) => f.into(),
                Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into(),
                Ok(ValueRef::Blob(b)) => b.iter().map(|x| format!("{x:02x}")).collect::<String>().into(),
            })
            .collect();
        let key = match r.get_ref(0) {
            Ok(ValueRef::Text(t)) => Some(String::from_utf8_lossy(t).into_owned()),
            _ => None,
        };
        Bad { what, key, reason, data }
    }

    /// Moves the row (and, for a game, its moves) into `quarantine`.
    fn set_aside(&self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        tracing::error!(
            table = self.what,
            key = self.key.as_deref().unwrap_or("?"),
            reason = %self.reason,
            "a saved row cannot be read back: set aside in the quarantine table"
        );
        let now = crate::store::record::unix_ms(std::time::SystemTime::now());
        tx.execute(
            "INSERT INTO quarantine (what, key, reason, data, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![self.what, self.key, self.reason, self.data.to_string(), now],
        )?;
        let Some(key) = &self.key else { return Ok(()) };
        if self.what == "live_games" {
            // Its moves go along, each kept as it was.
            let mut stmt = tx.prepare("SELECT first, cells FROM live_moves WHERE room = ?1")?;
            let chunks = stmt
                .query_map([key], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            for (first, cells) in chunks {
                let hex: String = cells.iter().map(|x| format!("{x:02x}")).collect();
                let data = serde_json::json!([key, first, hex]).to_string();
                tx.execute(
                    "INSERT INTO quarantine (what, key, reason, data, at) VALUES ('live_moves', ?1, ?2, ?3, ?4)",
                    params![key, "its game cannot be read back", data, now],
                )?;
            }
            tx.execute("DELETE FROM live_moves WHERE room = ?1", [key])?;
        }
        match (self.what, self.data.get(1).and_then(serde_json::Value::as_i64)) {
            ("live_games", _) => tx.execute("DELETE FROM live_games WHERE room = ?1", [key])?,
            ("live_moves", Some(first)) => {
                tx.execute("DELETE FROM live_moves WHERE room = ?1 AND first = ?2", params![key, first])?
            }
            _ => 0,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::changes::LiveWrite;
    use crate::store::live::{Fold, HOLD};
    use std::time::Instant;

    fn game(room: &str) -> LiveGame {
        LiveGame {
            id: format!("G{room}").into(),
            room: room.into(),
            rules: Rules::classic(3),
            turn_timeout: Some(Duration::from_secs(30)),
            players: [Identity::guest("ann"), Identity::guest("bob")],
            tokens: [[1; 32], [2; 32]],
            moves: Vec::new(),
            clock_left: None,
            started_at_ms: 1_700_000_000_000,
            house: None,
        }
    }

    fn mv(room: &str, seq: u32, cell: [u16; 2]) -> LiveWrite {
        LiveWrite::Move { room: room.into(), seq, cell, at: Instant::now() }
    }

    /// Writes everything held, as the writer does at each commit.
    fn commit(conn: &mut Connection, fold: &mut Fold) {
        fold.take();
        let tx = conn.transaction().expect("tx");
        write(&tx, &fold.changes()).expect("write");
        tx.commit().expect("commit");
        fold.committed(Instant::now(), |_| {});
    }

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().expect("open");
        super::super::migrate(&mut conn).expect("migrate");
        conn
    }

    #[test]
    fn moves_committed_in_several_batches_come_back_in_order_with_the_clock() {
        let mut conn = db();
        let mut fold = Fold::default();
        fold.add(LiveWrite::Start(Box::new(game("R1"))));
        fold.add(mv("R1", 1, [0, 0]));
        commit(&mut conn, &mut fold);
        fold.add(mv("R1", 2, [1, 1]));
        fold.add(mv("R1", 3, [0, 1]));
        commit(&mut conn, &mut fold);
        fold.add(LiveWrite::Clock { room: "R1".into(), left: Some(Duration::from_millis(1234)) });
        commit(&mut conn, &mut fold);
        let games = load(&mut conn).expect("load").games;
        let mut want = game("R1");
        want.moves = vec![[0, 0], [1, 1], [0, 1]];
        want.clock_left = Some(Duration::from_millis(1234));
        assert_eq!(games, vec![want]);
    }

    #[test]
    fn a_game_that_ends_in_its_batch_writes_nothing_and_an_ended_game_is_gone() {
        let mut conn = db();
        let mut fold = Fold::default();
        fold.add(LiveWrite::Start(Box::new(game("R1"))));
        fold.add(LiveWrite::Start(Box::new(game("R2"))));
        fold.add(mv("R1", 1, [0, 0]));
        fold.end(&"R1".into());
        commit(&mut conn, &mut fold);
        let games = load(&mut conn).expect("load").games;
        assert_eq!(games.iter().map(|g| &*g.room).collect::<Vec<_>>(), ["R2"]);
        fold.add(mv("R2", 1, [2, 2]));
        commit(&mut conn, &mut fold);
        fold.end(&"R2".into());
        // A rematch in the same room starts afresh.
        fold.add(LiveWrite::Start(Box::new(game("R2"))));
        commit(&mut conn, &mut fold);
        let games = load(&mut conn).expect("load").games;
        assert_eq!(games, vec![game("R2")]);
    }

    /// A game that starts and ends between two commits leaves no live rows,
    /// and its moves count as durable with its record.
    #[test]
    fn a_game_between_two_commits_writes_no_live_rows() {
        let mut conn = db();
        let mut fold = Fold::default();
        let t0 = Instant::now();
        fold.add(LiveWrite::Start(Box::new(game("R1"))));
        fold.add(LiveWrite::Move { room: "R1".into(), seq: 1, cell: [0, 0], at: t0 });
        fold.add(LiveWrite::Start(Box::new(game("R2"))));
        fold.add(LiveWrite::Move { room: "R2".into(), seq: 1, cell: [1, 1], at: t0 + HOLD / 2 });
        fold.end(&"R2".into());
        fold.take();
        let tx = conn.transaction().expect("tx");
        write(&tx, &fold.changes()).expect("write");
        tx.commit().expect("commit");
        let mut ages = Vec::new();
        assert_eq!(fold.committed(t0 + HOLD, |age| ages.push(age)), 2);
        ages.sort();
        assert_eq!(ages, [HOLD / 2, HOLD]);
        assert!(fold.is_empty());
        let games = load(&mut conn).expect("load").games;
        assert_eq!(games.iter().map(|g| (&*g.room, g.moves.len())).collect::<Vec<_>>(), [("R1", 1)]);
        let live: i64 = conn.query_row("SELECT count(*) FROM live_games", [], |r| r.get(0)).expect("count");
        assert_eq!(live, 1, "R2 never reached the database");
    }

    /// A game saved by an earlier run of the server (restored at start)
    /// leaves nothing behind when it ends.
    #[test]
    fn a_restored_game_that_ends_leaves_no_rows() {
        let mut conn = db();
        let mut fold = Fold::default();
        fold.add(LiveWrite::Start(Box::new(game("R1"))));
        fold.add(mv("R1", 1, [0, 0]));
        commit(&mut conn, &mut fold);
        // The restart.
        let games = load(&mut conn).expect("load").games;
        let mut fold = Fold::saved(games.iter().map(|g| g.room.clone()));
        fold.add(mv("R1", 2, [1, 1]));
        commit(&mut conn, &mut fold);
        assert_eq!(load(&mut conn).expect("load").games[0].moves, [[0, 0], [1, 1]]);
        fold.end(&"R1".into());
        commit(&mut conn, &mut fold);
        assert_eq!(load(&mut conn).expect("load").games, []);
        let moves: i64 = conn.query_row("SELECT count(*) FROM live_moves", [], |r| r.get(0)).expect("count");
        assert_eq!(moves, 0);
    }

    #[test]
    fn moves_after_a_gap_are_not_kept() {
        let mut conn = db();
        let mut fold = Fold::default();
        fold.add(LiveWrite::Start(Box::new(game("R1"))));
        fold.add(mv("R1", 1, [0, 0]));
        commit(&mut conn, &mut fold);
        // The second move was lost on a full queue: what follows it cannot be replayed.
        fold.add(mv("R1", 3, [0, 1]));
        fold.add(mv("R1", 4, [2, 2]));
        commit(&mut conn, &mut fold);
        let games = load(&mut conn).expect("load").games;
        assert_eq!(games[0].moves, vec![[0, 0]]);
        // The game goes on from there: its next move is the second again.
        fold.add(mv("R1", 2, [1, 1]));
        commit(&mut conn, &mut fold);
        let games = load(&mut conn).expect("load again").games;
        assert_eq!(games[0].moves, vec![[0, 0], [1, 1]]);
    }
}
