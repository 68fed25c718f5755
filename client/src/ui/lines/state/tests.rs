//! Line mode's decisions, driven without stdin, stdout or a socket.

use std::sync::Arc;

use tictactoe_protocol::{ClosedReason, EndReason, ErrorCode};

use super::*;
use crate::fixtures;

fn limits() -> Limits {
    fixtures::limits(std::time::Duration::from_secs(30))
}

fn started() -> ServerMessage {
    fixtures::game_started("t")
}
use crate::request::RequestedRules;

const URL: &str = "ws://127.0.0.1:1";

fn game_over() -> ServerMessage {
    ServerMessage::GameOver {
        clocks: None,
        running: None,
        room: Arc::from("R"),
        winner: None,
        reason: EndReason::Draw,
        line: None,
        moves: vec![],
        game_id: None,
        ratings: None,
    }
}

fn printed(out: &[Do]) -> Vec<&str> {
    out.iter()
        .filter_map(|o| match o {
            Do::Print(line) => Some(line.as_str()),
            _ => None,
        })
        .collect()
}

/// A quick-match session whose game started with this side to move.
fn playing() -> Lines {
    let mut lines = Lines::new(&Start::Quick(RequestedRules { size: 3, win: None, clock: None }));
    let out = lines.on_link(Event::Msg(started()), &limits(), URL);
    let said = printed(&out);
    assert!(said[0].starts_with("Game started in room R: "), "{said:?}");
    assert_eq!(said.last(), Some(&PROMPT));
    lines
}

#[test]
fn a_typed_cell_is_played_and_a_bad_one_asked_again() {
    let mut lines = playing();
    assert!(lines.wants_input());
    let out = lines.on_line(Some("zz".into()));
    assert_eq!(printed(&out), ["! \"zz\": type a cell like b2, or a row and column like 2 2", PROMPT]);
    assert!(lines.wants_input());
    let out = lines.on_line(Some("b2".into()));
    assert!(matches!(out.as_slice(), [Do::Move(ClientMessage::Move { row: 1, col: 1 })]));
    assert!(!lines.wants_input());
}

#[test]
fn a_move_refused_while_reconnecting_is_asked_again() {
    let mut lines = playing();
    let _ = lines.on_line(Some("a1".into()));
    let out = lines.move_not_sent();
    assert_eq!(printed(&out), [format!("! {NOT_CONNECTED}").as_str(), PROMPT]);
    assert!(lines.wants_input());
}

#[test]
fn the_connection_going_and_coming_back_is_told() {
    let mut lines = playing();
    let said = |lines: &mut Lines, event| printed(&lines.on_link(event, &limits(), URL)).join("\n");
    assert_eq!(said(&mut lines, Event::Down { restart: false }), "Connection lost; reconnecting…");
    assert_eq!(said(&mut lines, Event::Down { restart: true }), "Server restarting, reconnecting…");
    assert_eq!(said(&mut lines, Event::Resumed), "Reconnected; the game goes on.");
    let out = lines.on_link(Event::Closed(crate::net::Gone::Dropped), &limits(), URL);
    assert!(
        matches!(out.as_slice(), [Do::End(Err(PlayError::Session(SessionError::Closed(why))))] if *why == crate::net::Gone::Dropped)
    );
}

#[test]
fn after_a_game_y_rematches_n_queues_and_anything_else_quits() {
    for (answer, expect) in [("y", "rematch"), ("N", "queue"), ("bye", "quit")] {
        let mut lines = playing();
        let out = lines.on_link(Event::Msg(game_over()), &limits(), URL);
        assert_eq!(
            printed(&out).last(),
            Some(&"Rematch? [y: rematch, n: new opponent, anything else: quit]")
        );
        let out = lines.on_line(Some(answer.into()));
        match expect {
            "rematch" => assert!(matches!(
                out.as_slice(),
                [Do::Send(ClientMessage::Rematch {}), Do::Print(w)] if w == "Waiting for the opponent to accept…"
            )),
            "queue" => assert!(matches!(
                out.as_slice(),
                [Do::Send(ClientMessage::QuickMatch { size: Some(3), win: Some(3), .. })]
            )),
            _ => assert!(matches!(out.as_slice(), [Do::Leave, Do::End(Ok(()))])),
        }
        // The game is over: the connection closing now is no failure.
        let out = lines.on_link(Event::Closed(crate::net::Gone::Dropped), &limits(), URL);
        assert!(matches!(out.as_slice(), [Do::End(Ok(()))]));
    }
}

