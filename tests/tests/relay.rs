//! One server to players, whichever instance each connection reached: two
//! real `ttt-server` instances on one Postgres and one `redis-server`, and
//! players spread over them. A room made on one is joined, watched and
//! played from the other; quick match pairs players of different
//! instances; a seat is resumed on an instance that is not the room's; and
//! a player relayed to an instance that dies is told to resume, and does,
//! where the game was adopted.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_tests::postgres::shared;
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::redis::{Redis, bus_up, cluster, instance};
use tictactoe_tests::{Client, TempDir, assert_judged};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// X wins on the top row.
const GAME: [[usize; 2]; 5] = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];

/// Plays `moves` from move `from` on, X first among `players`, every
/// `moved` seen by both and by `watchers` in `seq` order; returns the
/// `game_over` each player and watcher got.
async fn play(
    players: &mut [Client; 2],
    watchers: &mut [Client],
    from: usize,
    moves: &[[usize; 2]],
) -> Vec<Value> {
    for (i, &[r, c]) in moves.iter().enumerate().skip(from) {
        let own = players[i % 2].play(r, c).await;
        assert_eq!(own["seq"], i + 1, "{own}");
        let other = players[(i + 1) % 2].recv_type("moved").await;
        assert_eq!(other, own);
        for w in watchers.iter_mut() {
            assert_eq!(w.recv_type("moved").await, own);
        }
    }
    let mut overs = Vec::new();
    for c in players.iter_mut().chain(watchers.iter_mut()) {
        let over = c.recv_type("game_over").await;
        assert_judged(3, &over);
        overs.push(over);
    }
    overs
}

/// The players of a started game, X first, with their `game_started`.
async fn seated(a: Client, b: Client) -> ([Client; 2], [Value; 2]) {
    let (mut a, mut b) = (a, b);
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    assert_eq!(sa["room"], sb["room"]);
    match sa["you"] == 1 {
        true => ([a, b], [sa, sb]),
        false => ([b, a], [sb, sa]),
    }
}

#[tokio::test]
async fn a_room_made_on_one_instance_is_joined_watched_and_played_from_the_other() {
    let (a, b, _redis, _spill) = cluster("relay-room").await;
    let mut maker = a.client().await;
    maker.send(json!({"type": "create_room", "id": 1})).await;
    let room = maker.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    // A code as a person types it, on the instance that does not run it.
    let mut joiner = b.client().await;
    joiner.send(json!({"type": "join_room", "room": room.to_lowercase(), "id": "j"})).await;
    let (mut players, started) = seated(maker, joiner).await;
    let mut watcher = b.client().await;
    watcher.send(json!({"type": "spectate", "room": room, "id": 7})).await;
    let state = watcher.recv_type("state").await;
    assert_eq!((state["room"].as_str(), state["id"].clone()), (Some(room.as_str()), json!(7)), "{state}");
    assert_eq!(state["you"], Value::Null, "a spectator has no seat: {state}");
    let overs = play(&mut players, std::slice::from_mut(&mut watcher), 0, &GAME).await;
    assert!(overs.iter().all(|o| o["winner"] == 1 && o["reason"] == "line"), "{overs:?}");
    assert!(overs.windows(2).all(|w| w[0]["game_id"] == w[1]["game_id"]), "{overs:?}");
    // A code no instance runs is refused from either, with the request's id.
    for server in [&a, &b] {
        let mut c = server.client().await;
        c.send(json!({"type": "join_room", "room": "ZZZZZZZZZZ", "id": 3})).await;
        let e = c.recv_type("error").await;
        assert_eq!((e["code"].clone(), e["id"].clone()), (json!("room_not_found"), json!(3)), "{e}");
    }
    // A rematch asked from both instances: the same room, seats swapped.
    for p in players.iter_mut() {
        p.send(json!({"type": "rematch"})).await;
    }
    for (p, was) in players.iter_mut().zip(&started) {
        let again = p.recv_type("game_started").await;
        assert_eq!(again["room"], was["room"]);
        assert_ne!(again["you"], was["you"], "{again}");
    }
}

