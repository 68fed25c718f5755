//! The screen's decisions, driven without a terminal or a socket.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tictactoe_protocol::{ClosedReason, EndReason, Player};

use super::keys::Action;
use super::*;
use crate::fixtures;

fn limits() -> Limits {
    fixtures::limits(std::time::Duration::from_secs(30))
}

fn started() -> ServerMessage {
    fixtures::game_started("t")
}

fn error(code: ErrorCode) -> ServerMessage {
    ServerMessage::Error { code, message: "no".into(), id: None, retry_after_ms: None, game_id: None }
}

const URL: &str = "ws://127.0.0.1:1";

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn playing() -> Screen {
    let mut s = Screen::new(&Start::Quick(RequestedRules { size: 3, win: None, clock: None }), None);
    s.view.apply(&started());
    s.cursor = (1, 1);
    s.window = Window::whole(3);
    s
}

#[test]
fn leaving_a_game_in_progress_asks_first() {
    let mut s = playing();
    assert!(matches!(s.on_key(key(KeyCode::Esc)), Action::None));
    assert!(s.view.note.contains("Resign this game? y/n"));
    assert!(matches!(s.on_key(key(KeyCode::Char('n'))), Action::None), "no: play on");
    assert!(matches!(s.on_key(key(KeyCode::Char('q'))), Action::None));
    assert!(matches!(s.on_key(key(KeyCode::Char('y'))), Action::Quit), "yes: resign and leave");
    let mut s = playing();
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert!(matches!(s.on_key(ctrl_c), Action::None));
    assert!(matches!(s.on_key(ctrl_c), Action::Quit), "Ctrl-C twice leaves");
    // After the game, or watching, leaving asks nothing.
    let mut s = playing();
    s.view.over = Some((None, tictactoe_protocol::EndReason::Draw, None));
    assert!(matches!(s.on_key(key(KeyCode::Char('q'))), Action::Quit));
    let mut w = playing();
    w.watch = true;
    assert!(matches!(w.on_key(key(KeyCode::Esc)), Action::Quit));
}

#[test]
fn a_and_d_answer_a_challenge_between_games_only() {
    let offer = crate::fixtures::challenged(3);
    // Mid-game: `a` is typed (a cell's column), not an answer.
    let mut s = playing();
    s.view.apply(&offer);
    assert!(matches!(s.on_key(key(KeyCode::Char('a'))), Action::None));
    assert_eq!(s.typed, "a");
    // Between games: answered.
    let mut s = playing();
    s.view.over = Some((None, tictactoe_protocol::EndReason::Draw, None));
    s.view.apply(&offer);
    assert!(s.help().starts_with("a: accept"));
    assert!(matches!(s.on_key(key(KeyCode::Char('a'))), Action::Accept(id) if id == "c1"));
    assert!(matches!(s.on_key(key(KeyCode::Char('d'))), Action::Decline(id) if id == "c1"));
}

#[test]
fn a_spectator_playing_a_cell_is_told_they_are_watching() {
    let mut w = playing();
    w.watch = true;
    w.view.you = None;
    assert!(matches!(w.on_key(key(KeyCode::Enter)), Action::None));
    assert_eq!(w.view.note, "you are watching: only the players move");
}

#[test]
fn ctrl_r_resigns_and_stays_after_asking() {
    let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
    let mut s = playing();
    assert!(matches!(s.on_key(ctrl_r), Action::None));
    assert!(s.view.note.contains("Resign this game and stay"), "{}", s.view.note);
    assert!(matches!(s.on_key(key(KeyCode::Char('n'))), Action::None), "no: play on");
    assert!(matches!(s.on_key(ctrl_r), Action::None));
    assert!(matches!(s.on_key(key(KeyCode::Char('y'))), Action::Resign));
    // Not in a game: nothing to resign.
    let mut s = playing();
    s.view.over = Some((None, tictactoe_protocol::EndReason::Draw, None));
    assert!(matches!(s.on_key(ctrl_r), Action::None));
    assert!(!s.resigning);
}

#[test]
fn a_connection_lost_mid_game_stays_for_a_new_game_or_quit() {
    let mut s = playing();
    assert!(matches!(s.on_link(Event::Closed(crate::net::Gone::Dropped), &limits(), URL), Do::Wait));
    assert!(s.lost);
    assert_eq!(s.view.note, "n: new game (a new connection), q: quit");
    assert!(matches!(s.connection(None, false), Connection::Lost));
    s.view.over.get_or_insert((None, EndReason::Disconnect, None));
    let action = s.on_key(key(KeyCode::Char('n')));
    let Do::NewConnection(rules) = s.act(action) else { panic!("expected a new connection") };
    assert_eq!(rules, RequestedRules { size: 3, win: Some(3), clock: None });
    s.reconnected();
    assert!(!s.lost);
    assert_eq!(s.view.note, "connected again; looking for an opponent");
}

