//! Challenges and `who` over real sockets: accepting, declining with a
//! reason, expiry, cancelling by disconnect and by starting another game,
//! every refusal (`player_not_found`, `challenge_not_found`, `busy`), and
//! statuses changing as players queue and play.

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, TestServer, test_config};

/// A client that said hello as `name`, listed once its ping is answered.
async fn named(server: &TestServer, name: &str) -> Client {
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": name})).await;
    c.send(json!({"type": "ping"})).await;
    c.recv_type("pong").await;
    c
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
