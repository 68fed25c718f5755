//! Arena tournaments over real sockets: every refusal by its code, and two
//! accounts joined to a running tournament paired within a pass, berserk,
//! their game counted in the standings pushed to them, and paired again.

use std::time::Duration;

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, api, test_config};

fn with_db(dir: &TempDir) -> Config {
    Config { database: dir.database("ttt.db"), ..test_config() }
}

/// A client signed in to a new account `name`.
async fn account(server: &TestServer, name: &str) -> Client {
    let mut c = server.client().await;
    let token = c.register(name, true).await;
    c.sign_in(name, &token).await;
    c
}

async fn create(c: &mut Client, terms: Value) -> Value {
    let mut ask = json!({"type": "tournament_create", "name": "Friday arena", "size": 3,
        "clock": {"initial_ms": 20_000, "increment_ms": 1_000}, "duration_ms": 60_000});
    ask.as_object_mut().unwrap().extend(terms.as_object().cloned().unwrap_or_default());
    c.send(ask).await;
    c.recv_type("tournament").await
}

/// The next `tournament_update` (skipping game messages).
async fn update(c: &mut Client) -> Value {
    c.recv_type("tournament_update").await
}

fn row<'a>(update: &'a Value, name: &str) -> &'a Value {
    let rows = update["standings"].as_array().expect("standings");
    rows.iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("{name} in {update}"))
}

#[tokio::test]
async fn bad_terms_guests_and_unknown_ids_are_refused_by_their_codes() {
    let dir = TempDir::new("tournament-refusals");
    let server = TestServer::start(with_db(&dir)).await;
    let mut guest = server.client().await;
    guest.send(json!({"type": "hello", "name": "guest"})).await;
    let created = json!({"type": "tournament_create", "name": "g", "clock": {"initial_ms": 60_000, "increment_ms": 0}, "duration_ms": 60_000, "id": 1});
    guest.send(created).await;
    guest.expect_error(ErrorCode::AccountRequired, Some(json!(1))).await;
    guest.send(json!({"type": "tournament_join", "id": "0000000AAAAAAAA"})).await;
    guest.expect_error(ErrorCode::AccountRequired, Some(json!("0000000AAAAAAAA"))).await;

    let mut ann = account(&server, "ann").await;
    let bad = [
        json!({"name": ""}),
        json!({"size": 1}),
        json!({"win": 9}),
        json!({"clock": null}),
        json!({"clock": {"initial_ms": 5}}),
        json!({"duration_ms": 59_999}),
        json!({"duration_ms": 43_200_001}),
        json!({"starts_in_ms": -1}),
        json!({"starts_in_ms": 86_400_001}),
    ];
    for (i, terms) in bad.into_iter().enumerate() {
        let field = terms.as_object().and_then(|o| o.keys().next().cloned()).unwrap_or_default();
        let mut ask = json!({"type": "tournament_create", "name": "ok", "clock": {"initial_ms": 60_000, "increment_ms": 0},
            "duration_ms": 60_000, "id": i});
        ask.as_object_mut().unwrap().extend(terms.as_object().cloned().unwrap_or_default());
        ann.send(ask).await;
        let err = ann.expect_error(ErrorCode::InvalidTournament, Some(json!(i))).await;
        assert!(err["message"].as_str().unwrap_or_default().contains(&field), "{field}: {err}");
    }
    ann.send(json!({"type": "tournament_join", "id": "0000000AAAAAAAA"})).await;
    ann.expect_error(ErrorCode::TournamentNotFound, Some(json!("0000000AAAAAAAA"))).await;
    ann.send(json!({"type": "tournament_watch", "id": "not an id"})).await;
    ann.expect_error(ErrorCode::TournamentNotFound, Some(json!("not an id"))).await;
    ann.send(json!({"type": "berserk", "id": 7})).await;
    ann.expect_error(ErrorCode::NotInGame, Some(json!(7))).await;
    // Nothing was created.
    ann.send(json!({"type": "tournaments", "id": 8})).await;
    let list = ann.recv_type("tournaments").await;
    assert_eq!(list["tournaments"], json!([]), "{list}");
    assert_eq!(list["id"], 8);
    server.stop().await.expect("stops");
}

