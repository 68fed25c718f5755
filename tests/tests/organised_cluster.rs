//! An organised room across a cluster: its host on one instance, its two
//! reserved players on the other, a game from its opening played out
//! between them over Redis, and its record unrated with the host named.

use serde_json::json;
use tictactoe_protocol::ErrorCode;
use tictactoe_tests::cluster::Two;
use tictactoe_tests::{Client, api};

async fn named(c: &mut Client, name: &str) {
    c.send(json!({"type": "hello", "name": name})).await;
}

#[tokio::test]
async fn a_host_on_one_instance_organises_a_game_between_players_on_another() {
    let two = Two::start("organised_cluster");
    let (mut host, mut ann, mut bob, mut eve) =
        (two.a.client().await, two.b.client().await, two.b.client().await, two.b.client().await);
    for (c, name) in [(&mut host, "organiser"), (&mut ann, "ann"), (&mut bob, "bob"), (&mut eve, "eve")] {
        named(c, name).await;
    }
    let opening = json!([[1, 1], [0, 0], [2, 2]]);
    host.send(json!({"type": "create_room", "host": true, "players": ["ann", "bob"], "opening": opening, "games": 1}))
        .await;
    let room = host.recv_type("room_created").await["room"].clone();
    eve.send(json!({"type": "join_room", "room": room, "id": 1})).await;
    eve.expect_error(ErrorCode::RoomFull, Some(json!(1))).await;
    bob.send(json!({"type": "join_room", "room": room})).await;
    ann.send(json!({"type": "join_room", "room": room})).await;
    let (sa, sb) = (ann.recv_type("game_started").await, bob.recv_type("game_started").await);
    assert_eq!(
        (sa["you"].clone(), sb["you"].clone(), sb["moves"].clone()),
        (json!(1), json!(2), opening.clone())
    );
    assert_eq!(host.recv_type("state").await["opening"], 3);
    // O (bob) to move after the opening: the top row is his.
    for (mover, cell) in [(1, [0, 2]), (0, [2, 0]), (1, [0, 1])] {
        let (m, other) = if mover == 0 { (&mut ann, &mut bob) } else { (&mut bob, &mut ann) };
        m.play(cell[0], cell[1]).await;
        other.recv_type("moved").await;
    }
    let over = host.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(2), json!("line")), "{over}");
    assert_eq!(host.recv_type("room_closed").await["reason"], "finished");
    let id = over["game_id"].as_str().expect("a record");
    let (status, record) = api(two.b.addr, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200, "{record}");
    assert_eq!(
        (record["opening"].clone(), record["host"].clone(), record["rated"].clone()),
        (json!(3), json!("organiser"), json!(false))
    );
}
