//! Challenges and `who` over real sockets: accepting, declining with a
//! reason, expiry, cancelling by disconnect and by starting another game,
//! every refusal (`player_not_found`, `challenge_not_found`, `busy`), the
//! limits on open challenges (per challenger, per account, per address, per
//! challenged player) and their release, and statuses changing as players
//! queue and play.

use std::net::IpAddr;

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_server::lobby::{MAX_RECEIVED, MAX_RECEIVED_PER_ADDRESS, MAX_SENT, MAX_SENT_PER_ADDRESS};
use tictactoe_tests::{Client, TempDir, TestServer, test_config};

/// A client that said hello as `name`, listed once its ping is answered.
async fn named(server: &TestServer, name: &str) -> Client {
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": name})).await;
    c.send(json!({"type": "ping"})).await;
    c.recv_type("pong").await;
    c
}

/// [`named`], from the loopback address `127.0.0.{host}`.
async fn named_from(server: &TestServer, host: u8, name: &str) -> Client {
    let mut c = server.client_from(IpAddr::from([127, 0, 0, host])).await;
    c.send(json!({"type": "hello", "name": name})).await;
    c.send(json!({"type": "ping"})).await;
    c.recv_type("pong").await;
    c
}

/// `from` challenges `name` and is refused with `busy`; returns the text.
async fn refused(from: &mut Client, name: &str) -> String {
    from.send(json!({"type": "challenge", "name": name, "id": "r"})).await;
    let err = from.expect_error(ErrorCode::Busy, Some(json!("r"))).await;
    err["message"].as_str().unwrap_or_default().to_owned()
}

/// `who`, as (name, status) pairs.
async fn who(c: &mut Client) -> Vec<(String, String)> {
    c.send(json!({"type": "who", "id": "w"})).await;
    let online = c.recv_type("online").await;
    assert_eq!(online["id"], "w");
    online["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p["status"].as_str().unwrap().to_owned()))
        .collect()
}

fn status_of(list: &[(String, String)], name: &str) -> String {
    list.iter().find(|(n, _)| n == name).map(|(_, s)| s.clone()).unwrap_or_else(|| "absent".into())
}

/// `from` challenges `to` (by `name`) on 3×3; returns the challenge id, as
/// both saw it.
async fn challenge(from: &mut Client, to: &mut Client, name: &str) -> String {
    from.send(json!({"type": "challenge", "name": name, "id": 1})).await;
    let sent = from.recv_type("challenge_sent").await;
    assert_eq!(sent["id"], 1);
    let got = to.recv_type("challenged").await;
    assert_eq!(got["challenge"], sent["challenge"]);
    assert_eq!((got["size"].clone(), got["win"].clone()), (json!(3), json!(3)));
    got["challenge"].as_str().unwrap().to_owned()
}

fn ended(msg: &Value, challenge: &str, reason: &str) {
    assert_eq!(msg["type"], "challenge_ended", "{msg}");
    assert_eq!((msg["challenge"].as_str(), msg["reason"].as_str()), (Some(challenge), Some(reason)), "{msg}");
    assert!(msg["message"].as_str().is_some_and(|m| !m.is_empty()), "{msg}");
}

#[tokio::test]
async fn an_accepted_challenge_starts_one_game_for_both() {
    let server = TestServer::start(test_config()).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "Bob").await;
    let id = challenge(&mut ann, &mut bob, "BOB").await;
    let offer = &bob.received[bob.received.len() - 1];
    assert_eq!(offer["from"], json!({"name": "ann", "account": false, "bot": false, "rating": null}));
    bob.send(json!({"type": "accept", "challenge": id})).await;
    let (sa, sb) = (ann.recv_type("game_started").await, bob.recv_type("game_started").await);
    assert_eq!(sa["room"], sb["room"]);
    assert_ne!(sa["you"], sb["you"]);
    // The game is an ordinary one: whoever is X moves.
    let (x, o) = if sa["you"] == 1 { (&mut ann, &mut bob) } else { (&mut bob, &mut ann) };
    let moved = x.play(1, 1).await;
    assert_eq!(moved["seq"], 1);
    assert_eq!(o.recv_type("moved").await["seq"], 1);
    // Accepting again: it is gone.
    bob.send(json!({"type": "accept", "challenge": id, "id": 2})).await;
    bob.expect_error(ErrorCode::Busy, Some(json!(2))).await;
}

