//! The store's handle over a real SQLite file: reads go to their own
//! connections, so they answer while the writer waits for the database.

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::store::record::GameRecord;
use crate::store::tournaments::{TournamentRow, TournamentWrite, scored};

/// A fresh directory for one test's database, removed at the end.
pub(super) struct Dir(pub(super) PathBuf);

impl Dir {
    pub(super) fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("ttt-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        Dir(dir)
    }

    /// The database file in it.
    pub(super) fn db(&self) -> PathBuf {
        self.0.join("ttt.db")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_answers_while_the_writer_waits_for_the_database() {
    let dir = Dir::new("reads");
    let file = dir.0.join("ttt.db");
    let Opened { store, thread, .. } =
        Store::open(&Database::Sqlite(file.clone()), None, &dir.0.join("spill"), "test", false)
            .expect("open");
    store.register("ann", false, [1; 32]).await.expect("ann");
    // Another connection holds the write lock: the writer's next commit
    // waits for it (up to its busy timeout).
    let blocker = rusqlite::Connection::open(&file).expect("open");
    blocker.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let writer = store.clone();
    let bob = tokio::spawn(async move { writer.register("bob", true, [2; 32]).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!bob.is_finished(), "the writer is waiting for the lock");
    // Bounded, not timed: reads queued behind the writer would wait for the
    // lock, which is released only after them.
    let reads = async {
        let answer = store.query(Query::Player("ANN".into())).await.expect("read").expect("ann");
        let QueryAnswer::Player(profile) = answer else { panic!("{answer:?}") };
        assert_eq!((profile.name.as_str(), profile.bot), ("ann", false));
        let (account, token) = store.account("ann").await.expect("read").expect("ann");
        assert_eq!((&*account.name, token), ("ann", [1; 32]));
        let board = store.query(Query::Leaderboard { rules: Rules::classic(3), limit: 5 }).await;
        assert!(matches!(board, Ok(Some(QueryAnswer::Leaderboard(_)))), "{board:?}");
        assert!(store.query(Query::Game("Nonesuch".into())).await.expect("read").is_none());
    };
    tokio::time::timeout(Duration::from_secs(30), reads)
        .await
        .expect("the reads did not wait for the writer");
    assert!(!bob.is_finished(), "the writer still waits for the lock: the reads did not go through it");
    blocker.execute_batch("COMMIT").expect("unlock");
    let bob = bob.await.expect("task").expect("bob registered once the lock is free");
    assert!(bob.bot);
    assert_eq!(store.health(), Health::Ok);
    drop(store);
    thread.join().expect("everything written");
}

#[tokio::test]
async fn without_a_database_reads_say_so() {
    let Opened { store, thread, .. } =
        Store::open(&Database::None, None, std::path::Path::new("."), "test", false).expect("open");
    assert_eq!(store.query(Query::Player("ann".into())).await, Err(StoreError::Disabled));
    assert_eq!(store.account("ann").await, Err(StoreError::Disabled));
    thread.join().expect("nothing to write");
}

/// A guests' game that X won.
fn record(id: &str) -> GameRecord {
    use crate::core::account::Identity;
    GameRecord {
        berserk: [false; 2],
        tournament: None,
        host: None,
        opening: 0,
        times: Vec::new(),
        id: id.into(),
        room: "ROOM1".into(),
        rules: Rules::classic(3),
        players: [Identity::guest("ann"), Identity::guest("bob")],
        moves: vec![[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]],
        winner: Some(tictactoe_protocol::Player::X),
        reason: tictactoe_protocol::EndReason::Line,
        line: None,
        ratings: None,
        started_at_ms: 1_764_052_289_123,
        ended_at_ms: 1_764_052_300_001,
    }
}

/// A room tells its players a game ended once its record is committed, or
/// after `STUCK` if the commit does not return: meanwhile the API shows the
/// record from memory, then from the database, and so does its tournament's
/// read (its standings count the game once, before and after).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_whose_commit_waits_is_shown_from_memory() {
    let dir = Dir::new("held");
    let file = dir.0.join("ttt.db");
    let Opened { store, thread, .. } =
        Store::open(&Database::Sqlite(file.clone()), None, &dir.0.join("spill"), "test", false)
            .expect("open");
    let terms = tictactoe_protocol::tournament::Terms {
        name: "Arena".into(),
        size: 3,
        win: 3,
        clock: tictactoe_protocol::Fischer { initial_ms: 60_000, increment_ms: 0 },
        duration_ms: 60_000,
    };
    let row = TournamentRow { id: "0TourNament0001".into(), terms, created_by: "ann".into(), starts_at: 1 };
    store.tournament_write(TournamentWrite::Create(row)).await.expect("created");
    let blocker = rusqlite::Connection::open(&file).expect("open");
    blocker.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let waiting = GameRecord {
        tournament: Some("0TourNament0001".into()),
        berserk: [true, false],
        ..record("Waiting1")
    };
    let recorded = store.record(Box::new(waiting.clone())).expect("the store writes");
    let mut committed = recorded.answer.expect("the store writes");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let read = store.query(Query::Game("Waiting1".into()));
    let held = tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("the read did not wait for the commit");
    let held = held.expect("read").expect("shown");
    assert!(
        matches!(committed.try_recv(), Err(tokio::sync::oneshot::error::TryRecvError::Empty)),
        "shown while its commit still waits"
    );
    let QueryAnswer::Game(game) = &held else { panic!("{held:?}") };
    assert_eq!((game.id.as_str(), game.winner, game.moves.len()), ("Waiting1", 1, 5));
    assert_eq!((game.tournament.as_deref(), game.berserk), (Some("0TourNament0001"), [true, false]));
    let read = tokio::time::timeout(Duration::from_secs(30), store.tournament("0TourNament0001"));
    let data = read.await.expect("the read did not wait").expect("read").expect("the tournament");
    assert_eq!(data.games, [scored(&waiting)]);
    assert_eq!(data.games[0].moves, [3, 2]);
    blocker.execute_batch("COMMIT").expect("unlock");
    // A guests' game is not rated.
    assert_eq!(committed.await.expect("told"), Outcome::Written(None));
    let kept = store.query(Query::Game("Waiting1".into())).await.expect("read").expect("kept");
    assert_eq!(kept, held, "the database's answer is the one shown from memory");
    let data = store.tournament("0TourNament0001").await.expect("read").expect("the tournament");
    assert_eq!(data.games, [scored(&waiting)], "once, from the database now");
    drop(store);
    thread.join().expect("everything written");
}

/// The writer owns the ratings: a game between two accounts is rated as
/// the writer takes its record, from the stored standings, and the next
/// game of the same accounts is rated from the first one's result, committed
/// or not; each room hears the ratings its record keeps once it is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_rated_when_the_writer_takes_it_and_its_room_hears_the_committed_ratings() {
    use crate::core::account::Identity;
    use crate::ratings::{Standing, rate};
    let dir = Dir::new("rated");
    let Opened { store, thread, .. } =
        Store::open(&Database::Sqlite(dir.db()), None, &dir.0.join("spill"), "test", false).expect("open");
    let ann = store.register("ann", false, [1; 32]).await.expect("ann");
    let bob = store.register("bob", false, [2; 32]).await.expect("bob");
    let player = |a: &Account| {
        Arc::new(Identity { name: a.name.clone(), account: Some(a.id), bot: false, ratings: Box::default() })
    };
    let game = |id: &str| GameRecord { players: [player(&ann), player(&bob)], ..record(id) };
    let blocker = rusqlite::Connection::open(dir.db()).expect("open");
    blocker.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let mut first =
        store.record(Box::new(game("Rated001"))).expect("queued").answer.expect("the store writes");
    // The second game starts from the first's result, not yet committed.
    let second = store.record(Box::new(game("Rated002"))).expect("queued").answer.expect("the store writes");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(first.try_recv(), Err(tokio::sync::oneshot::error::TryRecvError::Empty)));
    blocker.execute_batch("COMMIT").expect("unlock");
    let expected = rate([Standing::default(); 2], Some(0));
    let after = rate([expected[0].after, expected[1].after], Some(0));
    let told = |r| tokio::time::timeout(Duration::from_secs(30), r);
    assert_eq!(told(first).await.expect("in time").expect("told"), Outcome::Written(Some(expected)));
    assert_eq!(told(second).await.expect("in time").expect("told"), Outcome::Written(Some(after)));
    // A sign-in reads the committed standings: both games'.
    let (account, _) = store.account("ann").await.expect("read").expect("ann");
    assert_eq!(account.standings, [(Rules::classic(3), after[0].after)]);
    drop(store);
    thread.join().expect("everything written");
}

/// Asserts that the `.sql` files in `dir` are `listed`, in order, numbered
/// from 1 without a gap: a migration is never left out or applied twice.
pub(crate) fn assert_migrations(dir: &std::path::Path, listed: &[&str]) {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("migrations")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".sql"))
        .collect();
    files.sort();
    assert_eq!(files, listed);
    for (i, name) in files.iter().enumerate() {
        assert!(name.starts_with(&format!("{:04}_", i + 1)), "{name}");
    }
}
