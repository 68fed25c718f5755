//! The SQLite backend over real files: versions, readers beside the
//! writer, and records read back as they were held.

use std::sync::Arc;

use tictactoe_protocol::{EndReason, Player};

use super::*;
use crate::core::account::Identity;
use crate::ratings::{Standing, rate};
use crate::store::backend::{NewAccount, Reader};
use crate::store::live::Fold;
use crate::store::tests::Dir;
use tictactoe_protocol::Rules;

fn record(id: &str, rated: bool) -> GameRecord {
    GameRecord {
        berserk: [false; 2],
        tournament: None,
        host: None,
        opening: 0,
        times: Vec::new(),
        id: id.into(),
        room: "ROOM1".into(),
        rules: Rules::classic(3),
        players: [
            Arc::new(Identity {
                name: "ann".into(),
                account: rated.then_some(1),
                bot: false,
                ratings: Box::default(),
            }),
            Arc::new(Identity {
                name: "bob".into(),
                account: rated.then_some(2),
                bot: true,
                ratings: Box::default(),
            }),
        ],
        moves: vec![[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]],
        winner: Some(Player::X),
        reason: if rated { EndReason::Line } else { EndReason::Resign },
        line: None,
        ratings: rated.then(|| rate([Standing::default(); 2], Some(0))),
        started_at_ms: 1_764_052_289_123,
        ended_at_ms: 1_764_052_300_001,
    }
}

fn accounts() -> Vec<NewAccount> {
    ["ann", "bob"]
        .iter()
        .enumerate()
        .map(|(i, n)| NewAccount { name: (*n).into(), bot: i == 1, token: [i as u8; 32] })
        .collect()
}

#[test]
fn the_schema_version_is_recorded_and_a_newer_file_is_refused() {
    let dir = Dir::new("version");
    drop(SqliteBackend::open(&dir.db(), None).expect("open"));
    let conn = Connection::open(dir.db()).expect("open");
    let version: usize = conn.pragma_query_value(None, "user_version", |r| r.get(0)).expect("version");
    assert_eq!(version, MIGRATIONS.len());
    // Opening again applies nothing and keeps the version.
    drop(SqliteBackend::open(&dir.db(), None).expect("open again"));
    conn.pragma_update(None, "user_version", MIGRATIONS.len() + 1).expect("bump");
    let refused = SqliteBackend::open(&dir.db(), None).err().expect("a newer file is refused");
    assert!(refused.contains("newer") && refused.contains(&(MIGRATIONS.len() + 1).to_string()), "{refused}");
}

/// A file of a server before tournaments (version 8) is migrated at open:
/// its records read back as games of no tournament, nobody berserk.
#[test]
fn a_file_from_before_tournaments_opens_and_its_records_are_in_none() {
    let dir = Dir::new("before-tournaments");
    {
        let mut conn = Connection::open(dir.db()).expect("open");
        let tx = conn.transaction().expect("tx");
        for (_, sql) in &MIGRATIONS[..8] {
            tx.execute_batch(sql).expect("an older migration");
        }
        tx.pragma_update(None, "user_version", 8).expect("version");
        write_old_record(&tx);
        tx.commit().expect("commit");
    }
    let db = SqliteBackend::open(&dir.db(), None).expect("an older file opens");
    let mut reader = db.reader().expect("reader");
    let game = reader.game("OldGame1").expect("read").expect("the older record");
    assert_eq!((game.tournament, game.berserk), (None, [false; 2]));
    assert_eq!(game.moves, [[0, 0], [1, 1]]);
    assert!(reader.tournament("OldGame1").expect("read").is_none());
    assert!(reader.tournaments(0).expect("read").is_empty());
}

