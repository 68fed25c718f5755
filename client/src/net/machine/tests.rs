//! The reconnect rules, driven with an injected clock: no sockets, no sleeps.

use std::sync::Arc;

use tictactoe_protocol::{ClosedReason, EndReason, Player};

use super::*;
use crate::fixtures;

fn limits() -> Limits {
    fixtures::limits(GRACE)
}

const GRACE: Duration = Duration::from_secs(30);

fn hello() -> ClientMessage {
    ClientMessage::Hello { name: "ann".into(), protocol: Some(1), token: None }
}

fn text(msg: &ClientMessage) -> String {
    serde_json::to_string(&ClientFrame { id: None, message: msg.clone() }).unwrap_or_default()
}

fn server(msg: &ServerMessage) -> String {
    serde_json::to_string(msg).unwrap_or_default()
}

fn game_started(token: &str) -> String {
    server(&fixtures::game_started(token))
}

/// A connection that said hello at `t0`.
fn connected(t0: Instant) -> Machine {
    let mut m = Machine::new(limits(), t0);
    m.send(hello(), t0).map(|_| ()).unwrap_or_else(|e| panic!("{e}"));
    m
}

/// A connection seated in a game with resume token `tok`, its outputs drained.
fn seated(t0: Instant) -> Machine {
    let mut m = connected(t0);
    m.handle(Input::Text(&game_started("tok")), t0);
    assert!(matches!(m.poll(t0), Step::Seat(Seat::Keep(t, Player::X)) if t == "tok"));
    assert!(matches!(m.poll(t0), Step::Yield(Event::Msg(ServerMessage::GameStarted { .. }))));
    assert!(matches!(m.poll(t0), Step::Read));
    m
}

fn reconnect_frames(step: Step) -> Vec<String> {
    match step {
        Step::Reconnect(frames) => frames,
        other => panic!("expected a reconnect, got {other:?}"),
    }
}

#[test]
fn a_seat_is_resumed_after_a_drop_with_hello_first() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    m.handle(Input::Dropped, t0);
    assert_eq!(m.reconnecting(), Some(t0 + GRACE));
    assert!(!m.restarting());
    assert!(matches!(m.poll(t0), Step::Yield(Event::Down { restart: false })));
    let resume = ClientMessage::Resume { token: "tok".into() };
    assert_eq!(reconnect_frames(m.poll(t0)), vec![text(&hello()), text(&resume)]);
    // Nothing is sent while down.
    assert_eq!(m.send(ClientMessage::Rematch {}, t0), Err(SendError::NotConnected));
    m.reconnected(limits());
    assert!(matches!(m.poll(t0), Step::Yield(Event::Resumed)));
    assert!(matches!(m.poll(t0), Step::Read));
    assert_eq!(m.reconnecting(), None);
    assert!(m.send(ClientMessage::Rematch {}, t0).is_ok());
}

#[test]
fn the_drop_is_announced_once_and_its_deadline_set_once() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    m.handle(Input::Dropped, t0);
    assert!(matches!(m.poll(t0), Step::Yield(Event::Down { .. })));
    // An attempt cancelled and started again neither announces nor extends.
    let later = t0 + Duration::from_secs(5);
    m.handle(Input::Dropped, later);
    assert!(matches!(m.poll(later), Step::Reconnect(_)));
    assert!(matches!(m.poll(later), Step::Reconnect(_)));
    assert_eq!(m.reconnecting(), Some(t0 + GRACE));
}

#[test]
fn failed_attempts_back_off_doubling_up_to_two_seconds() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    m.handle(Input::Dropped, t0);
    let _ = m.poll(t0);
    let mut now = t0;
    let mut pauses = Vec::new();
    for _ in 0..7 {
        assert!(matches!(m.poll(now), Step::Reconnect(_)));
        // The whole backoff (jitter 1): the longest pause.
        m.attempt_failed(now, 1.0);
        let Step::Wait(at) = m.poll(now) else { panic!("expected a wait") };
        pauses.push((at - now).as_millis());
        now = at;
    }
    assert_eq!(pauses, [100, 200, 400, 800, 1600, 2000, 2000]);
    // Jitter 0 waits half of it.
    m.attempt_failed(now, 0.0);
    assert!(matches!(m.poll(now), Step::Wait(at) if at - now == Duration::from_secs(1)));
}

