//! Many instances on one Postgres and one Redis (`--redis`), each the real
//! `ttt-server` binary: a game on an instance that is SIGKILLed goes on on
//! another within 10 s, as of its last saved move with the clock paused; a
//! SIGTERM hands games over with no move lost; an instance stalled while
//! its games were adopted never acts on them again (it checks its lease
//! first, and the database would refuse its writes) and sends their players
//! to the adopter; Redis down makes
//! `/healthz` degraded and leaves games going; and `--redis` without
//! Postgres is refused at start.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_tests::cluster::{ADOPTION, GAME, Two, both_resume, finish, game_on, saved};
use tictactoe_tests::postgres::{Postgres, name_of, shared};
use tictactoe_tests::process::server_bin;
use tictactoe_tests::redis::{Redis, instance};
use tictactoe_tests::{Client, TempDir, http_get};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

#[tokio::test]
async fn a_killed_instances_game_is_adopted_within_10_s_and_goes_on_on_another() {
    let pg = shared();
    let Two { a, b, url, redis: _redis, spill: _spill } = Two::start("cluster-kill");
    let (mut old, tokens, room) = game_on(&a, &GAME[..3]).await;
    // The contract lets a crash lose the last 100 ms: this waits for them.
    saved(pg, &url, &room, 3).await;
    a.signal("KILL");
    let killed = Instant::now();
    for c in &mut old {
        let (_, close) = c.until_close().await;
        assert_eq!(close, None, "a killed instance sends no close frame");
    }
    let mut players = both_resume(&b, &tokens, killed, &json!(GAME[..3])).await;
    let took = killed.elapsed();
    assert!(took < ADOPTION, "adopted after {took:?}");
    let owner = pg.psql(name_of(&url), &format!("SELECT owner FROM live_games WHERE room = '{room}'"));
    assert_eq!(owner.trim(), "b");
    assert!(b.log().iter().any(|l| l.contains("adopted the games")), "{:?}", b.log());
    let (_, metrics) = http_get(b.addr, "/metrics").await;
    assert!(metrics.lines().any(|l| l == "ttt_games_adopted_total 1"), "{metrics}");
    assert!(metrics.lines().any(|l| l == "ttt_bus_up 1"), "{metrics}");
    finish(&b, &mut players, 3, &GAME).await;
    drop(a);
}

#[tokio::test]
async fn sigterm_hands_the_games_over_with_no_move_lost() {
    let Two { a, b, redis: _redis, spill: _spill, .. } = Two::start("cluster-term");
    // The last move is made just before the signal: a stop loses none.
    let (mut old, tokens, _) = game_on(&a, &GAME[..3]).await;
    a.signal("TERM");
    let stopped = Instant::now();
    for c in &mut old {
        let (before, close) = c.until_close().await;
        assert!(!before.iter().any(|m| m["type"] == "game_over"), "{before:?}");
        assert_eq!(close, Some(CloseCode::Restart));
    }
    let status = a.exits_within(Duration::from_secs(10)).await;
    assert!(status.success(), "exit status {status}");
    // Told to come back (1012), each player resumes on the other instance at
    // once, and is not refused: the game was handed over before the close.
    let mut players = Vec::new();
    for token in &tokens {
        let mut c = b.client().await;
        c.send(json!({"type": "resume", "token": token})).await;
        let state = c.recv_any(&["state", "error"]).await;
        assert_eq!(state["moves"], json!(GAME[..3]), "{state}");
        assert!(state["clock_ms"].as_u64().is_some_and(|ms| ms > 50_000), "the clock was paused: {state}");
        players.push(c);
    }
    assert!(stopped.elapsed() < ADOPTION);
    let mut players: [Client; 2] = players.try_into().unwrap_or_else(|_| panic!("two players"));
    finish(&b, &mut players, 3, &GAME).await;
}

