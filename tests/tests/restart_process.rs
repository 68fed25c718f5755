//! Games in progress survive the real `ttt-server` binary going away:
//! SIGTERM saves them and closes with 1012, SIGKILL loses no move older than
//! 100 ms; started again on the same database, the players resume with their
//! tokens and finish, and the record judges consistent — also when another
//! process keeps the server's one core busy, which leaves its store's writer
//! (at idle priority) no time of its own. (A restart in process, and the
//! grace after it, is `restart.rs`.)

use std::time::Duration;

use serde_json::json;
use tictactoe_protocol::{Verdict, judge};
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::{TempDir, api, assert_judged};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// A process that keeps core 0 busy until dropped.
struct BusyCore(std::process::Child);

impl BusyCore {
    fn start() -> BusyCore {
        let spin = std::process::Command::new("taskset")
            .args(["-c", "0", "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("taskset (util-linux) runs a busy loop on core 0");
        BusyCore(spin)
    }
}

impl Drop for BusyCore {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Plays a game to its third move, stops the server with `signal`, starts it
/// again on the same file, resumes both players and finishes the game. With
/// `busy`, the first server runs on core 0 only, beside a busy loop there.
async fn a_game_outlives(signal: &str, busy: bool) {
    let dir = TempDir::new(&format!("restart-{signal}"));
    let db = dir.database("ttt.db").to_string();
    let args = ["--database", &db, "--reconnect-grace-ms", "30000", "--turn-timeout-ms", "60000"];
    let busy = busy.then(BusyCore::start);
    let server = match busy {
        Some(_) => ServerProcess::start_under(&["taskset", "-c", "0"], &args),
        None => ServerProcess::start(&args),
    };
    let (mut a, mut b) = (server.client().await, server.client().await);
    a.send(json!({"type": "quick_match"})).await;
    b.send(json!({"type": "quick_match"})).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    let (mut x, mut o, tx, to) = if sa["you"] == 1 {
        (a, b, sa["resume_token"].clone(), sb["resume_token"].clone())
    } else {
        (b, a, sb["resume_token"].clone(), sa["resume_token"].clone())
    };
    for (who, cell) in [(0, [0, 0]), (1, [1, 0]), (0, [0, 1])] {
        let c = if who == 0 { &mut x } else { &mut o };
        c.send(json!({"type": "move", "row": cell[0], "col": cell[1]})).await;
        x.recv_type("moved").await;
        o.recv_type("moved").await;
    }

    if signal == "KILL" {
        // The contract lets a crash lose the last 100 ms: this waits past
        // them (the time is what is tested, not a condition to wait for).
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    server.signal(signal);
    let want_close = if signal == "KILL" { None } else { Some(CloseCode::Restart) };
    for c in [&mut x, &mut o] {
        let (before, close) = c.until_close().await;
        assert!(!before.iter().any(|m| m["type"] == "game_over"), "{before:?}");
        assert_eq!(close, want_close);
    }
    let status = server.exits_within(Duration::from_secs(5)).await;
    if signal == "TERM" {
        assert!(status.success(), "exit status {status}");
    }
    drop(busy);

    let server = ServerProcess::start(&args);
    assert_eq!(server.restored, 1);
    let (mut x, mut o) = (server.client().await, server.client().await);
    x.send(json!({"type": "resume", "token": tx})).await;
    o.send(json!({"type": "resume", "token": to})).await;
    for (c, you) in [(&mut x, 1), (&mut o, 2)] {
        let state = c.recv_type("state").await;
        assert_eq!(state["moves"], json!([[0, 0], [1, 0], [0, 1]]));
        assert_eq!((state["you"].clone(), state["turn"].clone()), (json!(you), json!(2)));
        assert_eq!(state["clock_ms"].as_u64().map(|ms| ms > 50_000), Some(true), "{state}");
    }
    o.send(json!({"type": "move", "row": 1, "col": 1})).await;
    let moved = x.recv_type("moved").await;
    assert_eq!(moved["seq"], 4);
    x.send(json!({"type": "move", "row": 0, "col": 2})).await;
    let over = o.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")));
    assert_judged(3, &over);
    let id = over["game_id"].as_str().expect("a game id");
    let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200, "{record}");
    let moves: Vec<[usize; 2]> = serde_json::from_value(record["moves"].clone()).expect("moves");
    assert_eq!(moves, [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]]);
    assert_eq!(judge(3, 3, &moves), Ok(Verdict::A));
    assert_eq!((record["winner"].clone(), record["reason"].clone()), (json!(1), json!("line")));
    // Finished, the game is no longer saved: the next start restores nothing.
    server.signal("TERM");
    server.exits_within(Duration::from_secs(5)).await;
    let server = ServerProcess::start(&args);
    assert_eq!(server.restored, 0);
    drop(server);
}

#[tokio::test]
async fn sigterm_saves_the_game_closes_with_1012_and_it_goes_on_after_a_restart() {
    a_game_outlives("TERM", false).await;
}

#[tokio::test]
async fn sigkill_loses_no_move_older_than_100_ms() {
    a_game_outlives("KILL", false).await;
}

#[tokio::test]
async fn sigkill_loses_no_move_older_than_100_ms_when_another_process_keeps_the_core_busy() {
    a_game_outlives("KILL", true).await;
}