#[test]
fn a_seat_not_back_within_the_grace_is_given_up() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    m.handle(Input::Dropped, t0);
    let _ = m.poll(t0);
    m.attempt_failed(t0, 0.5);
    let end = t0 + GRACE;
    let Step::GiveUp(gone) = m.poll(end) else { panic!("expected to give up") };
    assert_eq!(gone, Gone::ResumeFailed);
    assert_eq!(gone.to_string(), RESUME_FAILED);
    // The link is left as connected (to a dead socket) with nothing to take back.
    assert_eq!(m.reconnecting(), None);
    m.handle(Input::Dropped, end);
    assert!(matches!(m.poll(end), Step::GiveUp(Gone::Dropped)));
}

#[test]
fn a_restart_keeps_trying_for_a_minute_and_says_so() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    m.handle(Input::Close(Some((1012, "restarting".into()))), t0);
    assert!(m.restarting());
    assert_eq!(m.reconnecting(), Some(t0 + Duration::from_secs(60)));
    assert!(matches!(m.poll(t0), Step::Yield(Event::Down { restart: true })));
    let resume = ClientMessage::Resume { token: "tok".into() };
    assert_eq!(reconnect_frames(m.poll(t0)), vec![text(&hello()), text(&resume)]);
    // Past the seat's grace, but within the restart's wait: still trying.
    m.attempt_failed(t0, 0.0);
    assert!(matches!(m.poll(t0 + Duration::from_secs(45)), Step::Reconnect(_)));
    m.reconnected(limits());
    assert!(!m.restarting());
    assert!(matches!(m.poll(t0), Step::Yield(Event::Resumed)));
}

#[test]
fn a_restart_with_nothing_to_take_back_ends_the_session() {
    let t0 = Instant::now();
    let mut m = connected(t0);
    m.handle(Input::Close(Some((1012, "restarting".into()))), t0);
    let Step::GiveUp(gone) = m.poll(t0) else { panic!("expected to give up") };
    assert_eq!(gone.to_string(), crate::say::closed(1012, "restarting"));
}

#[test]
fn a_deliberate_close_ends_the_seat_in_the_servers_words() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    m.handle(Input::Close(Some((4000, String::new()))), t0);
    let Step::GiveUp(gone) = m.poll(t0) else { panic!("expected to give up") };
    assert_eq!(gone, Gone::Closed { code: 4000, reason: String::new() });
    assert_eq!(gone.to_string(), crate::say::closed(4000, ""));
    // The seat is not taken back after that.
    m.handle(Input::Dropped, t0);
    assert!(matches!(m.poll(t0), Step::GiveUp(Gone::Dropped)));
    let mut m = connected(t0);
    m.handle(Input::Close(None), t0);
    assert!(matches!(m.poll(t0), Step::GiveUp(g) if g.to_string() == "the server closed the connection"));
}

#[test]
fn a_watched_room_and_a_queue_are_asked_for_again() {
    let t0 = Instant::now();
    for again in [
        ClientMessage::Spectate { room: "R".into() },
        ClientMessage::QuickMatch {
            clock: None,
            size: Some(3),
            win: None,
            house_after_ms: None,
            level: None,
        },
    ] {
        let mut m = connected(t0);
        assert!(m.send(again.clone(), t0).is_ok());
        m.handle(Input::Dropped, t0);
        let _ = m.poll(t0);
        assert_eq!(reconnect_frames(m.poll(t0)), vec![text(&hello()), text(&again)]);
    }
    // A queue's wait that became a game comes back as the seat.
    let mut m = connected(t0);
    let queue = ClientMessage::QuickMatch {
        clock: None,
        size: Some(3),
        win: None,
        house_after_ms: None,
        level: None,
    };
    assert!(m.send(queue, t0).is_ok());
    m.handle(Input::Text(&game_started("seat")), t0);
    m.handle(Input::Dropped, t0);
    while !matches!(m.poll(t0), Step::Yield(Event::Down { .. })) {}
    let frames = reconnect_frames(m.poll(t0));
    assert_eq!(frames[1], text(&ClientMessage::Resume { token: "seat".into() }));
}