#[tokio::test]
async fn an_instance_cut_off_while_its_game_was_adopted_never_writes_to_it() {
    let pg = shared();
    let Two { a, b, url, redis: _redis, spill: _spill } = Two::start("cluster-cut");
    let (mut old, tokens, room) = game_on(&a, &GAME[..2]).await;
    saved(pg, &url, &room, 2).await;
    // Frozen, `a` stops renewing its lease while its sockets stay open.
    a.signal("STOP");
    let frozen = Instant::now();
    // The players come to `b` once it has given `a` up: a `resume` sent
    // earlier is relayed to `a`, which, once back, would hand X's seat on
    // its copy to it before X's old connection could move there.
    let forgotten = ["an instance left the cluster", "an instance stopped answering on the bus"];
    while !b.log().iter().any(|l| l.contains("instance=a") && forgotten.iter().any(|f| l.contains(f))) {
        assert!(frozen.elapsed() < ADOPTION, "b did not notice that a stopped: {:?}", b.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut players = both_resume(&b, &tokens, frozen, &json!(GAME[..2])).await;
    players[0].play(0, 1).await;
    players[1].recv_type("moved").await;
    // Back, `a` still has its copy of the game: X's old connection moves
    // there (a different move). `a`'s lease ran out meanwhile: before its
    // copy acts, it asks the database, and lets the game go.
    a.signal("CONT");
    old[0].send(json!({"type": "move", "row": 2, "col": 2})).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !a.log().iter().any(|l| l.contains("they are let go")) {
        assert!(Instant::now() < deadline, "a did not let the game go: {:?}", a.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let db = name_of(&url);
    assert_eq!(pg.psql(db, &format!("SELECT owner FROM live_games WHERE room = '{room}'")).trim(), "b");
    let saved = pg
        .psql(db, &format!("SELECT encode(cells, 'hex') FROM live_moves WHERE room = '{room}' ORDER BY seq"));
    assert!(!saved.contains("02000200"), "a's move (2, 2) is not saved: {saved}");
    // The players still on `a`'s copy are sent to where the game is now,
    // and heard nothing of it from `a`.
    for c in &mut old {
        let (before, close) = c.until_close().await;
        assert!(before.iter().all(|m| m["type"] != "moved" && m["type"] != "game_over"), "{before:?}");
        assert!(matches!(close, Some(CloseCode::Restart)), "{close:?}");
    }
    // The game goes on on `b`, and its record is b's.
    finish(&b, &mut players, 3, &GAME).await;
    drop(a);
}

#[tokio::test]
async fn a_resume_relayed_to_an_instance_since_given_up_gets_nothing_from_its_stale_copy() {
    let pg = shared();
    let Two { a, b, url, redis: _redis, spill: _spill } = Two::start("cluster-stale");
    let (mut old, tokens, room) = game_on(&a, &GAME[..2]).await;
    saved(pg, &url, &room, 2).await;
    // Frozen just now, `a` still counts as alive on `b`: X's resume is
    // relayed to `a` and waits in its socket, until `b` gives `a` up,
    // adopts the game and answers the resume itself.
    a.signal("STOP");
    let frozen = Instant::now();
    let mut players = both_resume(&b, &tokens, frozen, &json!(GAME[..2])).await;
    players[0].play(0, 1).await;
    players[1].recv_type("moved").await;
    // Back, `a` asks the database before its copy acts on the resume that
    // waited, and lets the game go: X's old connection is sent on (1012)...
    a.signal("CONT");
    let (_, close) = old[0].until_close().await;
    assert_eq!(close, Some(CloseCode::Restart));
    // ...and what its copy sends that resume never reaches X on `b`.
    finish(&b, &mut players, 3, &GAME).await;
    players[0].recv_type("game_over").await;
    let states: Vec<&Value> = players[0].received.iter().filter(|m| m["type"] == "state").collect();
    assert_eq!(states.len(), 1, "{states:?}");
    drop(a);
}

#[tokio::test]
async fn redis_down_makes_healthz_degraded_and_games_go_on() {
    let pg = shared();
    let url = pg.database("cluster-redis");
    let mut redis = Redis::start();
    let spill = TempDir::new("cluster-redis");
    let a = instance(&url, &redis, "a", &spill);
    let listening = Instant::now();
    let health = |status: u16, bus: &'static str, within: Duration| {
        let addr = a.addr;
        async move {
            let deadline = Instant::now() + within;
            loop {
                let (got, body) = http_get(addr, "/healthz").await;
                let body: Value = serde_json::from_str(&body).expect("json");
                if got == status && (body["bus"] == bus) == (bus == "ok") {
                    return body;
                }
                assert!(Instant::now() < deadline, "/healthz is still {got} {body}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let body = health(200, "ok", Duration::from_secs(10)).await;
    assert!(listening.elapsed() < Duration::from_secs(10));
    assert_eq!((body["instance"].clone(), body["store"].clone()), (json!("a"), json!("ok")));
    redis.kill();
    let body = health(503, "down", Duration::from_secs(5)).await;
    assert_eq!(body["status"], "degraded");
    // Meanwhile the instance keeps its games going, and starts new ones.
    let (mut players, _, _) = game_on(&a, &GAME[..2]).await;
    finish(&a, &mut players, 2, &GAME).await;
    redis.resume();
    health(200, "ok", Duration::from_secs(10)).await;
}

#[test]
fn redis_without_postgres_is_refused_at_start() {
    let dir = TempDir::new("cluster-refused");
    let sqlite = format!("sqlite:{}", dir.path.join("ttt.db").display());
    for database in [sqlite.as_str(), "none"] {
        let out = Command::new(server_bin())
            .args(["--bind", "127.0.0.1:0", "--database", database, "--redis", "redis://127.0.0.1:1"])
            .output()
            .expect("run ttt-server");
        assert!(!out.status.success(), "{database}: it started");
        let said =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(said.contains("--redis needs --database postgres"), "{database}: {said}");
    }
}

#[test]
fn a_second_instance_with_a_running_instances_name_is_refused() {
    let pg = shared();
    let url = pg.database("cluster-namesake");
    let redis = Redis::start();
    let spill = TempDir::new("cluster-namesake");
    let _a = instance(&url, &redis, "a", &spill);
    let out = Command::new(server_bin())
        .args(["--bind", "127.0.0.1:0", "--database", &url, "--redis", &redis.url(), "--instance", "a"])
        .output()
        .expect("run ttt-server");
    assert!(!out.status.success(), "a namesake started");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("another instance named \"a\" is running"), "{said}");
}

/// The names `who` lists on `server`.
async fn who(c: &mut Client) -> Vec<String> {
    c.send(json!({"type": "who", "id": "w"})).await;
    let online = c.recv_type("online").await;
    let players = online["players"].as_array().cloned().unwrap_or_default();
    players.iter().filter_map(|p| p["name"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn who_lists_the_players_of_every_instance_and_account_names_hold_cluster_wide() {
    let pg = shared();
    let url = pg.database("cluster-who");
    let redis = Redis::start();
    let spill = TempDir::new("cluster-who");
    let a = instance(&url, &redis, "a", &spill);
    let b = instance(&url, &redis, "b", &spill);
    let mut ann = a.client().await;
    ann.send(json!({"type": "hello", "name": "ann"})).await;
    let mut bob = b.client().await;
    bob.send(json!({"type": "hello", "name": "bob"})).await;
    // Each instance tells the others every second.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (on_a, on_b) = (who(&mut ann).await, who(&mut bob).await);
        if on_a == ["house", "ann", "bob"] && on_b == on_a {
            break;
        }
        assert!(Instant::now() < deadline, "a lists {on_a:?}, b lists {on_b:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Gone from `a`, ann is gone from b's list too.
    drop(ann);
    let deadline = Instant::now() + Duration::from_secs(5);
    while who(&mut bob).await != ["house", "bob"] {
        assert!(Instant::now() < deadline, "ann is still listed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // An account made on `a` owns its name on `b`.
    let mut cy = a.client().await;
    cy.register("cy", false).await;
    let mut guest = b.client().await;
    guest.send(json!({"type": "hello", "name": "CY", "id": 1})).await;
    let refused = guest.recv_type("error").await;
    assert_eq!(refused["code"], "name_taken", "{refused}");
}

#[tokio::test]
async fn after_postgres_was_down_past_the_lease_no_instance_takes_anothers_games() {
    let pg = Postgres::start();
    let url = pg.database("cluster-outage");
    let redis = Redis::start();
    let spill = TempDir::new("cluster-outage");
    let a = instance(&url, &redis, "a", &spill);
    let b = instance(&url, &redis, "b", &spill);
    let (_on_a, _, room_a) = game_on(&a, &GAME[..1]).await;
    let (_on_b, _, room_b) = game_on(&b, &GAME[..1]).await;
    saved(&pg, &url, &room_a, 1).await;
    saved(&pg, &url, &room_b, 1).await;
    // Down for longer than a lease: every lease looks run out when it is back.
    pg.crash();
    tokio::time::sleep(Duration::from_secs(6)).await;
    pg.resume();
    // Each renews its own before any would adopt another's: a lease and more
    // after Postgres is back, each still holds its own game.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let owner =
        |room: &str| pg.psql(name_of(&url), &format!("SELECT owner FROM live_games WHERE room = '{room}'"));
    assert_eq!(
        (owner(&room_a).trim().to_owned(), owner(&room_b).trim().to_owned()),
        ("a".into(), "b".into())
    );
    for server in [&a, &b] {
        assert!(!server.log().iter().any(|l| l.contains("adopted the games")), "{:?}", server.log());
    }
}
