//! Games in progress in the store: how the writer folds a batch of
//! [`LiveWrite`]s into as few rows as it can, and how the server reads the
//! games back at start.
//!
//! A move is one small job on the store's queue; the writer gathers them for
//! a few milliseconds and commits each room's new moves as one row. A game
//! that starts and ends within one batch costs no live rows at all: its
//! record is the only write.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{Connection, Transaction, params};
use rustc_hash::FxHashMap;
use skillratings::glicko2::Glicko2Rating;

use super::Restored;
use crate::account::{Identity, TokenHash};
use crate::live::{LiveGame, LiveWrite};
use crate::ratings::Standing;
use crate::rules::Rules;

/// What a batch does to one room's saved game.
#[derive(Debug, Default)]
struct Delta {
    /// The saved game (if any) goes first: it ended, or another began.
    reset: bool,
    /// A game to insert.
    start: Option<Box<LiveGame>>,
    /// 0-based index of `moves[0]`.
    first: u32,
    /// New moves, contiguous.
    moves: Vec<[u16; 2]>,
    /// A clock to save.
    clock: Option<Option<Duration>>,
}

/// A batch of live-game changes folded per room, ready for one transaction.
#[derive(Debug, Default)]
pub(super) struct Fold {
    rooms: FxHashMap<Arc<str>, Delta>,
    /// When each move in the batch was accepted.
    pub(super) accepted: Vec<Instant>,
}

impl Fold {
    /// Whether there is nothing to write.
    pub(super) fn is_empty(&self) -> bool {
        self.rooms.is_empty() && self.accepted.is_empty()
    }

    /// Adds one write.
    pub(super) fn add(&mut self, write: LiveWrite) {
        match write {
            LiveWrite::Start(game) => {
                let room = game.room.clone();
                *self.rooms.entry(room).or_default() =
                    Delta { reset: true, start: Some(game), ..Delta::default() };
            }
            LiveWrite::Move { room, seq, cell, at } => {
                self.accepted.push(at);
                let delta = self.rooms.entry(room).or_default();
                let index = seq.saturating_sub(1);
                if delta.moves.is_empty() {
                    delta.first = index;
                }
                // A move lost on a full queue leaves a gap: the moves after
                // it cannot be replayed, so they are not saved either.
                if delta.first + delta.moves.len() as u32 == index {
                    delta.moves.push(cell);
                }
            }
            LiveWrite::Clock { room, left } => self.rooms.entry(room).or_default().clock = Some(left),
        }
    }

    /// The game in `room` ended (its record is in the same batch): nothing of it stays.
    pub(super) fn end(&mut self, room: &Arc<str>) {
        *self.rooms.entry(room.clone()).or_default() = Delta { reset: true, ..Delta::default() };
    }

    /// Writes the batch within `tx`.
    pub(super) fn write(&self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        let mut del_game = tx.prepare_cached("DELETE FROM live_games WHERE room = ?1")?;
        let mut del_moves = tx.prepare_cached("DELETE FROM live_moves WHERE room = ?1")?;
        let mut game = tx.prepare_cached(
            "INSERT OR REPLACE INTO live_games (room, size, win, turn_timeout_ms, x_name, x_account, x_bot, x_token,
                o_name, o_account, o_bot, o_token, clock_left_ms, started_at, game_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )?;
        let mut chunk =
            tx.prepare_cached("INSERT OR REPLACE INTO live_moves (room, first, cells) VALUES (?1, ?2, ?3)")?;
        let mut clock = tx.prepare_cached("UPDATE live_games SET clock_left_ms = ?2 WHERE room = ?1")?;
        for (room, d) in &self.rooms {
            if d.reset {
                del_game.execute([&**room])?;
                del_moves.execute([&**room])?;
            }
            if let Some(g) = &d.start {
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
                ])?;
            }
            if !d.moves.is_empty() {
                chunk.execute(params![&**room, d.first, encode(&d.moves)])?;
            }
            if let Some(left) = d.clock {
                clock.execute(params![&**room, left.map(millis)])?;
            }
        }
        Ok(())
    }

    /// Forgets what was written.
    pub(super) fn clear(&mut self) {
        self.rooms.clear();
        self.accepted.clear();
    }
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
/// the file, so that the game goes on from its last contiguous move.
pub(super) fn load(conn: &mut Connection) -> rusqlite::Result<Restored> {
    let tx = conn.transaction()?;
    let mut moves: FxHashMap<String, Vec<[u16; 2]>> = FxHashMap::default();
    let mut gaps = Vec::new();
    {
        let mut stmt = tx.prepare("SELECT room, first, cells FROM live_moves ORDER BY room, first")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let room: String = r.get(0)?;
            let first: i64 = r.get(1)?;
            let cells: Vec<u8> = r.get(2)?;
            let list = moves.entry(room.clone()).or_default();
            if first == list.len() as i64 {
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
                o_name, o_account, o_bot, o_token, clock_left_ms, started_at, game_id FROM live_games",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let room: String = r.get(0)?;
            let identity = |i: usize| -> rusqlite::Result<Arc<Identity>> {
                Ok(Arc::new(Identity {
                    name: r.get::<_, String>(i)?.into(),
                    account: r.get(i + 1)?,
                    bot: r.get(i + 2)?,
                }))
            };
            let token = |i: usize| -> rusqlite::Result<Option<TokenHash>> {
                Ok(TokenHash::try_from(r.get::<_, Vec<u8>>(i)?.as_slice()).ok())
            };
            let (Some(xt), Some(ot)) = (token(7)?, token(11)?) else { continue };
            let ms = |i: usize| -> rusqlite::Result<Option<Duration>> {
                Ok(r.get::<_, Option<i64>>(i)?.map(|v| Duration::from_millis(u64::try_from(v).unwrap_or(0))))
            };
            games.push(LiveGame {
                id: r.get::<_, String>(14)?.into(),
                moves: moves.remove(&room).unwrap_or_default(),
                room: room.into(),
                rules: Rules { size: r.get(1)?, win: r.get(2)? },
                turn_timeout: ms(3)?,
                players: [identity(4)?, identity(8)?],
                tokens: [xt, ot],
                clock_left: ms(12)?,
                started_at_ms: r.get(13)?,
            });
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    fn mv(room: &str, seq: u32, cell: [u16; 2]) -> LiveWrite {
        LiveWrite::Move { room: room.into(), seq, cell, at: Instant::now() }
    }

    fn commit(conn: &mut Connection, fold: &mut Fold) {
        let tx = conn.transaction().expect("tx");
        fold.write(&tx).expect("write");
        tx.commit().expect("commit");
        fold.clear();
    }

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().expect("open");
        super::super::sqlite::migrate(&mut conn).expect("migrate");
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