#[tokio::test]
async fn quick_match_pairs_players_waiting_on_different_instances_within_1_s() {
    let (a, b, _redis, _spill) = cluster("relay-quick").await;
    for _ in 0..3 {
        let (mut p, mut q) = (a.client().await, b.client().await);
        p.send(json!({"type": "quick_match", "id": "p"})).await;
        assert_eq!(p.recv_type("queued").await["id"], "p");
        let asked = Instant::now();
        q.send(json!({"type": "quick_match", "id": "q"})).await;
        assert_eq!(q.recv_type("queued").await["id"], "q");
        let (mut players, started) = seated(p, q).await;
        assert!(asked.elapsed() < Duration::from_secs(1), "paired after {:?}", asked.elapsed());
        assert_ne!(started[0]["resume_token"], started[1]["resume_token"]);
        let overs = play(&mut players, &mut [], 0, &GAME).await;
        assert_eq!(overs[0]["winner"], 1, "{overs:?}");
    }
    // Leaving the queue before anyone comes: nobody is paired with the leaver.
    let mut leaver = b.client().await;
    leaver.send(json!({"type": "quick_match"})).await;
    leaver.recv_type("queued").await;
    leaver.send(json!({"type": "leave", "id": "l"})).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut late = a.client().await;
    late.send(json!({"type": "quick_match"})).await;
    late.recv_type("queued").await;
    let mut next = b.client().await;
    next.send(json!({"type": "quick_match"})).await;
    let (players, _) = seated(late, next).await;
    drop(players);
}

#[tokio::test]
async fn a_seat_is_resumed_on_an_instance_that_does_not_run_its_room() {
    let (a, b, _redis, _spill) = cluster("relay-resume").await;
    let (mut x, mut o) = (a.client().await, a.client().await);
    x.send(json!({"type": "create_room", "mark": "X"})).await;
    let room = x.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    o.send(json!({"type": "join_room", "room": room})).await;
    let (mut players, started) = seated(x, o).await;
    for (i, &[r, c]) in GAME[..2].iter().enumerate() {
        players[i % 2].play(r, c).await;
        players[(i + 1) % 2].recv_type("moved").await;
    }
    // O's socket drops; O comes back through the other instance.
    let [x, o] = players;
    drop(o);
    let mut o = b.client().await;
    o.send(json!({"type": "resume", "token": started[1]["resume_token"], "id": "r"})).await;
    let state = o.recv_type("state").await;
    assert_eq!((state["id"].clone(), state["you"].clone()), (json!("r"), json!(2)), "{state}");
    assert_eq!(state["moves"], json!([[0, 0], [1, 0]]), "{state}");
    let mut players = [x, o];
    let overs = play(&mut players, &mut [], 2, &GAME).await;
    assert_eq!(overs[1]["winner"], 1, "{overs:?}");
    // A token that names no room anywhere is refused.
    let mut c = b.client().await;
    c.send(json!({"type": "resume", "token": "nonsense", "id": 1})).await;
    assert_eq!(c.recv_type("error").await["code"], "invalid_token");
}

#[tokio::test]
async fn a_player_relayed_to_an_instance_that_dies_is_told_to_resume_and_plays_on() {
    let (a, b, _redis, _spill) = cluster("relay-death").await;
    let (players, started, _) = across(&a, &b, 2).await;
    // Saved moves are at most 100 ms old; this waits them out.
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.signal("KILL");
    let killed = Instant::now();
    let [_, mut o] = players;
    let (_, close) = o.until_close().await;
    assert_eq!(close, Some(CloseCode::Restart), "the relayed player is told to come back");
    assert!(killed.elapsed() < Duration::from_secs(10), "told after {:?}", killed.elapsed());
    let deadline = killed + Duration::from_secs(12);
    let mut resumed = Vec::new();
    for token in [&started[0]["resume_token"], &started[1]["resume_token"]] {
        let mut c = b.client().await;
        c.send(json!({"type": "resume", "token": token})).await;
        let state = c.recv_any(&["state", "error"]).await;
        assert_eq!(state["type"], "state", "{state}");
        assert_eq!(state["moves"], json!([[0, 0], [1, 0]]), "{state}");
        resumed.push(c);
    }
    assert!(Instant::now() < deadline, "adopted after {:?}", killed.elapsed());
    let mut players: [Client; 2] = resumed.try_into().map_err(|_| ()).expect("two players");
    let overs = play(&mut players, &mut [], 2, &GAME).await;
    assert_eq!(overs[0]["winner"], 1, "{overs:?}");
}

