//! What an outside abuse probe found on the relay between instances, kept
//! fixed: two real `ttt-server` instances on one Postgres and one
//! `redis-server`.
//!
//! - Spectators on one instance watching a room on the other cost the
//!   room's instance about one Redis message per frame, not one per
//!   spectator (its `/metrics` say so), and each still gets every `moved`
//!   in order and the `game_over`.
//! - One address flooding `join_room` with codes nobody runs is refused
//!   with `rate_limited` (each refusal echoing its request's `id`) once past
//!   its budget of lookups, while another address is not; after the wait it
//!   was told, the flooding address joins a real room.
//! - The same address spread over both instances has one budget, not one
//!   per instance: Redis counts it.
//! - A game between players of two instances plays every move, each seen
//!   in order on both sides, while another address keeps the relaying
//!   instance's bus busy with lookups (its budget off): the bus's lookups
//!   are carried out apart from the relayed moves.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_tests::postgres::shared;
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::redis::{Redis, bus_up, cluster, instance, instance_flags};
use tictactoe_tests::{Client, TempDir, assert_judged, http_get};

/// The value of the series `series` (name and labels, as written) on
/// `server`'s `/metrics`; 0 before it was first counted.
async fn metric(server: &ServerProcess, series: &str) -> u64 {
    let (status, page) = http_get(server.addr, "/metrics").await;
    assert_eq!(status, 200, "{page}");
    let value =
        page.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.trim().parse::<f64>().ok()));
    value.unwrap_or(0.0) as u64
}

/// A room made on `server` by one player and joined by another there: the
/// players (X first) and the code.
async fn room_on(server: &ServerProcess) -> ([Client; 2], String) {
    let (mut maker, mut joiner) = (server.client().await, server.client().await);
    maker.send(json!({"type": "create_room"})).await;
    let room = maker.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    joiner.send(json!({"type": "join_room", "room": room})).await;
    let (sm, sj) = (maker.recv_type("game_started").await, joiner.recv_type("game_started").await);
    assert_eq!(sm["room"], sj["room"]);
    match sm["you"] == 1 {
        true => ([maker, joiner], room),
        false => ([joiner, maker], room),
    }
}

/// X wins on the top row.
const GAME: [[usize; 2]; 5] = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];

/// Spectators on the other instance.
const WATCHERS: usize = 40;

#[tokio::test]
async fn a_room_s_frames_cross_redis_once_per_instance_not_once_per_remote_spectator() {
    let (a, b, _redis, _spill) = cluster("relay-fanout").await;
    let (mut players, room) = room_on(&a).await;
    // From several addresses: each spectate on `b` is a lookup, and one
    // address may cause only 20 at once.
    let mut watchers = Vec::new();
    for i in 0..WATCHERS {
        let ip = IpAddr::from([127, 0, 1, 2 + (i / 10) as u8]);
        let mut w = b.client_from(ip).await;
        w.send(json!({"type": "spectate", "room": room, "id": i})).await;
        watchers.push(w);
    }
    for (i, w) in watchers.iter_mut().enumerate() {
        let state = w.recv_type("state").await;
        assert_eq!((state["room"].as_str(), state["id"].clone()), (Some(room.as_str()), json!(i)), "{state}");
    }
    let out = "ttt_relay_messages_total{way=\"out\"}";
    let items = "ttt_relay_items_total{way=\"out\"}";
    let (out_before, items_before) = (metric(&a, out).await, metric(&a, items).await);
    for (i, &[r, c]) in GAME.iter().enumerate() {
        let own = players[i % 2].play(r, c).await;
        assert_eq!(own["seq"], i + 1, "{own}");
        players[(i + 1) % 2].recv_type("moved").await;
    }
    // Every spectator saw every move, in order, then the end.
    for w in watchers.iter_mut() {
        let mut seen = Vec::new();
        let over = loop {
            let got = w.recv_any(&["moved", "game_over"]).await;
            match got["type"].as_str() {
                Some("moved") => seen.push(got["seq"].clone()),
                _ => break got,
            }
        };
        assert_eq!(seen, (1..=GAME.len()).map(|s| json!(s)).collect::<Vec<Value>>());
        assert_judged(3, &over);
        assert_eq!(over["winner"], 1, "{over}");
    }
    for p in players.iter_mut() {
        p.recv_type("game_over").await;
    }
    // Six frames (five moves and the end) for each of the 40 spectators.
    let frames = (GAME.len() + 1) as u64;
    let (sent, carried) = (metric(&a, out).await - out_before, metric(&a, items).await - items_before);
    eprintln!(
        "{frames} frames to {WATCHERS} spectators on b: {sent} messages published carrying {carried} items"
    );
    assert!(carried >= frames * WATCHERS as u64, "every spectator's frame was carried: {carried}");
    // About one per frame (a broadcast may be split over a few round trips
    // as the ghosts hand it to the bus), never one per spectator.
    assert!(sent * 4 <= frames * WATCHERS as u64, "{sent} messages published for {frames} frames");
}