#[test]
fn a_connection_closed_after_the_game_or_while_watching_ends_the_session() {
    let mut s = playing();
    s.view.over = Some((Some(Player::X), EndReason::Line, None));
    assert!(matches!(
        s.on_link(Event::Closed(crate::net::Gone::Dropped), &limits(), URL),
        Do::End(Ok(Some(_)))
    ));
    let mut w = Screen::new(&Start::Watch("R".into()), None);
    let end = w.on_link(Event::Closed(crate::net::Gone::Dropped), &limits(), URL);
    assert!(matches!(end, Do::End(Err(PlayError::Session(SessionError::Closed(crate::net::Gone::Dropped))))));
}

#[test]
fn a_watcher_leaves_with_the_note_when_the_room_closes() {
    let mut w = Screen::new(&Start::Watch("R".into()), None);
    assert!(matches!(w.on_link(Event::Msg(started()), &limits(), URL), Do::Wait));
    let closed = ServerMessage::RoomClosed { room: Arc::from("R"), reason: ClosedReason::Left };
    let Do::End(Ok(Some(note))) = w.on_link(Event::Msg(closed), &limits(), URL) else {
        panic!("expected the end")
    };
    assert_eq!(note, w.view.note);
}

#[test]
fn a_refused_start_ends_the_session_in_words() {
    let mut s = Screen::new(&Start::Join("ZZZZ".into()), None);
    let end = s.on_link(Event::Msg(error(ErrorCode::RoomNotFound)), &limits(), URL);
    assert!(matches!(end, Do::End(Err(PlayError::Session(SessionError::Refused(_))))));
    // A refused move does not.
    let mut s = playing();
    assert!(matches!(s.on_link(Event::Msg(error(ErrorCode::CellOccupied)), &limits(), URL), Do::Wait));
}

#[test]
fn a_seat_kept_on_disk_is_taken_back_or_replaced_by_a_new_game() {
    let start = Start::Quick(RequestedRules { size: 3, win: None, clock: None });
    let mut s = Screen::new(&start, Some(TakingBack { mark: None }));
    assert!(s.view.note.starts_with("taking back your seat"));
    let Do::Fallback(Some(request)) = s.on_link(Event::Msg(error(ErrorCode::InvalidToken)), &limits(), URL)
    else {
        panic!("expected the fallback")
    };
    assert_eq!(Some(request), start.request());
    assert!(s.fallback.is_none());

    let mut s = Screen::new(&start, Some(TakingBack { mark: None }));
    // Anything before the room's `state` keeps the fallback.
    assert!(matches!(s.on_link(Event::Msg(error(ErrorCode::RateLimited)), &limits(), URL), Do::Wait));
    assert!(s.fallback.is_some());
}

#[test]
fn a_new_room_tells_the_friend_the_command_and_the_web_page() {
    let mut s = Screen::new(&Start::Create(RequestedRules { size: 3, win: None, clock: None }, None), None);
    let created =
        ServerMessage::RoomCreated { clock: None, room: Arc::from("ABCD"), size: 3, win: 3, id: None };
    assert!(matches!(s.on_link(Event::Msg(created.clone()), &limits(), URL), Do::Wait));
    assert!(s.view.note.starts_with("room ABCD is open; your friend joins with: "), "{}", s.view.note);
    assert!(
        s.view
            .note
            .ends_with(" play --join ABCD --server ws://127.0.0.1:1  or open http://127.0.0.1:1/r/ABCD"),
        "{}",
        s.view.note
    );
    // Several servers: all of them in the command, the page on the one connected to (first).
    let servers = "wss://b.example/,wss://a.example:8443";
    assert!(matches!(s.on_link(Event::Msg(created), &limits(), servers), Do::Wait));
    assert!(
        s.view.note.ends_with(&format!(" --server {servers}  or open https://b.example/r/ABCD")),
        "{}",
        s.view.note
    );
}