#[tokio::test]
async fn two_joined_players_are_paired_play_berserk_and_see_their_scores() {
    let dir = TempDir::new("tournament-play");
    let server = TestServer::start(with_db(&dir)).await;
    let mut ann = account(&server, "ann").await;
    let mut bob = account(&server, "bob").await;
    let t = create(&mut ann, json!({})).await;
    let id = t["id"].as_str().expect("an id").to_owned();
    assert_eq!(
        (t["status"].as_str(), t["players"].as_u64(), t["size"].as_u64()),
        (Some("running"), Some(0), Some(3))
    );
    assert_eq!(t["clock"], json!({"initial_ms": 20_000, "increment_ms": 1_000}));
    assert_eq!(t["created_by"], "ann");

    // Listed, and shown by the API.
    let (status, listed) = api(server.addr, "/api/tournaments").await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["tournaments"][0]["id"], id.as_str());
    ann.send(json!({"type": "tournament_join", "id": id})).await;
    let joined = update(&mut ann).await;
    assert_eq!(joined["id"], id.as_str(), "the reply's id is the tournament's: {joined}");
    assert_eq!(row(&joined, "ann")["games"], 0);
    let started = tokio::time::Instant::now();
    bob.send(json!({"type": "tournament_join", "id": id})).await;
    update(&mut bob).await;

    // Paired within a pass or two, in a tournament game.
    let sa = ann.recv_type("game_started").await;
    let sb = bob.recv_type("game_started").await;
    assert!(started.elapsed() < Duration::from_secs(3), "paired after {:?}", started.elapsed());
    assert_eq!(
        (sa["tournament"].as_str(), sb["tournament"].as_str()),
        (Some(id.as_str()), Some(id.as_str()))
    );
    let (mut x, mut o) = if sa["you"] == 1 { (ann, bob) } else { (bob, ann) };
    let x_name = if sa["you"] == 1 { "ann" } else { "bob" };
    let o_name = if x_name == "ann" { "bob" } else { "ann" };

    // X goes berserk before its first move: half its clock, shown to both.
    x.send(json!({"type": "berserk", "id": "b"})).await;
    let b = x.recv_type("berserked").await;
    assert_eq!((b["player"].as_u64(), b["id"].as_str()), (Some(1), Some("b")));
    assert_eq!(b["clocks"], json!([10_000, 20_000]));
    let seen = o.recv_type("berserked").await;
    assert_eq!(seen["player"], 1);
    x.send(json!({"type": "berserk", "id": "again"})).await;
    x.expect_error(ErrorCode::CannotBerserk, Some(json!("again"))).await;
    // X wins the top row with three own moves: 2 + 1 for the berserk win.
    for (i, [r, c]) in [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]].into_iter().enumerate() {
        let (mover, other) = if i % 2 == 0 { (&mut x, &mut o) } else { (&mut o, &mut x) };
        mover.send(json!({"type": "move", "row": r, "col": c})).await;
        for c in [mover, other] {
            assert_eq!(c.recv_type("moved").await["seq"], i + 1);
        }
        if i == 0 {
            x.send(json!({"type": "berserk", "id": "late"})).await;
            x.expect_error(ErrorCode::CannotBerserk, Some(json!("late"))).await;
        }
    }
    let over = x.recv_type("game_over").await;
    assert_eq!(over["winner"], 1);
    let closed = x.recv_type("room_closed").await;
    assert_eq!(closed["reason"], "finished", "a tournament's room plays one game");
    let record = tictactoe_tests::record_of(server.addr, over["game_id"].as_str().unwrap()).await;
    assert_eq!(
        (record["tournament"].as_str(), &record["berserk"]),
        (Some(id.as_str()), &json!([true, false]))
    );

    // The standings pushed: the berserk win scores 3.
    let standings = loop {
        let u = update(&mut o).await;
        if row(&u, x_name)["games"] == 1 {
            break u;
        }
    };
    assert_eq!(row(&standings, x_name)["score"], 3, "{standings}");
    assert_eq!(row(&standings, x_name)["results"], json!([3]));
    assert_eq!(row(&standings, o_name)["score"], 0);
    assert_eq!(row(&standings, x_name)["rank"], 1);
    assert_eq!(standings["games"], json!([over["game_id"]]));

    // Free again, they are paired again (nobody else is free).
    let again = x.recv_type("game_started").await;
    assert_eq!(again["tournament"].as_str(), Some(id.as_str()));
    // A pause: the other is not paired again.
    let (status, view) = api(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["standings"][0]["name"], x_name);
    server.stop().await.expect("stops");
}

