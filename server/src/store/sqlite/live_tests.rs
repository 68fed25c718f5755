//! The games in progress SQLite keeps (`live`): written commit by commit,
//! read back at a start, snapshotted, and what cannot be read set aside.

use super::journal::{self, Journal};
use super::live::*;
use crate::core::account::Identity;
use crate::store::changes::LiveGame;
use crate::store::changes::LiveWrite;
use crate::store::live::{Fold, HOLD};
use rusqlite::{Connection, params};
use std::time::{Duration, Instant};
use tictactoe_protocol::Rules;

fn game(room: &str) -> LiveGame {
    LiveGame {
        berserk: [false; 2],
        tournament: None,
        opening: 0,
        times: Vec::new(),
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
    LiveWrite::Move { left: None, room: room.into(), seq, cell, at: Instant::now() }
}

/// A database and the journal its writer keeps, as the backend holds them.
struct Db {
    conn: Connection,
    journal: Journal,
}

impl Db {
    fn new() -> Db {
        let mut conn = Connection::open_in_memory().expect("open");
        super::migrate(&mut conn).expect("migrate");
        Db { conn, journal: Journal::default() }
    }

    /// Writes everything held, as the writer does at each commit.
    fn commit(&mut self, fold: &mut Fold) {
        fold.take();
        let tx = self.conn.transaction().expect("tx");
        let changes = fold.changes();
        let bytes = write(&tx, &changes).expect("write");
        tx.commit().expect("commit");
        self.journal.committed(&changes, bytes);
        // The journal follows the changes as a replay of its rows would.
        assert_eq!(self.journal.games, replay(&self.conn), "the journal is what its rows replay to");
        fold.committed(Instant::now(), |_| {});
    }

    /// What a start reads back (the journal is then just that).
    fn load(&mut self) -> Vec<LiveGame> {
        let (restored, journal) = load(&mut self.conn).expect("load");
        self.journal = journal;
        let mut games = restored.games;
        games.sort_by(|a, b| a.room.cmp(&b.room));
        games
    }

    fn rows(&self) -> i64 {
        self.conn.query_row("SELECT count(*) FROM live_log", [], |r| r.get(0)).expect("count")
    }

    fn quarantined(&self) -> Vec<(String, String)> {
        let mut stmt = self.conn.prepare("SELECT what, reason FROM quarantine ORDER BY id").expect("select");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("query").map(|r| r.expect("row")).collect()
    }
}

#[test]
fn moves_committed_in_several_batches_come_back_in_order_with_the_clock() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    fold.add(mv("R1", 1, [0, 0]));
    db.commit(&mut fold);
    fold.add(mv("R1", 2, [1, 1]));
    fold.add(mv("R1", 3, [0, 1]));
    db.commit(&mut fold);
    fold.add(LiveWrite::Clock { room: "R1".into(), left: Some(Duration::from_millis(1234)) });
    db.commit(&mut fold);
    assert_eq!(db.rows(), 3, "a row per commit");
    let mut want = game("R1");
    want.moves = vec![[0, 0], [1, 1], [0, 1]];
    want.clock_left = Some(Duration::from_millis(1234));
    assert_eq!(db.journal.games.values().cloned().collect::<Vec<_>>(), [want.clone()]);
    assert_eq!(db.load(), vec![want.clone()]);
    // Read back, the journal is one snapshot of the same game.
    assert_eq!(db.rows(), 1);
    assert_eq!(db.load(), vec![want]);
}