#[test]
fn a_seat_kept_on_disk_whose_game_ended_shows_how_it_ended() {
    let start = Start::Quick(RequestedRules { size: 3, win: None, clock: None });
    let mut s = Screen::new(&start, Some(TakingBack { mark: None }));
    let Do::Ended(id) = s.on_link(Event::Msg(fixtures::ended_while_away()), &limits(), URL) else {
        panic!("expected the record to be fetched")
    };
    assert_eq!(id, "g1");
    assert!(matches!(s.ended(Ok(fixtures::lost_on_time()), "ann"), Do::Wait));
    assert!(s.fallback.is_none(), "no new game asked for");
    assert_eq!(s.view.you, Some(Player::X), "ann's seat, by her name");
    assert_eq!(s.view.result_line().as_deref(), Some("Result: You lost — you ran out of time"));
    assert_eq!(s.view.game.moves().len(), 4, "the final board");
    assert_eq!(s.view.last, Some((1, 0)));
    assert!(s.view.note.contains("ended while you were away"), "{}", s.view.note);
    assert_eq!(s.help(), "n: new game   q: quit", "no rematch in a room that is gone");
    // Both seats with one name: the mark the seat file kept says which was ours.
    let mut s = Screen::new(&start, Some(TakingBack { mark: Some(Player::O) }));
    assert!(matches!(s.on_link(Event::Msg(fixtures::ended_while_away()), &limits(), URL), Do::Ended(_)));
    let mut record = fixtures::lost_on_time();
    record.players[1].name = "ann".into();
    assert!(matches!(s.ended(Ok(record.clone()), "ann"), Do::Wait));
    assert_eq!(s.view.result_line().as_deref(), Some("Result: You won — your opponent ran out of time"));
    // Without it, neither seat is taken for ours.
    let mut s = Screen::new(&start, Some(TakingBack { mark: None }));
    assert!(matches!(s.ended(Ok(record), "ann"), Do::Wait));
    assert_eq!(s.view.result_line().as_deref(), Some("Result: O (ann) won — X ran out of time"));
    assert!(matches!(s.on_key(key(KeyCode::Char('r'))), Action::None));

    // The record cannot be had: the seat falls back to a new game, as without a game id.
    let mut s = Screen::new(&start, Some(TakingBack { mark: None }));
    assert!(matches!(s.on_link(Event::Msg(fixtures::ended_while_away()), &limits(), URL), Do::Ended(_)));
    let Do::Fallback(Some(request)) = s.ended(Err("unreachable".into()), "ann") else {
        panic!("expected the fallback")
    };
    assert_eq!(Some(request), start.request());
    // So does a record of a board no game has.
    let mut s = Screen::new(&start, Some(TakingBack { mark: None }));
    assert!(matches!(s.on_link(Event::Msg(fixtures::ended_while_away()), &limits(), URL), Do::Ended(_)));
    let mut record = fixtures::lost_on_time();
    record.size = 0;
    assert!(matches!(s.ended(Ok(record), "ann"), Do::Fallback(Some(_))));
}

#[test]
fn a_game_that_ended_while_reconnecting_shows_its_record() {
    let mut s = playing();
    assert!(matches!(s.on_link(Event::Msg(fixtures::ended_while_away()), &limits(), URL), Do::Ended(_)));
    // Its record says how; our mark was known already.
    let mut record = fixtures::lost_on_time();
    record.players[0].name = "someone else".into();
    assert!(matches!(s.ended(Ok(record), "ann"), Do::Wait));
    assert_eq!(s.view.you, Some(Player::X));
    assert_eq!(s.view.result_line().as_deref(), Some("Result: You lost — you ran out of time"));
    // Without the record, the game ends in words, as before.
    let mut s = playing();
    assert!(matches!(s.ended(Err("unreachable".into()), "ann"), Do::Wait));
    assert!(s.view.result_line().is_some_and(|l| l.starts_with("Game over while you were away")));
    // A refusal without a game id is the bare refusal it always was.
    let mut s = playing();
    assert!(matches!(s.on_link(Event::Msg(error(ErrorCode::InvalidToken)), &limits(), URL), Do::Wait));
    assert!(s.view.result_line().is_some_and(|l| l.starts_with("Game over while you were away")));
}

#[test]
fn actions_become_requests_and_sent_ones_are_told() {
    let s = playing();
    assert!(matches!(s.act(Action::Move(0, 2)), Do::Send(ClientMessage::Move { row: 0, col: 2 })));
    assert!(matches!(s.act(Action::Resign), Do::Send(ClientMessage::Resign {})));
    assert!(matches!(s.act(Action::Quit), Do::Quit));
    assert!(matches!(s.act(Action::None), Do::Wait));
    assert!(matches!(
        s.act(Action::NewMatch),
        Do::Send(ClientMessage::QuickMatch { size: Some(3), win: Some(3), .. })
    ));
    let mut s = playing();
    s.after_send(&ClientMessage::Rematch {});
    assert_eq!(s.view.note, "rematch asked; waiting for the opponent");
    s.after_send(&ClientMessage::Decline { challenge: "c".into(), reason: None });
    assert_eq!(s.view.note, "challenge declined");
    assert!(matches!(s.sent(Err(SendError::NotConnected)), Ok(false)));
    assert_eq!(s.view.note, NOT_CONNECTED);
    assert!(s.sent(Err(SendError::Lost(crate::net::machine::Gone::Dropped))).is_err());
}