#[test]
fn leaving_or_a_closed_room_leaves_nothing_to_take_back() {
    let t0 = Instant::now();
    let mut m = connected(t0);
    assert!(m.send(ClientMessage::Spectate { room: "R".into() }, t0).is_ok());
    assert!(m.send(ClientMessage::Leave {}, t0).is_ok());
    m.handle(Input::Dropped, t0);
    assert!(matches!(m.poll(t0), Step::GiveUp(Gone::Dropped)));

    let mut m = connected(t0);
    assert!(m.send(ClientMessage::Spectate { room: "R".into() }, t0).is_ok());
    let closed = ServerMessage::RoomClosed { room: Arc::from("R"), reason: ClosedReason::Left };
    m.handle(Input::Text(&server(&closed)), t0);
    assert!(matches!(m.poll(t0), Step::Seat(Seat::Forget)));
    assert!(matches!(m.poll(t0), Step::Yield(Event::Msg(ServerMessage::RoomClosed { .. }))));
    m.handle(Input::Dropped, t0);
    assert!(matches!(m.poll(t0), Step::GiveUp(Gone::Dropped)));
}

#[test]
fn a_finished_game_forgets_the_seat() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    let over = ServerMessage::GameOver {
        clocks: None,
        running: None,
        room: Arc::from("R"),
        winner: Some(Player::X),
        reason: EndReason::Line,
        line: None,
        moves: vec![],
        game_id: None,
        ratings: None,
    };
    m.handle(Input::Text(&server(&over)), t0);
    assert!(matches!(m.poll(t0), Step::Seat(Seat::Forget)));
    assert!(matches!(m.poll(t0), Step::Yield(Event::Msg(ServerMessage::GameOver { .. }))));
    m.handle(Input::Dropped, t0);
    assert!(matches!(m.poll(t0), Step::GiveUp(Gone::Dropped)));
}

#[test]
fn a_listed_client_reconnects_with_hello_alone() {
    let t0 = Instant::now();
    let mut m = connected(t0);
    m.stay_listed();
    m.handle(Input::Dropped, t0);
    let _ = m.poll(t0);
    assert_eq!(reconnect_frames(m.poll(t0)), vec![text(&hello())]);
}

#[test]
fn a_kept_seat_is_resumed_like_one_from_this_run() {
    let t0 = Instant::now();
    let mut m = connected(t0);
    m.resume_seat("old".into());
    assert!(m.send(ClientMessage::Resume { token: "old".into() }, t0).is_ok());
    m.handle(Input::Dropped, t0);
    let _ = m.poll(t0);
    assert_eq!(reconnect_frames(m.poll(t0))[1], text(&ClientMessage::Resume { token: "old".into() }));
}

#[test]
fn a_failed_write_reconnects_or_is_lost() {
    let t0 = Instant::now();
    let mut m = seated(t0);
    assert_eq!(m.send_failed("broken pipe", t0), SendError::NotConnected);
    assert!(matches!(m.poll(t0), Step::Yield(Event::Down { restart: false })));
    let mut m = connected(t0);
    let lost = m.send_failed("broken pipe", t0);
    assert_eq!(lost.to_string(), "lost the connection: broken pipe");
    assert_eq!(m.reconnecting(), None);
}

#[test]
fn a_garbled_frame_ends_the_session_and_an_unknown_one_is_skipped() {
    let t0 = Instant::now();
    let mut m = connected(t0);
    m.handle(Input::Text(r#"{"type":"from_the_future"}"#), t0);
    assert!(matches!(m.poll(t0), Step::Read));
    m.handle(Input::Text("not json"), t0);
    let Step::GiveUp(gone) = m.poll(t0) else { panic!("expected to give up") };
    assert!(gone.to_string().starts_with("the server sent something this client does not understand: "));
}

#[test]
fn rate_limited_holds_the_next_request() {
    let t0 = Instant::now();
    let mut m = connected(t0);
    let limited = ServerMessage::Error {
        code: ErrorCode::RateLimited,
        message: "slow down".into(),
        id: None,
        retry_after_ms: Some(500),
        game_id: None,
    };
    m.handle(Input::Text(&server(&limited)), t0);
    let out = m.send(ClientMessage::Rematch {}, t0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.at, t0 + Duration::from_millis(500));
    assert_eq!(m.send(ClientMessage::Rematch {}, t0).map(|o| o.at), Ok(t0));
}

#[test]
fn not_connected_says_what_it_always_said() {
    assert_eq!(SendError::NotConnected.to_string(), NOT_CONNECTED);
    assert_eq!(String::from(SendError::Lost(Gone::Dropped)), "the connection dropped");
}