#[tokio::test]
async fn a_declined_challenge_tells_the_challenger_why() {
    let server = TestServer::start(test_config()).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    let id = challenge(&mut ann, &mut bob, "bob").await;
    bob.send(json!({"type": "decline", "challenge": id, "reason": "only 15x15 today"})).await;
    let end = ann.recv_type("challenge_ended").await;
    ended(&end, &id, "declined");
    assert!(end["message"].as_str().unwrap().contains("only 15x15 today"), "{end}");
    // The decliner gets no reply; a second decline finds nothing.
    bob.send(json!({"type": "decline", "challenge": id, "id": 3})).await;
    bob.expect_error(ErrorCode::ChallengeNotFound, Some(json!(3))).await;
    // Too long a reason is refused and changes nothing.
    let id = challenge(&mut ann, &mut bob, "bob").await;
    bob.send(json!({"type": "decline", "challenge": id, "reason": "x".repeat(101), "id": 4})).await;
    bob.expect_error(ErrorCode::BadMessage, Some(json!(4))).await;
    bob.send(json!({"type": "accept", "challenge": id})).await;
    ann.recv_type("game_started").await;
}

#[tokio::test]
async fn an_unanswered_challenge_expires_for_both() {
    let server = TestServer::start(Config { challenge_expiry_ms: 300, ..test_config() }).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    let id = challenge(&mut ann, &mut bob, "bob").await;
    assert_eq!(bob.received[bob.received.len() - 1]["expires_ms"], 300);
    ended(&ann.recv_type("challenge_ended").await, &id, "expired");
    ended(&bob.recv_type("challenge_ended").await, &id, "expired");
    bob.send(json!({"type": "accept", "challenge": id, "id": 5})).await;
    bob.expect_error(ErrorCode::ChallengeNotFound, Some(json!(5))).await;
}

#[tokio::test]
async fn a_disconnect_cancels_the_challenges_of_either_side() {
    let server = TestServer::start(test_config()).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    let id = challenge(&mut ann, &mut bob, "bob").await;
    drop(bob);
    ended(&ann.recv_type("challenge_ended").await, &id, "canceled");
    let mut cy = named(&server, "cy").await;
    let id = challenge(&mut ann, &mut cy, "cy").await;
    drop(ann);
    let end = cy.recv_type("challenge_ended").await;
    ended(&end, &id, "canceled");
    assert!(end["message"].as_str().unwrap().contains("ann"), "{end}");
}

#[tokio::test]
async fn starting_another_game_cancels_challenges_on_both_sides() {
    let server = TestServer::start(test_config()).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    // The challenger queues for a quick match.
    let id = challenge(&mut ann, &mut bob, "bob").await;
    ann.send(json!({"type": "quick_match"})).await;
    ended(&ann.recv_type("challenge_ended").await, &id, "canceled");
    ended(&bob.recv_type("challenge_ended").await, &id, "canceled");
    bob.send(json!({"type": "accept", "challenge": id, "id": 6})).await;
    bob.expect_error(ErrorCode::ChallengeNotFound, Some(json!(6))).await;
    ann.send(json!({"type": "leave"})).await;
    // The challenged player plays the house instead.
    let id = challenge(&mut ann, &mut bob, "bob").await;
    bob.send(json!({"type": "play_house"})).await;
    ended(&ann.recv_type("challenge_ended").await, &id, "canceled");
    ended(&bob.recv_type("challenge_ended").await, &id, "canceled");
}

