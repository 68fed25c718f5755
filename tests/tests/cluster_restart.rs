//! An instance of a cluster started again under the name it had (after a
//! SIGKILL or a SIGTERM) is one of the cluster from its first second: a
//! `join_room` across instances — through it, or to a room made on it —
//! seats the joiner, who hears `game_started` as the creator does, and
//! their game is played.

use std::time::Duration;

use serde_json::json;
use tictactoe_tests::Client;
use tictactoe_tests::cluster::Two;
use tictactoe_tests::redis::instance;

/// `a` is stopped with `signal` and started again; then at once a room is
/// made on one instance and joined from the other (the room on the new `a`
/// if `on_new`, else on `b`), and the two play a move each.
async fn join_across_a_restart(signal: &str, label: &str, on_new: bool) {
    let Two { a, b, url, redis, spill } = Two::start(label);
    // `b` has met `a`'s first run: a player on `b` is in a room on `a`.
    let (mut host, mut guest) = (a.client().await, b.client().await);
    host.send(json!({"type": "create_room"})).await;
    let first = host.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    guest.send(json!({"type": "join_room", "room": first})).await;
    guest.recv_type("game_started").await;
    a.signal(signal);
    let status = a.exits_within(Duration::from_secs(10)).await;
    assert_eq!(status.success(), signal == "TERM", "{status}");
    let a = instance(&url, &redis, "a", &spill);
    let (mut creator, mut joiner) = match on_new {
        true => (a.client().await, b.client().await),
        false => (b.client().await, a.client().await),
    };
    creator.send(json!({"type": "create_room"})).await;
    let room = creator.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    joiner.send(json!({"type": "join_room", "room": room})).await;
    let started = joiner.recv_any(&["game_started", "error"]).await;
    assert_eq!(started["type"], "game_started", "{started}");
    let other = creator.recv_type("game_started").await;
    assert_eq!(other["room"], started["room"]);
    let (mut x, mut o): (Client, Client) = match started["you"] == 1 {
        true => (joiner, creator),
        false => (creator, joiner),
    };
    x.play(1, 1).await;
    assert_eq!(o.recv_type("moved").await["row"], 1);
    o.play(0, 0).await;
    assert_eq!(x.recv_type("moved").await["col"], 0);
}

#[tokio::test]
async fn a_join_through_an_instance_killed_and_started_again_reaches_the_room() {
    join_across_a_restart("KILL", "cluster-restart-kill", false).await;
}

#[tokio::test]
async fn a_join_through_an_instance_stopped_and_started_again_reaches_the_room() {
    join_across_a_restart("TERM", "cluster-restart-term", false).await;
}

#[tokio::test]
async fn a_join_of_a_room_made_on_an_instance_killed_and_started_again_reaches_it() {
    join_across_a_restart("KILL", "cluster-restart-kill-room", true).await;
}

#[tokio::test]
async fn a_join_of_a_room_made_on_an_instance_stopped_and_started_again_reaches_it() {
    join_across_a_restart("TERM", "cluster-restart-term-room", true).await;
}
