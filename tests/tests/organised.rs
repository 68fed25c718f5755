//! Organised rooms over real sockets: a host who watches, seats reserved
//! for two names (X and O as listed), an opening played at the start of
//! every game and replayed with the seats swapped on the rematch, `games`
//! closing the room, `invalid_opening` for each case, and records that
//! name the opening and the host and are unrated.

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, record_of, test_config};

/// A client that said `hello` as `name`.
async fn named(server: &TestServer, name: &str) -> Client {
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": name})).await;
    c
}

#[tokio::test]
async fn reserved_seats_take_their_players_as_listed_and_refuse_anyone_else() {
    let server = TestServer::start(test_config()).await;
    let mut host = named(&server, "organiser").await;
    host.send(json!({"type": "create_room", "host": true, "players": ["ann", "bob"], "id": 1})).await;
    let created = host.recv_type("room_created").await;
    let room = created["room"].clone();
    // Bob comes first, yet plays O; a third name finds the room full.
    let (mut bob, mut eve, mut ann) =
        (named(&server, "bob").await, named(&server, "eve").await, named(&server, "Ann").await);
    bob.send(json!({"type": "join_room", "room": room})).await;
    eve.send(json!({"type": "join_room", "room": room, "id": 9})).await;
    let refused = eve.expect_error(ErrorCode::RoomFull, Some(json!(9))).await;
    assert!(
        refused["message"].as_str().unwrap_or_default().contains("reserved for ann and bob"),
        "{refused}"
    );
    ann.send(json!({"type": "join_room", "room": room})).await;
    let (sa, sb) = (ann.recv_type("game_started").await, bob.recv_type("game_started").await);
    assert_eq!((sa["you"].clone(), sb["you"].clone()), (json!(1), json!(2)), "ann X, bob O");
    // The host watches: the game's state, then its moves.
    let state = host.recv_type("state").await;
    assert_eq!(
        (state["host"].clone(), state["reserved"].clone()),
        (json!("organiser"), json!(["ann", "bob"]))
    );
    assert_eq!(state["players"][0]["name"], "Ann", "ann goes by Ann: {state}");
    ann.play(1, 1).await;
    assert_eq!(host.recv_type("moved").await["seq"], 1);
    // The host cannot play.
    host.send(json!({"type": "move", "row": 0, "col": 0, "id": 3})).await;
    host.expect_error(ErrorCode::NotInGame, Some(json!(3))).await;
}

#[tokio::test]
async fn an_opening_starts_every_game_and_the_rematch_replays_it_with_the_seats_swapped() {
    let dir = TempDir::new("organised");
    let server = TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await;
    let mut host = named(&server, "organiser").await;
    let opening = json!([[1, 1], [0, 0], [2, 2]]);
    let ask = json!({"type": "create_room", "host": true, "players": ["ann", "bob"], "opening": opening, "games": 2});
    host.send(ask).await;
    let room = host.recv_type("room_created").await["room"].clone();
    let (mut ann, mut bob) = (named(&server, "ann").await, named(&server, "bob").await);
    ann.send(json!({"type": "join_room", "room": room})).await;
    bob.send(json!({"type": "join_room", "room": room})).await;
    let mut ids = Vec::new();
    for (game, x_name) in ["ann", "bob"].into_iter().enumerate() {
        let (sa, sb) = (ann.recv_type("game_started").await, bob.recv_type("game_started").await);
        let (mut x, mut o, started) = if x_name == "ann" { (ann, bob, sa) } else { (bob, ann, sb) };
        assert_eq!(started["you"], 1, "game {game}: {x_name} is X");
        assert_eq!(started["turn"], 2, "O moves after an opening of three");
        assert_eq!((started["opening"].clone(), started["moves"].clone()), (json!(3), opening.clone()));
        let state = host.recv_type("state").await;
        assert_eq!(
            (state["opening"].clone(), state["moves"].clone(), state["turn"].clone()),
            (json!(3), opening.clone(), json!(2))
        );
        // O is to move after three opening moves; its move is seq 4.
        let first = o.play(0, 2).await;
        assert_eq!((first["seq"].clone(), first["player"].clone()), (json!(4), json!(2)), "{first}");
        x.recv_type("moved").await;
        x.play(2, 0).await;
        o.recv_type("moved").await;
        // O takes (0, 1): the top row is O's.
        o.play(0, 1).await;
        let over = x.recv_type("game_over").await;
        assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(2), json!("line")), "{over}");
        let moves = over["moves"].as_array().cloned().unwrap_or_default();
        assert_eq!(Value::Array(moves[..3].to_vec()), opening, "the opening comes first");
        ids.push(over["game_id"].as_str().unwrap_or_default().to_owned());
        assert_eq!(host.recv_type("game_over").await["game_id"], over["game_id"]);
        if game == 0 {
            x.send(json!({"type": "rematch"})).await;
            o.send(json!({"type": "rematch"})).await;
        }
        (ann, bob) = if x_name == "ann" { (x, o) } else { (o, x) };
    }
    // Two games played: the room closes, for the host as for the players.
    let closed = host.recv_type("room_closed").await;
    assert_eq!(closed["reason"], "finished", "{closed}");
    assert_eq!(ann.recv_type("room_closed").await["reason"], "finished");
    for (id, x) in ids.iter().zip(["ann", "bob"]) {
        let record = record_of(server.addr, id).await;
        assert_eq!(
            (record["opening"].clone(), record["host"].clone()),
            (json!(3), json!("organiser")),
            "{record}"
        );
        assert_eq!((record["rated"].clone(), record["players"][0]["name"].clone()), (json!(false), json!(x)));
    }
}