#[tokio::test]
async fn a_player_waiting_for_a_quick_match_may_accept_and_one_paired_is_no_longer_challenged() {
    let server = TestServer::start(test_config()).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    bob.send(json!({"type": "quick_match", "size": 4})).await;
    bob.recv_type("queued").await;
    // Waiting is no bar: accepting leaves the queue.
    let id = challenge(&mut ann, &mut bob, "bob").await;
    bob.send(json!({"type": "accept", "challenge": id})).await;
    let (sa, sb) = (ann.recv_type("game_started").await, bob.recv_type("game_started").await);
    assert_eq!((sa["room"].clone(), sa["size"].clone()), (sb["room"].clone(), json!(3)));
    // Bob is out of the queue: a newcomer for 4×4 waits.
    let mut cy = named(&server, "cy").await;
    cy.send(json!({"type": "quick_match", "size": 4})).await;
    cy.recv_type("queued").await;
    // Cy is challenged while waiting, then paired: the challenge ends.
    let mut dee = named(&server, "dee").await;
    let id = challenge(&mut dee, &mut cy, "cy").await;
    let mut eve = named(&server, "eve").await;
    eve.send(json!({"type": "quick_match", "size": 4})).await;
    cy.recv_type("game_started").await;
    ended(&dee.recv_type("challenge_ended").await, &id, "canceled");
}

#[tokio::test]
async fn refusals_name_what_is_wrong_and_change_nothing() {
    let server = TestServer::start(test_config()).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    // player_not_found: nobody by that name, or yourself.
    ann.send(json!({"type": "challenge", "name": "zed", "id": 1})).await;
    ann.expect_error(ErrorCode::PlayerNotFound, Some(json!(1))).await;
    ann.send(json!({"type": "challenge", "name": "ANN", "id": 2})).await;
    ann.expect_error(ErrorCode::PlayerNotFound, Some(json!(2))).await;
    // invalid_size / invalid_win, as for quick_match.
    ann.send(json!({"type": "challenge", "name": "bob", "size": 1000, "id": 3})).await;
    ann.expect_error(ErrorCode::InvalidSize, Some(json!(3))).await;
    ann.send(json!({"type": "challenge", "name": "bob", "size": 5, "win": 6, "id": 4})).await;
    ann.expect_error(ErrorCode::InvalidWin, Some(json!(4))).await;
    // challenge_not_found: an id never given, or one given to someone else.
    bob.send(json!({"type": "accept", "challenge": "nope", "id": 5})).await;
    bob.expect_error(ErrorCode::ChallengeNotFound, Some(json!(5))).await;
    let mut cy = named(&server, "cy").await;
    let id = challenge(&mut ann, &mut bob, "bob").await;
    cy.send(json!({"type": "accept", "challenge": id, "id": 6})).await;
    cy.expect_error(ErrorCode::ChallengeNotFound, Some(json!(6))).await;
    // busy: too many open challenges.
    for _ in 1..tictactoe_server::lobby::MAX_SENT {
        challenge(&mut ann, &mut bob, "bob").await;
    }
    ann.send(json!({"type": "challenge", "name": "bob", "id": 7})).await;
    ann.expect_error(ErrorCode::Busy, Some(json!(7))).await;
    // A refused accept ends none of the challenges bob holds.
    bob.send(json!({"type": "accept", "challenge": "nope", "id": 11})).await;
    bob.expect_error(ErrorCode::ChallengeNotFound, Some(json!(11))).await;
    // busy: the challenger is in a game, or the target is.
    cy.send(json!({"type": "play_house", "size": 4})).await;
    cy.recv_type("game_started").await;
    cy.send(json!({"type": "challenge", "name": "bob", "id": 8})).await;
    cy.expect_error(ErrorCode::Busy, Some(json!(8))).await;
    bob.send(json!({"type": "challenge", "name": "cy", "id": 9})).await;
    bob.expect_error(ErrorCode::Busy, Some(json!(9))).await;
    // Before hello a connection is nobody: it cannot challenge.
    let mut nobody = server.client().await;
    nobody.send(json!({"type": "challenge", "name": "bob", "id": 12})).await;
    nobody.expect_error(ErrorCode::InvalidName, Some(json!(12))).await;
    // The house's name is taken.
    let mut fake = server.client().await;
    fake.send(json!({"type": "hello", "name": "House", "id": 10})).await;
    fake.expect_error(ErrorCode::NameTaken, Some(json!(10))).await;
    // Ann's challenges are all still open: bob accepts the first of them.
    bob.send(json!({"type": "accept", "challenge": id})).await;
    bob.recv_type("game_started").await;
}