#[test]
fn a_tournament_game_keeps_its_tournament_and_berserk_through_commits_restarts_and_snapshots() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    let started = LiveGame { tournament: Some("0TourNament0001".into()), ..game("T1") };
    fold.add(LiveWrite::Start(Box::new(started.clone())));
    fold.add(LiveWrite::Berserk { room: "T1".into(), player: tictactoe_protocol::Player::X });
    fold.add(mv("T1", 1, [0, 0]));
    // Another game in the same commit, in no tournament, nobody berserk.
    fold.add(LiveWrite::Start(Box::new(game("R2"))));
    db.commit(&mut fold);
    // Player 2 goes berserk before its first move, in a later commit.
    fold.add(LiveWrite::Berserk { room: "T1".into(), player: tictactoe_protocol::Player::O });
    fold.add(mv("T1", 2, [1, 1]));
    db.commit(&mut fold);
    let want = LiveGame { berserk: [true, true], moves: vec![[0, 0], [1, 1]], ..started };
    let games = db.load();
    assert_eq!(games, vec![game("R2"), want.clone()]);
    // Read back from the snapshot the first load left.
    assert_eq!(db.rows(), 1);
    assert_eq!(db.load(), vec![game("R2"), want.clone()]);
    let snapshot = journal::encode_snapshot([&want].into_iter());
    let (_, entries) = journal::decode(&snapshot).expect("decodes");
    let mut replayed = Default::default();
    for entry in entries {
        journal::apply(&mut replayed, entry);
    }
    assert_eq!(replayed.into_values().collect::<Vec<_>>(), [want]);
}

#[test]
fn a_game_that_ends_in_its_batch_writes_nothing_and_an_ended_game_is_gone() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    fold.add(LiveWrite::Start(Box::new(game("R2"))));
    fold.add(mv("R1", 1, [0, 0]));
    fold.end(&"R1".into());
    db.commit(&mut fold);
    assert_eq!(db.load().iter().map(|g| &*g.room).collect::<Vec<_>>(), ["R2"]);
    let mut fold = Fold::saved(["R2".into()]);
    fold.add(mv("R2", 1, [2, 2]));
    db.commit(&mut fold);
    fold.end(&"R2".into());
    // A rematch in the same room starts afresh.
    fold.add(LiveWrite::Start(Box::new(game("R2"))));
    db.commit(&mut fold);
    assert_eq!(db.load(), vec![game("R2")]);
}

/// A game that starts and ends between two commits costs the journal
/// nothing, and its moves count as durable with its record.
#[test]
fn a_game_between_two_commits_writes_nothing_to_the_journal() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    let t0 = Instant::now();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    fold.add(LiveWrite::Move { left: None, room: "R1".into(), seq: 1, cell: [0, 0], at: t0 });
    fold.add(LiveWrite::Start(Box::new(game("R2"))));
    fold.add(LiveWrite::Move { left: None, room: "R2".into(), seq: 1, cell: [1, 1], at: t0 + HOLD / 2 });
    fold.end(&"R2".into());
    fold.take();
    let tx = db.conn.transaction().expect("tx");
    assert!(write(&tx, &fold.changes()).expect("write") > 0, "R1's changes");
    tx.commit().expect("commit");
    let row: Vec<u8> = db.conn.query_row("SELECT data FROM live_log", [], |r| r.get(0)).expect("the row");
    let (_, entries) = journal::decode(&row).expect("decode");
    assert_eq!(entries.len(), 2, "R1's start and move, nothing of R2: {entries:?}");
    let mut ages = Vec::new();
    assert_eq!(fold.committed(t0 + HOLD, |age| ages.push(age)), 2);
    ages.sort();
    assert_eq!(ages, [HOLD / 2, HOLD]);
    assert!(fold.is_empty());
    assert_eq!(db.load().iter().map(|g| (&*g.room, g.moves.len())).collect::<Vec<_>>(), [("R1", 1)]);
    // A commit with no changes to games in progress adds no row.
    let tx = db.conn.transaction().expect("tx");
    assert_eq!(write(&tx, &[]).expect("write"), 0);
    tx.commit().expect("commit");
    assert_eq!(db.rows(), 1);
}

/// A game saved by an earlier run of the server (restored at start)
/// leaves nothing behind when it ends.
#[test]
fn a_restored_game_that_ends_leaves_nothing() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    fold.add(mv("R1", 1, [0, 0]));
    db.commit(&mut fold);
    // The restart.
    let games = db.load();
    let mut fold = Fold::saved(games.iter().map(|g| g.room.clone()));
    fold.add(mv("R1", 2, [1, 1]));
    db.commit(&mut fold);
    assert_eq!(db.load()[0].moves, [[0, 0], [1, 1]]);
    fold.end(&"R1".into());
    db.commit(&mut fold);
    assert!(db.journal.games.is_empty());
    assert_eq!(db.load(), []);
    assert_eq!(db.rows(), 0);
}

