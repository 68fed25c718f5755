//! Connect-k over real sockets: a win length shorter than the board, wins on
//! off-centre diagonals, runs joined from both sides, `invalid_win`, pairing
//! only by equal rules, and the classic rule when no `win` is given.

use serde_json::json;
use tictactoe_protocol::ErrorCode;
use tictactoe_tests::{TestServer, assert_judged_k, play_out, quick_pair, quick_pair_k, test_config};

#[tokio::test]
async fn an_off_centre_diagonal_wins_four_in_a_row_on_seven_by_seven() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair_k(&server, 7, 4).await;
    // X: (2,1) (3,2) (4,3) (5,4) — the diagonal col - row = -1; O plays the top row.
    let moves = [[2, 1], [0, 0], [3, 2], [0, 2], [4, 3], [0, 4], [5, 4]];
    let over = play_out(&mut p, &moves).await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")));
    assert_eq!(over["line"], json!({"kind": "diag", "index": -1, "cells": [[2, 1], [3, 2], [4, 3], [5, 4]]}));
    assert_judged_k(7, 4, &over);
    server.shutdown().await;
}

#[tokio::test]
async fn an_anti_diagonal_run_joined_from_both_sides_wins_whole() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair_k(&server, 8, 4).await;
    // X builds (1,6) (2,5) and (4,3) (5,2) on the anti-diagonal row + col = 7,
    // then joins them with (3,4): a run of five, reported whole, top to bottom.
    let moves = [[1, 6], [7, 0], [2, 5], [7, 1], [4, 3], [7, 3], [5, 2], [6, 6], [3, 4]];
    let over = play_out(&mut p, &moves).await;
    let cells = json!([[1, 6], [2, 5], [3, 4], [4, 3], [5, 2]]);
    assert_eq!(over["line"], json!({"kind": "anti_diag", "index": 7, "cells": cells}));
    assert_judged_k(8, 4, &over);
    server.shutdown().await;
}

#[tokio::test]
async fn win_lengths_outside_three_to_the_size_are_invalid_win() {
    let server = TestServer::start(test_config()).await;
    let mut c = server.client().await;
    for (request, size, win) in [
        ("quick_match", 5, json!(2)),
        ("quick_match", 5, json!(6)),
        ("create_room", 3, json!(4)),
        ("create_room", 9, json!(-1)),
    ] {
        c.send(json!({"type": request, "size": size, "win": win, "id": 1})).await;
        let err = c.expect_error(ErrorCode::InvalidWin, Some(json!(1))).await;
        assert!(err["message"].as_str().is_some_and(|m| m.contains("whole line")), "{err}");
    }
    // 18446744073709551616 is an integer too: out of range, not malformed.
    c.send_raw(tokio_tungstenite::tungstenite::Message::text(
        r#"{"type":"quick_match","size":5,"win":18446744073709551616,"id":2}"#,
    ))
    .await;
    c.expect_error(ErrorCode::InvalidWin, Some(json!(2))).await;
    // A bad size is reported before the win length.
    c.send(json!({"type": "quick_match", "size": 1000, "win": 2, "id": 3})).await;
    c.expect_error(ErrorCode::InvalidSize, Some(json!(3))).await;
    c.send(json!({"type": "quick_match", "size": 5, "win": "five", "id": 4})).await;
    c.expect_error(ErrorCode::BadMessage, Some(json!(4))).await;
    // Nothing was queued: a valid request now is queued at once.
    c.send(json!({"type": "quick_match", "size": 5, "win": 3})).await;
    assert_eq!(c.recv_json().await, json!({"type": "queued", "size": 5, "win": 3, "clock": null}));
    server.shutdown().await;
}

#[tokio::test]
async fn quick_match_pairs_only_players_asking_for_the_same_size_and_win() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.client().await;
    let mut b = server.client().await;
    let mut c = server.client().await;
    a.send(json!({"type": "quick_match", "size": 7, "win": 4})).await;
    a.recv_type("queued").await;
    // The same size with the classic rule waits apart.
    b.send(json!({"type": "quick_match", "size": 7})).await;
    assert_eq!(b.recv_json().await, json!({"type": "queued", "size": 7, "win": 7, "clock": null}));
    c.send(json!({"type": "quick_match", "size": 7, "win": 4})).await;
    let started = c.recv_type("game_started").await;
    assert_eq!((started["size"].clone(), started["win"].clone()), (json!(7), json!(4)));
    assert_eq!(a.recv_type("game_started").await["room"], started["room"]);
    b.send(json!({"type": "ping", "id": "still"})).await;
    assert_eq!(b.recv_json().await, json!({"type": "pong", "id": "still"}), "b is still waiting");
    server.shutdown().await;
}

#[tokio::test]
async fn without_win_the_classic_rule_holds_and_every_message_says_so() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 4).await;
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": p.room})).await;
    assert_eq!(watcher.recv_type("state").await["win"], 4);
    // Three in a row is no win on 4×4 with the classic rule; the whole row is.
    let moves = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2], [0, 3]];
    let over = play_out(&mut p, &moves).await;
    assert_eq!(over["line"], json!({"kind": "row", "index": 0, "cells": [[0, 0], [0, 1], [0, 2], [0, 3]]}));
    assert_judged_k(4, 4, &over);
    let mut creator = server.client().await;
    creator.send(json!({"type": "create_room", "size": 4})).await;
    assert_eq!(creator.recv_type("room_created").await["win"], 4);
    server.shutdown().await;
}