/// Each of `flood` asks to join a code nobody runs (`seed` varies the
/// codes), with its index as `id`; returns how many were refused
/// `rate_limited`, how many were looked up (`room_not_found`), and the
/// longest wait a refusal told. Every answer must carry its request's `id`.
async fn join_codes_nobody_runs(flood: &mut [Client], seed: usize) -> (usize, usize, u64) {
    for (i, c) in flood.iter_mut().enumerate() {
        let code: String = (0..10).map(|k| char::from(b'A' + ((i * seed + k * 3) % 26) as u8)).collect();
        c.send(json!({"type": "join_room", "room": code, "id": i})).await;
    }
    let (mut refused, mut looked_up, mut wait_ms) = (0, 0, 0);
    for (i, c) in flood.iter_mut().enumerate() {
        let e = c.recv_type("error").await;
        assert_eq!(e["id"], json!(i), "each answer carries its request's id: {e}");
        match e["code"].as_str() {
            Some("rate_limited") => {
                refused += 1;
                let ms = e["retry_after_ms"].as_u64().expect("a wait");
                assert!(ms > 0, "{e}");
                wait_ms = wait_ms.max(ms);
            }
            Some("room_not_found") => looked_up += 1,
            _ => panic!("neither refused nor looked up: {e}"),
        }
    }
    (refused, looked_up, wait_ms)
}

/// Connections of the flooding address.
const FLOOD: usize = 40;

#[tokio::test]
async fn an_address_flooding_lookups_is_refused_with_rate_limited_and_joins_again_after_the_wait() {
    let (a, b, _redis, _spill) = cluster("relay-lookups").await;
    let (flooder, honest) = (IpAddr::from([127, 0, 2, 2]), IpAddr::from([127, 0, 2, 3]));
    let mut flood = Vec::new();
    for _ in 0..FLOOD {
        flood.push(b.client_from(flooder).await);
    }
    let started = Instant::now();
    let (refused, looked_up, wait_ms) = join_codes_nobody_runs(&mut flood, 7).await;
    // The budget: 20 at once, then 10 a second over at most the time the
    // flood took (however slowly this machine ran it).
    let allowed = 20 + (started.elapsed().as_secs_f64() * 10.0).ceil() as usize;
    eprintln!("{FLOOD} lookups from one address: {looked_up} made, {refused} refused");
    assert!(looked_up <= allowed, "{looked_up} lookups made, {allowed} allowed");
    assert!(refused > 0, "the flood was not refused");
    assert_eq!(refused + looked_up, FLOOD);
    // Another address is not held back by the flooder's budget.
    let mut maker = a.client().await;
    maker.send(json!({"type": "create_room"})).await;
    let room = maker.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    let mut other = b.client_from(honest).await;
    other.send(json!({"type": "spectate", "room": room, "id": "o"})).await;
    assert_eq!(other.recv_type("state").await["id"], "o");
    // After the wait it was told, the flooding address finds a real room
    // (a lookup comes back every 100 ms: a wait told early in the flood
    // may have been spent by a lookup made since).
    tokio::time::sleep(Duration::from_millis(wait_ms.max(100))).await;
    let c = &mut flood[0];
    c.send(json!({"type": "join_room", "room": room, "id": "back"})).await;
    let started = c.recv_any(&["game_started", "error"]).await;
    assert_eq!(started["type"], "game_started", "{started}");
    assert_eq!(started["room"], json!(room));
    maker.recv_type("game_started").await;
}