#[tokio::test]
async fn every_bad_opening_is_invalid_opening_naming_the_move() {
    let server = TestServer::start(test_config()).await;
    let mut c = named(&server, "organiser").await;
    let cases = [
        (json!([[1, 1], [3, 0]]), "opening move 1 ([3, 0]) is off the 3x3 board"),
        (json!([[-1, 0]]), "opening move 0 ([-1, 0]) is off"),
        (json!([[1, 1], [1, 1]]), "opening move 1 ([1, 1]) is on a taken cell"),
        (json!([[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]]), "opening move 4 ([0, 2]) completes a line"),
        (
            json!([[0, 0], [0, 1], [0, 2], [1, 1], [1, 0], [1, 2], [2, 1], [2, 0], [2, 2]]),
            "opening move 8 ([2, 2]) fills the board",
        ),
    ];
    for (i, (opening, text)) in cases.into_iter().enumerate() {
        c.send(json!({"type": "create_room", "host": true, "opening": opening, "id": i})).await;
        let refused = c.expect_error(ErrorCode::InvalidOpening, Some(json!(i))).await;
        assert!(refused["message"].as_str().unwrap_or_default().starts_with(text), "{refused}");
    }
    // A mistyped opening is a bad message; nothing changed either way.
    c.send(json!({"type": "create_room", "opening": [[1, "a"]], "id": 7})).await;
    c.expect_error(ErrorCode::BadMessage, Some(json!(7))).await;
    c.send(json!({"type": "create_room", "opening": [[1, 1]]})).await;
    let created = c.recv_type("room_created").await;
    assert!(created["room"].is_string(), "{created}");
}

#[tokio::test]
async fn a_player_who_leaves_between_games_may_come_back_and_the_room_closes_when_both_have_left() {
    let server = TestServer::start(test_config()).await;
    let mut host = named(&server, "organiser").await;
    host.send(json!({"type": "create_room", "host": true, "players": ["ann", "bob"]})).await;
    let room = host.recv_type("room_created").await["room"].clone();
    let (mut ann, mut bob) = (named(&server, "ann").await, named(&server, "bob").await);
    ann.send(json!({"type": "join_room", "room": room})).await;
    bob.send(json!({"type": "join_room", "room": room})).await;
    ann.recv_type("game_started").await;
    bob.recv_type("game_started").await;
    ann.send(json!({"type": "resign"})).await;
    bob.recv_type("game_over").await;
    host.recv_type("game_over").await;
    // Bob leaves between games: the room waits for him, Ann keeps her seat.
    bob.send(json!({"type": "leave"})).await;
    bob.send(json!({"type": "join_room", "room": room})).await;
    // The pair's second game: the seats swapped, Bob is X now.
    let (sb, sa) = (bob.recv_type("game_started").await, ann.recv_type("game_started").await);
    assert_eq!((sb["you"].clone(), sa["you"].clone()), (json!(1), json!(2)), "{sb}");
    // Both leave: only then does the room close.
    bob.send(json!({"type": "leave"})).await;
    ann.recv_type("game_over").await;
    ann.send(json!({"type": "leave"})).await;
    let closed = host.recv_type("room_closed").await;
    assert_eq!(closed["reason"], "left", "{closed}");
}

#[tokio::test]
async fn a_host_stays_with_its_room_until_it_leaves() {
    let server = TestServer::start(test_config()).await;
    let mut host = named(&server, "organiser").await;
    host.send(json!({"type": "create_room", "host": true, "players": ["ann", "bob"]})).await;
    let room = host.recv_type("room_created").await["room"].clone();
    // Joining its own room, or another game, would leave it: refused, nothing changed.
    host.send(json!({"type": "join_room", "room": room, "id": 1})).await;
    host.expect_error(ErrorCode::Busy, Some(json!(1))).await;
    host.send(json!({"type": "quick_match", "id": 2})).await;
    host.expect_error(ErrorCode::Busy, Some(json!(2))).await;
    let (mut ann, mut bob) = (named(&server, "ann").await, named(&server, "bob").await);
    ann.send(json!({"type": "join_room", "room": room})).await;
    bob.send(json!({"type": "join_room", "room": room})).await;
    ann.recv_type("game_started").await;
    assert_eq!(host.recv_type("state").await["reserved"], json!(["ann", "bob"]));
}