#[test]
fn moves_after_a_gap_are_not_kept() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    fold.add(mv("R1", 1, [0, 0]));
    db.commit(&mut fold);
    // The second move was lost on a full queue: what follows it cannot be replayed.
    fold.add(mv("R1", 3, [0, 1]));
    fold.add(mv("R1", 4, [2, 2]));
    db.commit(&mut fold);
    assert_eq!(db.load()[0].moves, vec![[0, 0]]);
    // The game goes on from there: its next move is the second again.
    fold.add(mv("R1", 2, [1, 1]));
    db.commit(&mut fold);
    assert_eq!(db.load()[0].moves, vec![[0, 0], [1, 1]]);
}

/// The snapshot that replaces a long journal holds the same games.
#[test]
fn a_snapshot_replaces_the_rows_with_the_same_games() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    for i in 0..50u16 {
        let room = format!("R{i}");
        fold.add(LiveWrite::Start(Box::new(game(&room))));
        db.commit(&mut fold);
        fold.add(mv(&room, 1, [i % 3, 0]));
        if i % 2 == 0 {
            fold.end(&room.as_str().into());
        }
        db.commit(&mut fold);
    }
    assert_eq!(db.rows(), 100);
    let before: Vec<LiveGame> = {
        let mut g: Vec<_> = db.journal.games.values().cloned().collect();
        g.sort_by(|a, b| a.room.cmp(&b.room));
        g
    };
    assert_eq!(before.len(), 25);
    snapshot(&mut db.conn, &mut db.journal).expect("snapshot");
    assert_eq!(db.rows(), 1);
    assert_eq!(db.load(), before);
}

/// A row that cannot be decoded is set aside; the other rows' games load.
#[test]
fn a_bad_row_is_set_aside_and_the_rest_loads() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    db.commit(&mut fold);
    db.conn.execute("INSERT INTO live_log (data) VALUES (x'01ff00')", []).expect("bad row");
    fold.add(mv("R1", 1, [1, 1]));
    db.commit(&mut fold);
    let games = db.load();
    assert_eq!(games.iter().map(|g| (&*g.room, g.moves.clone())).collect::<Vec<_>>(), [("R1", vec![[1, 1]])]);
    let set_aside = db.quarantined();
    assert_eq!(set_aside.len(), 1, "{set_aside:?}");
    assert_eq!(set_aside[0].0, "live_log");
    assert!(set_aside[0].1.contains("unknown"), "{set_aside:?}");
}

/// A game with a move off its board cannot be played on: set aside.
#[test]
fn a_game_with_a_move_off_the_board_is_set_aside() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    fold.add(LiveWrite::Start(Box::new(game("R2"))));
    fold.add(mv("R1", 1, [7, 0]));
    fold.add(mv("R2", 1, [2, 2]));
    db.commit(&mut fold);
    assert_eq!(db.load().iter().map(|g| &*g.room).collect::<Vec<_>>(), ["R2"]);
    assert_eq!(db.quarantined(), [("live_log".to_owned(), "a saved move is off the board".to_owned())]);
}

/// A game whose record was kept (say, imported from a spill file while
/// its journal still held it) has ended: it is not restored.
#[test]
fn a_saved_game_with_a_record_is_not_restored() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    fold.add(LiveWrite::Start(Box::new(game("R1"))));
    fold.add(LiveWrite::Start(Box::new(game("R2"))));
    db.commit(&mut fold);
    db.conn
        .execute(
            "INSERT INTO games (id, room, size, win, x_name, x_bot, o_name, o_bot, moves, winner, reason,
                rated, started_at, ended_at)
             VALUES ('GR1', 'R1', 3, 3, 'ann', 0, 'bob', 0, '[]', 0, 'aborted', 0, 0, 0)",
            [],
        )
        .expect("record");
    assert_eq!(db.load().iter().map(|g| &*g.room).collect::<Vec<_>>(), ["R2"]);
}