/// A record as a server before tournaments wrote it.
fn write_old_record(tx: &rusqlite::Transaction<'_>) {
    tx.execute(
        "INSERT INTO games (id, room, size, win, x_name, x_bot, o_name, o_bot, moves, winner, reason,
            rated, started_at, ended_at, opening)
         VALUES ('OldGame1', 'ROOM1', 3, 3, 'ann', 0, 'bob', 0, '[[0,0],[1,1]]', 0, 'draw', 0, 1, 2, 0)",
        [],
    )
    .expect("an older record");
}

/// Every SQL file in `server/migrations/` (Postgres's are in a folder of
/// their own) is in the list, in order, numbered
/// from 1 without a gap: the next backend mirrors them one for one.
#[test]
fn the_migration_files_are_numbered_and_all_applied() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    crate::store::tests::assert_migrations(&dir, &MIGRATIONS.map(|(name, _)| name));
}

/// A reader answers from the last commit at once while the writer holds
/// a transaction open: API reads never wait behind a batch.
#[test]
fn a_read_does_not_wait_for_the_writers_transaction() {
    let dir = Dir::new("readers");
    let mut db = SqliteBackend::open(&dir.db(), None).expect("open");
    let fold = Fold::default();
    let games = [record("Committd", true)];
    let made = db.commit(&Commit::new(&[], &accounts(), &[], &fold)).expect("accounts").accounts;
    assert!(made.iter().all(Result::is_ok), "{made:?}");
    db.commit(&Commit::new(&games, &[], &[], &fold)).expect("games");
    let mut reader = db.reader().expect("reader");
    // The writer is in the middle of a batch.
    let tx = db.conn.transaction().expect("begin");
    write::insert_games(&tx, &[record("Pending1", false)]).expect("insert");
    // The writer's transaction is still open (same thread): a reader that
    // waited for it would never answer, and would fail at its busy timeout.
    let game = reader.game("Committd").expect("read").expect("the committed game");
    assert!(reader.game("Pending1").expect("read").is_none(), "an uncommitted game is not seen");
    assert!(reader.player("ann").expect("read").is_some());
    assert_eq!(reader.leaderboard(Rules::classic(3), 10).expect("read").players.len(), 2);
    tx.commit().expect("commit");
    assert!(reader.game("Pending1").expect("read").is_some(), "committed now");
    // The database's answer is the one a held record gives.
    assert_eq!(game, crate::store::unwritten::shown(&games[0]));
}

#[test]
fn a_record_reads_back_as_it_was_held() {
    let dir = Dir::new("held-rows");
    let mut db = SqliteBackend::open(&dir.db(), None).expect("open");
    let in_tournament = GameRecord {
        tournament: Some("0TourNament0001".into()),
        berserk: [true, false],
        ..record("Rated001", true)
    };
    let games = [record("Unrated1", false), in_tournament];
    db.commit(&Commit::new(&[], &accounts(), &[], &Fold::default())).expect("accounts");
    db.commit(&Commit::new(&games, &[], &[], &Fold::default())).expect("games");
    let mut reader = db.reader().expect("reader");
    for g in &games {
        let read = reader.game(&g.id).expect("read").expect("found");
        assert_eq!(read, crate::store::unwritten::shown(g));
        assert_eq!(
            serde_json::to_string(&read).ok(),
            serde_json::to_string(&crate::store::unwritten::shown(g)).ok()
        );
    }
    let page = reader.player_games("ANN", 1, None).expect("read").expect("an account");
    assert_eq!(page.games.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), ["Rated001"]);
    let older = reader.player_games("ann", 5, Some("Rated001")).expect("read").expect("an account");
    assert!(older.games.is_empty(), "the unrated game has no account of ann's");
    let profile = reader.player("ann").expect("read").expect("an account");
    assert_eq!((profile.results.wins, profile.ratings["3"].games), (1, 1));
    assert!(reader.player("nobody").expect("read").is_none());
    assert!(reader.player_games("nobody", 5, None).expect("read").is_none());
    let (account, hash) = reader.account("ANN").expect("read").expect("found");
    assert_eq!((&*account.name, hash, account.standings.len()), ("ann", [0; 32], 1));
}
