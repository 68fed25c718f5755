//! An arena tournament on a cluster of two real instances (Postgres and
//! Redis): players on both are paired across instances by the leader, and
//! after a SIGKILL of the leader the survivor's players are paired again by
//! the instance that takes the lead; every game counts once.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use tictactoe_tests::cluster::Two;
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::{Client, api, http_get};
use tokio::task::JoinHandle;

async fn account(server: &ServerProcess, name: &str) -> Client {
    let mut c = server.client().await;
    let token = c.register(name, true).await;
    c.sign_in(name, &token).await;
    c
}

/// Plays every game it is paired in (the first empty cell) until the
/// connection drops or `games` games ended, from `first` (a message read
/// already) or after joining; returns the game ids it saw end.
fn player(mut c: Client, id: String, games: usize, first: Option<Value>) -> JoinHandle<Vec<String>> {
    tokio::spawn(async move {
        if first.is_none() {
            c.send(json!({"type": "tournament_join", "id": id})).await;
        }
        let mut first = first;
        let (mut seen, mut board, mut me, mut size) = (Vec::new(), Vec::<bool>::new(), 0u64, 3usize);
        while seen.len() < games {
            let next = match first.take() {
                Some(msg) => Some(msg),
                None => tokio::time::timeout(Duration::from_secs(20), c.next_json()).await.ok().flatten(),
            };
            let Some(msg) = next else { break };
            let mut my_turn = false;
            match msg["type"].as_str() {
                Some("game_started") => {
                    size = msg["size"].as_u64().unwrap_or(3) as usize;
                    board = vec![false; size * size];
                    me = msg["you"].as_u64().unwrap_or(0);
                    my_turn = msg["turn"] == me;
                }
                Some("moved") => {
                    let (r, col) = (
                        msg["row"].as_u64().unwrap_or(0) as usize,
                        msg["col"].as_u64().unwrap_or(0) as usize,
                    );
                    if let Some(cell) = board.get_mut(r * size + col) {
                        *cell = true;
                    }
                    my_turn = msg["next"] == me;
                }
                Some("game_over") => seen.push(msg["game_id"].as_str().unwrap_or_default().to_owned()),
                _ => {}
            }
            if my_turn {
                if let Some(i) = board.iter().position(|taken| !taken) {
                    c.send(json!({"type": "move", "row": i / size, "col": i % size})).await;
                }
            }
        }
        seen
    })
}

async fn leading(server: &ServerProcess) -> bool {
    let (_, page) = http_get(server.addr, "/metrics").await;
    page.lines().any(|l| l.starts_with("ttt_matchmaker_leading 1"))
}

async fn view(server: &ServerProcess, id: &str) -> Value {
    let (status, view) = api(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(status, 200, "{view}");
    view
}

#[tokio::test]
async fn a_tournament_goes_on_across_instances_and_through_the_leaders_death() {
    let two = Two::start("tournament_cluster");
    let mut ann = account(&two.a, "ann").await;
    let t = {
        ann.send(json!({"type": "tournament_create", "name": "cluster arena",
            "clock": {"initial_ms": 30_000, "increment_ms": 0}, "duration_ms": 120_000}))
            .await;
        ann.recv_type("tournament").await
    };
    let id = t["id"].as_str().expect("id").to_owned();
    let bob = account(&two.a, "bob").await;
    let mut cid = account(&two.b, "cid").await;
    let dan = account(&two.b, "dan").await;
    // Alone in the tournament, ann (on a) and cid (on b) meet across instances.
    for c in [&mut ann, &mut cid] {
        c.send(json!({"type": "tournament_join", "id": id})).await;
    }
    let (sa, sc) = (ann.recv_type("game_started").await, cid.recv_type("game_started").await);
    assert_eq!(
        (sa["room"].clone(), sa["tournament"].as_str()),
        (sc["room"].clone(), Some(id.as_str())),
        "{sa} {sc}"
    );
    // Three games each before the kill.
    let players: Vec<JoinHandle<Vec<String>>> = vec![
        player(ann, id.clone(), 3, Some(sa)),
        player(bob, id.clone(), 3, None),
        player(cid, id.clone(), 3, Some(sc)),
        player(dan, id.clone(), 3, None),
    ];
    let mut seen = Vec::new();
    for p in players {
        seen.extend(p.await.expect("a player"));
    }
    let before = view(&two.b, &id).await;
    let ids: HashSet<String> = seen.iter().filter(|g| !g.is_empty()).cloned().collect();
    let games: Vec<String> = before["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|g| g.as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        ids.iter().all(|g| games.contains(g)),
        "every game the players saw is in the view: {ids:?} {games:?}"
    );
    assert_eq!(games.len(), games.iter().collect::<HashSet<_>>().len(), "each game once: {games:?}");
    assert_eq!(view(&two.a, &id).await["standings"], before["standings"], "both instances show the same");
    for g in &games {
        let (_, record) = api(two.a.addr, &format!("/api/games/{g}")).await;
        assert_eq!(record["tournament"], id.as_str(), "{record}");
    }

    // The leader dies; the other instance leads and pairs its own players.
    let (dead, alive) = if leading(&two.a).await { (&two.a, &two.b) } else { (&two.b, &two.a) };
    dead.signal("KILL");
    let (x, y) = (account(alive, "eve").await, account(alive, "fay").await);
    let after: Vec<JoinHandle<Vec<String>>> =
        [x, y].into_iter().map(|c| player(c, id.clone(), 2, None)).collect();
    let mut later = Vec::new();
    for p in after {
        later.extend(p.await.expect("a player"));
    }
    assert_eq!(
        later.iter().filter(|g| !g.is_empty()).count(),
        4,
        "eve and fay played two games after the kill: {later:?}"
    );
    let end = view(alive, &id).await;
    let all: Vec<&str> = end["games"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
    assert_eq!(all.len(), games.len() + 2, "the earlier games kept, each once, and two more: {end}");
    let eve =
        end["standings"].as_array().unwrap().iter().find(|r| r["name"] == "eve").cloned().unwrap_or_default();
    assert_eq!(eve["games"], 2, "{end}");
    for name in ["ann", "bob", "cid", "dan"] {
        // Intact but for the rank, which eve's and fay's games moved.
        let row = |v: &Value| {
            let mut r = v["standings"].as_array().unwrap().iter().find(|r| r["name"] == name).cloned();
            r.as_mut().and_then(Value::as_object_mut).map(|o| o.remove("rank"));
            r
        };
        assert_eq!(row(&end), row(&before), "{name}'s standing intact");
    }
}