#[tokio::test]
async fn a_tournament_game_keeps_its_tournament_and_berserk_across_a_restart() {
    let dir = TempDir::new("tournament-restart");
    let config = || Config { reconnect_grace_ms: 30_000, ..with_db(&dir) };
    let server = TestServer::start(config()).await;
    let mut ann = account(&server, "ann").await;
    let mut bob = account(&server, "bob").await;
    let id = create(&mut ann, json!({})).await["id"].as_str().expect("id").to_owned();
    for c in [&mut ann, &mut bob] {
        c.send(json!({"type": "tournament_join", "id": id})).await;
        update(c).await;
    }
    let (sa, sb) = (ann.recv_type("game_started").await, bob.recv_type("game_started").await);
    let (mut x, mut o, tokens) = if sa["you"] == 1 {
        (ann, bob, [sa["resume_token"].clone(), sb["resume_token"].clone()])
    } else {
        (bob, ann, [sb["resume_token"].clone(), sa["resume_token"].clone()])
    };
    x.send(json!({"type": "move", "row": 0, "col": 0})).await;
    x.recv_type("moved").await;
    o.send(json!({"type": "berserk"})).await;
    assert_eq!(x.recv_type("berserked").await["player"], 2);
    o.send(json!({"type": "move", "row": 1, "col": 0})).await;
    assert_eq!(x.recv_type("moved").await["seq"], 2);
    drop((x, o));
    let server = server.restart(config()).await;
    let mut x = server.client().await;
    x.send(json!({"type": "resume", "token": tokens[0]})).await;
    let state = x.recv_type("state").await;
    assert_eq!(
        (state["tournament"].as_str(), &state["berserk"]),
        (Some(id.as_str()), &json!([false, true])),
        "{state}"
    );
    assert!(state["clocks"][1].as_u64().unwrap_or(u64::MAX) <= 10_000, "O's berserk half clock: {state}");
    let mut o = server.client().await;
    o.send(json!({"type": "resume", "token": tokens[1]})).await;
    o.recv_type("state").await;
    for (i, [r, c]) in [[0, 1], [1, 1], [0, 2]].into_iter().enumerate() {
        let (mover, other) = if i % 2 == 0 { (&mut x, &mut o) } else { (&mut o, &mut x) };
        mover.send(json!({"type": "move", "row": r, "col": c})).await;
        for c in [mover, other] {
            assert_eq!(c.recv_type("moved").await["seq"], i + 3);
        }
    }
    let over = x.recv_type("game_over").await;
    let record = tictactoe_tests::record_of(server.addr, over["game_id"].as_str().unwrap()).await;
    assert_eq!(
        (record["tournament"].as_str(), &record["berserk"]),
        (Some(id.as_str()), &json!([false, true]))
    );
    let (_, view) = api(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(view["games"], json!([over["game_id"]]), "{view}");
    server.stop().await.expect("stops");
}