/// A room on `a` with X there and O on `b`, played to its `n`th move:
/// the players (X first), their `game_started` and the room's code.
async fn across(a: &ServerProcess, b: &ServerProcess, n: usize) -> ([Client; 2], [Value; 2], String) {
    let mut x = a.client().await;
    x.send(json!({"type": "create_room", "mark": "X"})).await;
    let room = x.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    let mut o = b.client().await;
    o.send(json!({"type": "join_room", "room": room})).await;
    let (mut players, started) = seated(x, o).await;
    for (i, &[r, c]) in GAME[..n].iter().enumerate() {
        players[i % 2].play(r, c).await;
        players[(i + 1) % 2].recv_type("moved").await;
    }
    (players, started, room)
}

#[tokio::test]
async fn a_sigterm_of_the_rooms_instance_sends_its_relayed_player_to_resume_with_no_move_lost() {
    let (a, b, _redis, _spill) = cluster("relay-sigterm").await;
    let (players, started, _) = across(&a, &b, 3).await;
    a.signal("TERM");
    // Both come back with 1012, the relayed one too, and resume on `b`.
    let mut resumed = Vec::new();
    for (mut old, game) in players.into_iter().zip(&started) {
        let (_, close) = old.until_close().await;
        assert_eq!(close, Some(CloseCode::Restart));
        let mut c = b.client().await;
        c.send(json!({"type": "resume", "token": game["resume_token"]})).await;
        let state = c.recv_any(&["state", "error"]).await;
        assert_eq!(state["moves"], json!([[0, 0], [1, 0], [0, 1]]), "no move lost: {state}");
        resumed.push(c);
    }
    let mut players: [Client; 2] = resumed.try_into().map_err(|_| ()).expect("two players");
    let overs = play(&mut players, &mut [], 3, &GAME).await;
    assert_eq!(overs[0]["winner"], 1, "{overs:?}");
}

#[tokio::test]
async fn after_redis_was_down_a_game_across_instances_goes_on_and_codes_are_found_again_within_10_s() {
    let (a, b, mut redis, _spill) = cluster("relay-redis").await;
    let (mut players, _, room) = across(&a, &b, 1).await;
    let ([mut x2, o2], _, _) = across(&a, &b, 1).await;
    redis.kill();
    tokio::time::sleep(Duration::from_secs(1)).await;
    // A relayed player leaves while Redis is down: its opponent hears it once Redis is back.
    drop(o2);
    tokio::time::sleep(Duration::from_secs(1)).await;
    redis.resume();
    let back = Instant::now();
    // The relayed player is sent the room's state (what it missed), and the game goes on.
    let state = players[1].recv_type("state").await;
    assert_eq!(
        (state["room"].as_str(), state["moves"].clone()),
        (Some(room.as_str()), json!([[0, 0]])),
        "{state}"
    );
    assert!(back.elapsed() < Duration::from_secs(10), "resynced after {:?}", back.elapsed());
    let overs = play(&mut players, &mut [], 1, &GAME).await;
    assert_eq!(overs[1]["winner"], 1, "{overs:?}");
    x2.recv_type("opponent_disconnected").await;
    assert!(back.elapsed() < Duration::from_secs(10), "told after {:?}", back.elapsed());
    // A new room on one instance is found from the other again.
    let mut maker = b.client().await;
    maker.send(json!({"type": "create_room"})).await;
    let code = maker.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    let mut watcher = a.client().await;
    watcher.send(json!({"type": "spectate", "room": code})).await;
    assert_eq!(watcher.recv_any(&["state", "error"]).await["type"], "state");
    assert!(back.elapsed() < Duration::from_secs(10), "found after {:?}", back.elapsed());
}

/// A named player on `server`.
async fn named(server: &ServerProcess, name: &str) -> Client {
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": name})).await;
    c
}