#[tokio::test]
async fn who_shows_players_idle_queued_and_playing() {
    let server = TestServer::start(test_config()).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    let list = who(&mut ann).await;
    assert_eq!(list[0], ("house".into(), "idle".into()));
    assert_eq!((status_of(&list, "ann"), status_of(&list, "bob")), ("idle".into(), "idle".into()));
    bob.send(json!({"type": "quick_match", "size": 5})).await;
    bob.recv_type("queued").await;
    assert_eq!(status_of(&who(&mut ann).await, "bob"), "queued");
    ann.send(json!({"type": "quick_match", "size": 5})).await;
    ann.recv_type("game_started").await;
    bob.recv_type("game_started").await;
    let list = who(&mut ann).await;
    assert_eq!((status_of(&list, "ann"), status_of(&list, "bob")), ("playing".into(), "playing".into()));
    ann.send(json!({"type": "resign"})).await;
    bob.recv_type("game_over").await;
    assert_eq!(status_of(&who(&mut bob).await, "ann"), "idle");
    drop(ann);
    bob.recv_type("room_closed").await;
    assert_eq!(status_of(&who(&mut bob).await, "ann"), "absent");
}

#[tokio::test]
async fn one_address_cannot_challenge_everyone() {
    let server = TestServer::start(test_config()).await;
    // One more target than the address's challenges fill at five each.
    let targets = MAX_SENT_PER_ADDRESS / MAX_RECEIVED_PER_ADDRESS + 1;
    let mut t = Vec::new();
    for i in 0..targets {
        t.push(named(&server, &format!("t{i}")).await);
    }
    // Connections from one address, each with its own name, send their
    // five each, round the targets: no target gets more than five from it.
    let mut crowd = Vec::new();
    for i in 0..MAX_SENT_PER_ADDRESS / MAX_SENT {
        let mut c = named_from(&server, 3, &format!("c{i}")).await;
        for k in 0..MAX_SENT {
            let to = (i * MAX_SENT + k) % targets;
            challenge(&mut c, &mut t[to], &format!("t{to}")).await;
        }
        crowd.push(c);
    }
    // The address is at its limit, whatever connection or name asks.
    let mut late = named_from(&server, 3, "late").await;
    let text = refused(&mut late, &format!("t{}", targets - 1)).await;
    assert!(text.contains("from your address"), "{text}");
    // Another address is not held up, towards the same players.
    let mut other = named_from(&server, 4, "other").await;
    let id = challenge(&mut other, &mut t[0], "t0").await;
    // An answer frees a slot of the address: one of the crowd's is declined.
    let offers: Vec<String> = t[targets - 1]
        .received
        .iter()
        .filter(|m| m["type"] == "challenged")
        .filter_map(|m| m["challenge"].as_str().map(str::to_owned))
        .collect();
    t[targets - 1].send(json!({"type": "decline", "challenge": offers[0]})).await;
    let mut freed = false;
    for c in &mut crowd {
        if c.received.iter().any(|m| m["challenge"] == offers[0].as_str()) {
            ended(&c.recv_type("challenge_ended").await, &offers[0], "declined");
            freed = true;
        }
    }
    assert!(freed, "the declined challenge was one of the crowd's");
    challenge(&mut late, &mut t[targets - 1], &format!("t{}", targets - 1)).await;
    t[0].send(json!({"type": "accept", "challenge": id})).await;
    other.recv_type("game_started").await;
}