#[test]
fn input_ending_mid_game_leaves_and_fails() {
    let mut lines = playing();
    assert!(matches!(lines.on_line(None).as_slice(), [Do::Leave, Do::End(Err(PlayError::InputEnded))]));
    let mut lines = playing();
    let _ = lines.on_link(Event::Msg(game_over()), &limits(), URL);
    assert!(matches!(lines.on_line(None).as_slice(), [Do::Leave, Do::End(Ok(()))]));
}

#[test]
fn a_watcher_ends_when_the_room_closes() {
    let mut lines = Lines::new(&Start::Watch("R".into()));
    let out = lines.on_link(Event::Msg(started()), &limits(), URL);
    assert_ne!(printed(&out).last(), Some(&PROMPT), "a watcher is not asked to move");
    assert!(!lines.wants_input());
    let closed = ServerMessage::RoomClosed { room: Arc::from("R"), reason: ClosedReason::Left };
    let out = lines.on_link(Event::Msg(closed), &limits(), URL);
    assert!(matches!(out.last(), Some(Do::End(Ok(())))));
}

#[test]
fn a_refused_start_ends_the_session() {
    let mut lines = Lines::new(&Start::Join("ZZZZ".into()));
    let refused = ServerMessage::Error {
        code: ErrorCode::RoomNotFound,
        message: "no".into(),
        id: None,
        retry_after_ms: None,
        game_id: None,
    };
    let out = lines.on_link(Event::Msg(refused), &limits(), URL);
    assert!(matches!(out.as_slice(), [Do::End(Err(PlayError::Session(SessionError::Refused(_))))]));
}

#[test]
fn a_challenge_between_games_is_answered_with_a_or_d() {
    let mut lines = Lines::new(&Start::Quick(RequestedRules { size: 3, win: None, clock: None }));
    let offer = fixtures::challenged(3);
    let _ = lines.on_link(Event::Msg(offer), &limits(), URL);
    assert!(lines.wants_input());
    let out = lines.on_line(Some("d".into()));
    assert!(matches!(
        out.as_slice(),
        [Do::Send(ClientMessage::Decline { challenge, reason: None }), Do::Print(d)] if challenge == "c1" && d == "Declined."
    ));
    assert!(!lines.wants_input());
}

#[test]
fn a_game_that_ended_while_reconnecting_is_printed_from_its_record() {
    let mut lines = playing();
    let out = lines.on_link(Event::Msg(fixtures::ended_while_away()), &limits(), URL);
    assert!(matches!(&out[..], [Do::Ended(id)] if id == "g1"), "{out:?}");
    let out = lines.ended(Ok(fixtures::lost_on_time()), "ann");
    let said = printed(&out).join("\n");
    assert!(said.starts_with("Your game ended while you were away:\n"), "{said}");
    assert!(said.contains("\n1  X . X\n2 +O O .\n"), "the final board, its last move marked:\n{said}");
    assert!(said.contains("Result: You lost — you ran out of time"), "{said}");
    assert!(said.ends_with("New game? [n: new quick match, anything else: quit]"), "{said}");
    assert!(matches!(&lines.on_line(Some("n".into()))[..], [Do::Send(ClientMessage::QuickMatch { .. })]));
    // Without the record: the refusal, as without a game id.
    let mut lines = playing();
    let said = printed(&lines.ended(Err("unreachable".into()), "ann")).join("\n");
    assert_eq!(said, "! the server no longer holds your seat");
}

#[test]
fn a_game_on_a_fischer_clock_prints_both_clocks_after_the_board() {
    let mut lines = Lines::new(&Start::Quick(RequestedRules { size: 3, win: None, clock: None }));
    let fischer = tictactoe_protocol::Fischer { initial_ms: 60_000, increment_ms: 1_000 };
    let timed = fixtures::on_clock(started(), fischer);
    let out = lines.on_link(Event::Msg(timed), &limits(), URL);
    let said = printed(&out);
    assert!(said.contains(&"Clocks: X (ann) 1:00    O (bob) 1:00"), "{said:?}");
    // Without a clock, no such line.
    let mut untimed = Lines::new(&Start::Quick(RequestedRules { size: 3, win: None, clock: None }));
    let out = untimed.on_link(Event::Msg(started()), &limits(), URL);
    assert!(!printed(&out).iter().any(|l| l.starts_with("Clocks:")), "{:?}", printed(&out));
}