/// Waits until `who` on `server` lists `name` (lists are at most a second old).
async fn listed(server: &ServerProcess, name: &str) {
    let mut c = server.client().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        c.send(json!({"type": "who"})).await;
        let online = c.recv_type("online").await;
        if online["players"].as_array().expect("players").iter().any(|p| p["name"] == name) {
            return;
        }
        assert!(Instant::now() < deadline, "{name} is not listed: {online}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_challenge_reaches_a_player_on_another_instance_and_is_accepted_declined_or_withdrawn_from_there() {
    let (a, b, _redis, _spill) = cluster("relay-challenge").await;
    let mut tina = named(&a, "tina").await;
    let mut carl = named(&b, "carl").await;
    listed(&b, "tina").await;
    listed(&a, "carl").await;

    // Declined by the challenged player.
    carl.send(json!({"type": "challenge", "name": "Tina", "id": 1})).await;
    let sent = carl.recv_type("challenge_sent").await;
    assert_eq!((sent["id"].clone(), sent["name"].clone()), (json!(1), json!("tina")), "{sent}");
    let offer = tina.recv_type("challenged").await;
    assert_eq!(
        (offer["challenge"].clone(), offer["from"]["name"].clone()),
        (sent["challenge"].clone(), json!("carl"))
    );
    tina.send(json!({"type": "decline", "challenge": offer["challenge"], "reason": "later"})).await;
    let ended = carl.recv_type("challenge_ended").await;
    assert_eq!(ended["reason"], "declined", "{ended}");

    // Withdrawn by the challenger, from its own instance.
    carl.send(json!({"type": "challenge", "name": "tina"})).await;
    let sent = carl.recv_type("challenge_sent").await;
    tina.recv_type("challenged").await;
    carl.send(json!({"type": "decline", "challenge": sent["challenge"]})).await;
    assert_eq!(tina.recv_type("challenge_ended").await["reason"], "canceled");

    // Accepted: both play in one room, across instances.
    carl.send(json!({"type": "challenge", "name": "tina"})).await;
    carl.recv_type("challenge_sent").await;
    let offer = tina.recv_type("challenged").await;
    tina.send(json!({"type": "accept", "challenge": offer["challenge"]})).await;
    let (mut players, _) = seated(tina, carl).await;
    let overs = play(&mut players, &mut [], 0, &GAME).await;
    assert_eq!(overs[0]["winner"], 1, "{overs:?}");

    // A challenge id that names no running instance, or none open there.
    let mut eve = named(&b, "eve").await;
    for (fake, id) in [("nowhere~c1-ABCDEF", 5), ("a~c999-ABCDEF", 6)] {
        eve.send(json!({"type": "decline", "challenge": fake, "id": id})).await;
        let e = eve.recv_type("error").await;
        assert_eq!((e["code"].clone(), e["id"].clone()), (json!("challenge_not_found"), json!(id)), "{e}");
    }

    // A challenger whose connection closes ends its challenge there.
    let mut dan = named(&b, "dan").await;
    let mut una = named(&a, "una").await;
    listed(&b, "una").await;
    dan.send(json!({"type": "challenge", "name": "una"})).await;
    dan.recv_type("challenge_sent").await;
    una.recv_type("challenged").await;
    drop(dan);
    assert_eq!(una.recv_type("challenge_ended").await["reason"], "canceled");
}

/// Whether `server` pairs quick matches for the cluster now (its /metrics).
async fn leads(server: &ServerProcess) -> bool {
    let (_, metrics) = tictactoe_tests::http_get(server.addr, "/metrics").await;
    metrics.lines().any(|l| l == "ttt_matchmaker_leading 1")
}

#[tokio::test]
async fn when_the_matchmakers_instance_dies_another_pairs_across_instances() {
    let url = shared().database("relay-leader");
    let redis = Redis::start();
    let spill = TempDir::new("relay-leader");
    let servers: Vec<ServerProcess> =
        ["a", "b", "c"].iter().map(|n| instance(&url, &redis, n, &spill)).collect();
    for s in &servers {
        bus_up(s).await;
    }
    // One leads (within the second each instance tries).
    let deadline = Instant::now() + Duration::from_secs(5);
    let leader = loop {
        let mut leading = Vec::new();
        for (i, s) in servers.iter().enumerate() {
            if leads(s).await {
                leading.push(i);
            }
        }
        if leading.len() == 1 {
            break leading[0];
        }
        assert!(leading.len() < 2, "two leaders: {leading:?}");
        assert!(Instant::now() < deadline, "nobody leads");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    servers[leader].signal("KILL");
    let killed = Instant::now();
    let rest: Vec<&ServerProcess> =
        servers.iter().enumerate().filter(|(i, _)| *i != leader).map(|(_, s)| s).collect();
    let (mut p, mut q) = (rest[0].client().await, rest[1].client().await);
    p.send(json!({"type": "quick_match"})).await;
    p.recv_type("queued").await;
    q.send(json!({"type": "quick_match"})).await;
    q.recv_type("queued").await;
    let (players, _) = seated(p, q).await;
    assert!(killed.elapsed() < Duration::from_secs(10), "paired {:?} after the kill", killed.elapsed());
    assert!(leads(rest[0]).await || leads(rest[1]).await, "another leads");
    drop(players);
}