#[tokio::test]
async fn one_address_cannot_fill_one_players_slots() {
    let server = TestServer::start(test_config()).await;
    let mut bob = named(&server, "bob").await;
    // Two connections of one address: five between them, not six.
    let mut a = named_from(&server, 3, "a").await;
    let mut b = named_from(&server, 3, "b").await;
    let mut first = String::new();
    for i in 0..MAX_RECEIVED_PER_ADDRESS {
        let id = challenge(if i % 2 == 0 { &mut a } else { &mut b }, &mut bob, "bob").await;
        if i == 0 {
            first = id;
        }
    }
    let text = refused(&mut b, "bob").await;
    assert!(text.contains("bob has 5 open challenges from your address"), "{text}");
    // Bob can still be reached from elsewhere, up to his twenty.
    let mut others = Vec::new();
    for host in 4..4 + (MAX_RECEIVED / MAX_RECEIVED_PER_ADDRESS - 1) as u8 {
        for i in 0..MAX_RECEIVED_PER_ADDRESS {
            let mut c = named_from(&server, host, &format!("h{host}-{i}")).await;
            challenge(&mut c, &mut bob, "bob").await;
            others.push(c);
        }
    }
    let mut full = named_from(&server, 9, "nine").await;
    let text = refused(&mut full, "bob").await;
    assert!(text.contains("bob has 20 open challenges"), "{text}");
    // Withdrawing one frees its slot for its address.
    a.send(json!({"type": "decline", "challenge": first})).await;
    ended(&bob.recv_type("challenge_ended").await, &first, "canceled");
    challenge(&mut b, &mut bob, "bob").await;
}

#[tokio::test]
async fn an_account_has_five_open_challenges_over_all_its_connections_and_a_disconnect_frees_them() {
    let dir = TempDir::new("challenge-account");
    let server = TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await;
    let token = server.client().await.register("ann", false).await;
    let (mut one, mut two) = (server.client().await, server.client().await);
    one.sign_in("ann", &token).await;
    two.sign_in("ann", &token).await;
    let mut t = Vec::new();
    for i in 0..=MAX_SENT {
        t.push(named(&server, &format!("t{i}")).await);
    }
    let mut from_one = Vec::new();
    for (i, target) in t.iter_mut().enumerate().take(MAX_SENT) {
        let id = challenge(if i < 3 { &mut one } else { &mut two }, target, &format!("t{i}")).await;
        if i < 3 {
            from_one.push(id);
        }
    }
    let text = refused(&mut two, &format!("t{MAX_SENT}")).await;
    assert!(text.contains("on all your connections"), "{text}");
    // The first connection closes: its three end, and their slots are free.
    drop(one);
    for (i, id) in from_one.iter().enumerate() {
        ended(&t[i].recv_type("challenge_ended").await, id, "canceled");
    }
    for (i, target) in t.iter_mut().enumerate().take(3) {
        challenge(&mut two, target, &format!("t{i}")).await;
    }
    refused(&mut two, &format!("t{MAX_SENT}")).await;
    server.shutdown().await;
}

#[tokio::test]
async fn expired_challenges_free_their_slots() {
    let server = TestServer::start(Config { challenge_expiry_ms: 1500, ..test_config() }).await;
    let mut ann = named(&server, "ann").await;
    let mut bob = named(&server, "bob").await;
    let mut ids = Vec::new();
    for _ in 0..MAX_SENT {
        ids.push(challenge(&mut ann, &mut bob, "bob").await);
    }
    refused(&mut ann, "bob").await;
    for id in &ids {
        ended(&ann.recv_type("challenge_ended").await, id, "expired");
    }
    for _ in 0..MAX_SENT {
        challenge(&mut ann, &mut bob, "bob").await;
    }
}

#[tokio::test]
async fn a_challenge_lifetime_out_of_range_stops_the_server_naming_the_flag() {
    for ms in [0, 300_001, u64::MAX] {
        let server = TestServer::start(Config { challenge_expiry_ms: ms, ..test_config() }).await;
        let err = server.stop().await.expect_err("refused");
        assert!(err.to_string().contains("--challenge-expiry-ms"), "{ms}: {err}");
    }
    let server = TestServer::start(Config { challenge_expiry_ms: 300_000, ..test_config() }).await;
    server.client().await;
    server.shutdown().await;
}