fn typed(s: &mut Screen, text: &str) -> Action {
    for c in text.chars() {
        assert!(matches!(s.on_key(key(KeyCode::Char(c))), Action::None), "{c} typed");
    }
    s.on_key(key(KeyCode::Enter))
}

#[test]
fn in_a_tournament_b_enter_berserks_p_pauses_j_joins_and_its_end_ends_the_session() {
    use tictactoe_protocol::tournament::TournamentStatus;
    let mut s = Screen::new(&Start::Tournament("T1".into()), None);
    s.in_tournament("T1", "ann");
    assert!(s.between_games(), "no game yet");
    let sent = |a: Action| match a {
        Action::Send(request) => request,
        _ => panic!("nothing sent"),
    };
    assert_eq!(
        sent(s.on_key(key(KeyCode::Char('p')))),
        ClientMessage::TournamentLeave { tournament: "T1".into() }
    );
    // Paused, a reconnect only watches; joined again, it joins.
    let again = |s: &mut Screen| match s.on_link(Event::Resumed, &limits(), URL) {
        Do::Send(request) => request,
        other => panic!("{other:?}"),
    };
    assert_eq!(again(&mut s), ClientMessage::TournamentWatch { tournament: "T1".into() });
    assert_eq!(
        sent(s.on_key(key(KeyCode::Char('j')))),
        ClientMessage::TournamentJoin { tournament: "T1".into() }
    );
    assert_eq!(again(&mut s), ClientMessage::TournamentJoin { tournament: "T1".into() });

    let mut paired = started();
    if let ServerMessage::GameStarted { tournament, .. } = &mut paired {
        *tournament = Some("T1".into());
    }
    assert!(matches!(s.on_link(Event::Msg(paired), &limits(), URL), Do::Wait));
    s.window = Window::whole(3);
    assert!(!s.between_games());
    assert_eq!(sent(typed(&mut s, "b")), ClientMessage::Berserk {});
    assert_eq!(sent(typed(&mut s, "berserk")), ClientMessage::Berserk {});
    // A cell in column b is still a cell.
    assert!(matches!(typed(&mut s, "b2"), Action::Move(1, 1)));
    let _ = s.view.game.play(1, 1);
    assert!(matches!(typed(&mut s, "b"), Action::None));
    assert_eq!(s.view.note, "berserk is only before your first move in a game");

    let over = ServerMessage::GameOver {
        clocks: None,
        running: None,
        room: Arc::from("R"),
        winner: Some(Player::X),
        reason: EndReason::Resign,
        line: None,
        moves: vec![[1, 1]],
        game_id: Some("g1".into()),
        ratings: None,
    };
    assert!(matches!(s.on_link(Event::Msg(over), &limits(), URL), Do::Wait));
    let closed = ServerMessage::RoomClosed { room: Arc::from("R"), reason: ClosedReason::Finished };
    assert!(matches!(s.on_link(Event::Msg(closed), &limits(), URL), Do::Wait));
    assert!(s.between_games());
    // No rematch and no quick match: the tournament pairs.
    assert!(matches!(s.on_key(key(KeyCode::Char('r'))), Action::None));
    assert!(matches!(s.on_key(key(KeyCode::Char('n'))), Action::None));
    assert!(s.view.note.starts_with("the tournament pairs you again by itself"));
    let standings = |status, games: &[&str]| {
        let rows = vec![fixtures::standing(1, "ann", &[2], false), fixtures::standing(2, "bob", &[0], false)];
        ServerMessage::TournamentUpdate { tournament: Box::new(fixtures::tournament(status, rows, games)) }
    };
    let lines = {
        s.on_link(Event::Msg(standings(TournamentStatus::Running, &["g1"])), &limits(), URL);
        s.standings_lines(20)
    };
    assert!(lines[0].starts_with("Evening arena — 3×3, 0.5+0 — "), "{lines:?}");
    assert_eq!(lines[1], "rank 1 of 2, score 2");
    assert!(lines.iter().any(|l| l.starts_with(">   1  ann")), "{lines:?}");
    match s.on_link(Event::Msg(standings(TournamentStatus::Finished, &["g1"])), &limits(), URL) {
        Do::End(Ok(Some(said))) => assert_eq!(said, "Evening arena is over: rank 1 of 2, score 2"),
        other => panic!("{other:?}"),
    }
}
