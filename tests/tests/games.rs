//! Whole games over real sockets: a win on every kind of line and a draw, on
//! sizes 2, 3 and 5; every `game_over.moves` judges to the same winner.

use serde_json::json;
use tictactoe_tests::{
    TestServer, assert_judged, drawn_game, play_out, quick_pair, test_config, winning_games,
};

#[tokio::test]
async fn wins_on_every_line_and_draws_on_sizes_2_3_5() {
    let server = TestServer::start(test_config()).await;
    for n in [2, 3, 5] {
        for (kind, moves) in winning_games(n) {
            let mut pair = quick_pair(&server, n).await;
            let over = play_out(&mut pair, &moves).await;
            assert_eq!(over["winner"], 1, "{n} {kind}");
            assert_eq!(over["reason"], "line");
            // winning_games takes row 0 and column 0; diagonals are index 0 by the contract.
            let cells: Vec<[usize; 2]> = (0..n)
                .map(|i| match kind {
                    "row" => [0, i],
                    "col" => [i, 0],
                    "diag" => [i, i],
                    _ => [i, n - 1 - i],
                })
                .collect();
            assert_eq!(over["line"], json!({"kind": kind, "index": 0, "cells": cells}), "{n} {kind}");
            assert_eq!(over["moves"], json!(moves));
            assert_eq!(over["room"], json!(pair.room));
            assert_judged(n, &over);
        }
        if n >= 3 {
            let moves = drawn_game(n);
            assert_eq!(moves.len(), n * n);
            let mut pair = quick_pair(&server, n).await;
            let over = play_out(&mut pair, &moves).await;
            assert_eq!(
                (over["winner"].clone(), over["reason"].clone(), over["line"].clone()),
                (json!(0), json!("draw"), json!(null))
            );
            assert_judged(n, &over);
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn player_two_wins_a_column_and_moved_fields_are_complete() {
    let server = TestServer::start(test_config()).await;
    let mut pair = quick_pair(&server, 3).await;
    // O takes column 2 while X scatters.
    let moves = [[0, 0], [0, 2], [1, 0], [1, 2], [2, 1], [2, 2]];
    for (i, &[r, c]) in moves.iter().enumerate() {
        let (mover, other) = if i % 2 == 0 { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) };
        mover.send(json!({"type": "move", "row": r, "col": c, "id": format!("m{i}")})).await;
        let own = mover.recv_type("moved").await;
        let seen = other.recv_type("moved").await;
        assert_eq!(own["id"], format!("m{i}"), "the mover's moved carries its id");
        assert!(seen.get("id").is_none(), "the opponent's moved has no id");
        assert_eq!(own["player"], if i % 2 == 0 { 1 } else { 2 });
        // Every field is present; next and clock_ms are null at the end (timer off: always null).
        assert!(own.get("next").is_some() && own.get("clock_ms").is_some(), "{own}");
        assert_eq!(own["clock_ms"], json!(null));
        let last = i + 1 == moves.len();
        assert_eq!(own["next"], if last { json!(null) } else { json!(if i % 2 == 0 { 2 } else { 1 }) });
    }
    let over = pair.x.recv_type("game_over").await;
    assert_eq!(over["winner"], 2);
    assert_eq!(over["line"], json!({"kind": "col", "index": 2, "cells": [[0, 2], [1, 2], [2, 2]]}));
    assert_judged(3, &over);
    server.shutdown().await;
}

#[tokio::test]
async fn welcome_announces_protocol_and_limits() {
    let server = TestServer::start(test_config()).await;
    let client = server.client().await;
    let w = &client.welcome;
    assert_eq!(w["protocol"], 1);
    assert!(w["server"].as_str().is_some_and(|s| s.starts_with("ttt-server/")));
    let limits = &w["limits"];
    for field in [
        "min_size",
        "max_size",
        "turn_timeout_ms",
        "reconnect_grace_ms",
        "max_message_bytes",
        "max_messages_per_second",
        "ping_interval_ms",
        "handshake_timeout_ms",
    ] {
        assert!(limits[field].is_u64(), "limits.{field} in {w}");
    }
    assert_eq!(limits["min_size"], 2);
    assert_eq!(limits["max_size"], 100);
    assert_eq!(limits["max_message_bytes"], 4096);
    server.shutdown().await;
}

/// Watching a room, then taking its free seat on the same connection: the
/// seat holds however the room's release of the watcher and the lobby's
/// entry race, and the game is played.
#[tokio::test]
async fn a_watcher_can_take_the_free_seat_of_the_room_it_watches() {
    let server = TestServer::start(test_config()).await;
    for _ in 0..20 {
        let mut host = server.client().await;
        host.send(json!({"type": "create_room", "mark": "X"})).await;
        let room = host.recv_type("room_created").await["room"].clone();
        let mut guest = server.client().await;
        guest.send(json!({"type": "spectate", "room": room})).await;
        guest.recv_type("state").await;
        guest.send(json!({"type": "join_room", "room": room})).await;
        guest.recv_type("game_started").await;
        host.recv_type("game_started").await;
        host.play(0, 0).await;
        guest.recv_type("moved").await;
        assert_eq!(guest.play(1, 1).await["seq"], 2, "the guest plays its seat");
    }
    server.shutdown().await;
}