/// One address spread over two instances has one lookup budget: Redis
/// charges each lookup to the address's bucket in the script that makes it.
#[tokio::test]
async fn an_address_spread_over_two_instances_has_one_lookup_budget() {
    let (a, b, redis, _spill) = cluster("relay-lookups-both").await;
    let flooder = IpAddr::from([127, 0, 2, 4]);
    // Half on each: each instance's own budget (20 at once) takes all of
    // its half, so only the cluster's can refuse any.
    let mut flood = Vec::new();
    for i in 0..FLOOD {
        flood.push(if i % 2 == 0 { a.client_from(flooder).await } else { b.client_from(flooder).await });
    }
    let started = Instant::now();
    let (refused, looked_up, _) = join_codes_nobody_runs(&mut flood, 11).await;
    let allowed = 20 + (started.elapsed().as_secs_f64() * 10.0).ceil() as usize;
    eprintln!("{FLOOD} lookups from one address over two instances: {looked_up} made, {refused} refused");
    assert!(looked_up <= allowed, "{looked_up} lookups made, {allowed} allowed across the cluster");
    assert_eq!(refused + looked_up, FLOOD);
    // The count is Redis's: a bucket for the address.
    let client = ::redis::Client::open(redis.url()).expect("a Redis URL");
    let mut conn = client.get_multiplexed_async_connection().await.expect("Redis answers");
    let kept: Vec<String> =
        ::redis::cmd("HKEYS").arg("ttt:lookups:127.0.2.4").query_async(&mut conn).await.expect("HKEYS");
    assert_eq!(kept, ["tokens", "at"]);
    // Another address has its own.
    let mut other = a.client_from(IpAddr::from([127, 0, 2, 5])).await;
    other.send(json!({"type": "spectate", "room": "QQQQQQQQQQ", "id": "o"})).await;
    let e = other.recv_type("error").await;
    assert_eq!((e["code"].as_str(), e["id"].as_str()), (Some("room_not_found"), Some("o")), "{e}");
    // A key of another type where an address's bucket would be is no
    // bucket: its lookups are made, and the bus stays up.
    let odd = IpAddr::from([127, 0, 2, 6]);
    let _: () =
        ::redis::cmd("SET").arg("ttt:lookups:127.0.2.6").arg("x").query_async(&mut conn).await.expect("SET");
    let mut c = b.client_from(odd).await;
    c.send(json!({"type": "join_room", "room": "QQQQQQQQQQ", "id": "odd"})).await;
    let e = c.recv_type("error").await;
    assert_eq!((e["code"].as_str(), e["id"].as_str()), (Some("room_not_found"), Some("odd")), "{e}");
    let (_, health) = http_get(b.addr, "/healthz").await;
    assert!(health.contains("\"bus\":\"ok\""), "{health}");
    let lost = b.log().into_iter().filter(|l| l.contains("cannot be reached")).collect::<Vec<_>>();
    assert!(lost.is_empty(), "the bus went down over a lookup: {lost:?}");
}

/// Connections that keep looking up codes nobody runs.
const LOOKERS: usize = 50;

#[tokio::test]
async fn relayed_moves_keep_flowing_while_another_address_floods_lookups() {
    let url = shared().database("relay-busy-lookups");
    let redis = Redis::start();
    let spill = TempDir::new("relay-busy-lookups");
    let a = instance(&url, &redis, "a", &spill);
    // No budget on `b`: every lookup of the flood reaches Redis.
    let more =
        ["--reconnect-grace-ms", "30000", "--turn-timeout-ms", "60000", "--lookups-per-second-per-ip", "0"];
    let flags = instance_flags(&url, &redis, "b", &spill.path, &more);
    let b = ServerProcess::start(&flags.iter().map(String::as_str).collect::<Vec<_>>());
    bus_up(&a).await;
    bus_up(&b).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    // The room on `a`, its second player on `b`.
    let mut maker = a.client().await;
    maker.send(json!({"type": "create_room"})).await;
    let room = maker.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    let mut joiner = b.client_from(IpAddr::from([127, 0, 3, 2])).await;
    // The flood, from another address, until the game is over.
    let mut lookers = Vec::new();
    for _ in 0..LOOKERS {
        lookers.push(b.client_from(IpAddr::from([127, 0, 3, 3])).await);
    }
    let over = Arc::new(AtomicBool::new(false));
    let flooding = tokio::spawn({
        let over = over.clone();
        async move {
            let mut answered = 0usize;
            let mut round = 0usize;
            while !over.load(Ordering::Relaxed) {
                for (i, c) in lookers.iter_mut().enumerate() {
                    let code: String = (0..10)
                        .map(|k| char::from(b'A' + ((round * 11 + i * 7 + k * 3) % 26) as u8))
                        .collect();
                    c.send(json!({"type": "join_room", "room": code, "id": i})).await;
                }
                for (i, c) in lookers.iter_mut().enumerate() {
                    let e = c.recv_type("error").await;
                    assert_eq!(
                        (e["code"].as_str(), e["id"].clone()),
                        (Some("room_not_found"), json!(i)),
                        "{e}"
                    );
                    answered += 1;
                }
                round += 1;
            }
            answered
        }
    });
    joiner.send(json!({"type": "join_room", "room": room})).await;
    let (sm, sj) = (maker.recv_type("game_started").await, joiner.recv_type("game_started").await);
    assert_eq!(sm["room"], sj["room"]);
    let mut players = if sm["you"] == 1 { [maker, joiner] } else { [joiner, maker] };
    for (i, &[r, c]) in GAME.iter().enumerate() {
        let own = players[i % 2].play(r, c).await;
        assert_eq!(own["seq"], i + 1, "{own}");
        let theirs = players[(i + 1) % 2].recv_type("moved").await;
        assert_eq!(theirs["seq"], i + 1, "{theirs}");
    }
    for p in players.iter_mut() {
        let end = p.recv_type("game_over").await;
        assert_eq!(end["winner"], 1, "{end}");
    }
    over.store(true, Ordering::Relaxed);
    let answered = flooding.await.expect("the flood's task");
    eprintln!("{answered} lookups answered while the game was played");
    assert!(answered >= LOOKERS, "the flood was answered: {answered}");
}