/// A file from a server before the journal: its games in progress move
/// into the journal at the first start, and the old tables go.
#[test]
fn games_in_the_old_tables_move_into_the_journal() {
    let mut conn = Connection::open_in_memory().expect("open");
    for (_, sql) in &super::MIGRATIONS[..5] {
        conn.execute_batch(sql).expect("old migration");
    }
    conn.pragma_update(None, "user_version", 5).expect("version");
    conn.execute(
        "INSERT INTO live_games (room, size, win, turn_timeout_ms, x_name, x_account, x_bot, x_token,
            o_name, o_account, o_bot, o_token, clock_left_ms, started_at, game_id, house_level)
         VALUES ('R1', 3, 3, 30000, 'ann', NULL, 0, ?1, 'bob', NULL, 0, ?2, 1234, 1700000000000, 'GR1', NULL)",
        params![&[1u8; 32][..], &[2u8; 32][..]],
    )
    .expect("old game");
    conn.execute("INSERT INTO live_moves (room, first, cells) VALUES ('R1', 0, x'0000000001000100')", [])
        .expect("old moves");
    super::migrate(&mut conn).expect("migrate");
    let mut db = Db { conn, journal: Journal::default() };
    let mut want = game("R1");
    want.moves = vec![[0, 0], [1, 1]];
    want.clock_left = Some(Duration::from_millis(1234));
    assert_eq!(db.load(), vec![want.clone()]);
    let old: i64 = db
        .conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE name IN ('live_games', 'live_moves')", [], |r| {
            r.get(0)
        })
        .expect("tables");
    assert_eq!(old, 0, "the old tables went");
    assert_eq!(db.load(), vec![want], "and the journal holds the game");
}

/// The games in progress that replaying `conn`'s journal rows gives (a row
/// that cannot be read is skipped, as a start sets it aside).
fn replay(conn: &Connection) -> rustc_hash::FxHashMap<std::sync::Arc<str>, LiveGame> {
    let mut games = rustc_hash::FxHashMap::default();
    let mut stmt = conn.prepare("SELECT data FROM live_log ORDER BY seq").expect("select");
    for row in stmt.query_map([], |r| r.get::<_, Vec<u8>>(0)).expect("query") {
        let Ok((kind, entries)) = journal::decode(&row.expect("row")) else { continue };
        if kind == crate::store::sqlite::journal_bytes::SNAPSHOT {
            games.clear();
        }
        for entry in entries {
            journal::apply(&mut games, entry);
        }
    }
    games
}

/// A game on a Fischer clock from an opening, its moves and times over
/// several commits with a move lost between them: the writer's journal
/// follows the changes as a replay of its rows does (checked at every
/// commit), and the game comes back from its last contiguous move.
#[test]
fn a_fischer_game_from_an_opening_is_journaled_as_its_rows_replay() {
    let mut db = Db::new();
    let mut fold = Fold::default();
    let clock = tictactoe_protocol::Fischer::checked(Some(180_000), Some(2_000)).expect("clock");
    let started = LiveGame {
        rules: tictactoe_protocol::Rules { clock: Some(clock), ..Rules::classic(15) },
        turn_timeout: None,
        opening: 2,
        house: Some(tictactoe_protocol::HouseLevel::Perfect),
        ..game("F1")
    };
    let timed = |seq: u32, cell: [u16; 2], left: u64| LiveWrite::Move {
        left: Some(left),
        room: "F1".into(),
        seq,
        cell,
        at: Instant::now(),
    };
    fold.add(LiveWrite::Start(Box::new(started.clone())));
    fold.add(timed(1, [7, 7], 180_000));
    fold.add(timed(2, [7, 8], 180_000));
    db.commit(&mut fold);
    fold.add(timed(3, [8, 8], 171_500));
    db.commit(&mut fold);
    // The 4th move never reached the store: the 5th cannot follow.
    fold.add(timed(5, [9, 9], 150_000));
    db.commit(&mut fold);
    let want =
        LiveGame { moves: vec![[7, 7], [7, 8], [8, 8]], times: vec![180_000, 180_000, 171_500], ..started };
    assert_eq!(db.journal.games.values().collect::<Vec<_>>(), [&want]);
    assert_eq!(db.load(), vec![want]);
}
