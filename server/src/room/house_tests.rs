//! The house seat without a search: the room asks for the house's moves as
//! outputs and plays the answers it is given, at the times it is given them.

use std::time::{Duration, Instant};

use tictactoe_protocol::{EndReason, HouseLevel, Player, ServerMessage};

use super::tests::{
    A, GRACE, Got, S, TURN, error_code, game_over, house_rng, msgs_to, mv, out, seeded, settings,
};
use super::*;
use crate::core::account::Identity;
use crate::house::Asker;

/// A 3×3 room where A plays the house; A is player 1 when `a_first`.
fn house_room(a_first: bool, t0: Instant) -> (Room, Vec<(ConnId, Got)>) {
    let mut room = Room::house(
        "HOUSE1".into(),
        Rules::classic(3),
        settings(),
        house_rng(a_first),
        (A, Identity::guest("a")),
        HouseLevel::Perfect,
        t0,
    )
    .unwrap();
    let got = out(&mut room);
    (room, got)
}

/// The move numbers the room asked the house for.
fn thinks(got: &[(ConnId, Got)]) -> Vec<usize> {
    got.iter().filter_map(|(_, g)| if let Got::Think(seq) = g { Some(*seq) } else { None }).collect()
}

#[test]
fn the_house_is_asked_for_its_moves_and_is_never_timed() {
    let t0 = Instant::now();
    let (mut room, got) = house_room(false, t0);
    // The house is X: asked for move 1 at once; only A hears the start.
    assert_eq!(thinks(&got), [1]);
    let started = msgs_to(&got, A);
    assert!(
        matches!(started[..], [ServerMessage::GameStarted { you: Player::O, players, .. }] if &*players[0].name == "house" && players[0].bot)
    );
    assert!(msgs_to(&got, HOUSE).is_empty(), "the house gets no frames");
    assert_eq!(room.next_deadline(), None, "the house's turn runs no clock");
    // A cannot move for the house.
    assert_eq!(error_code(&mv(&mut room, A, 0, 0, t0), A), Some(tictactoe_protocol::ErrorCode::NotYourTurn));
    // An answer for another move number is ignored; the right one is played.
    room.house_move(2, Some((0, 0)), t0);
    assert!(out(&mut room).is_empty());
    let t1 = t0 + Duration::from_secs(3);
    room.house_move(1, Some((1, 1)), t1);
    let got = out(&mut room);
    let moved = msgs_to(&got, A);
    assert!(matches!(
        moved[..],
        [ServerMessage::Moved { row: 1, col: 1, player: Player::X, seq: 1, clock_ms: Some(_), .. }]
    ));
    assert_eq!(room.next_deadline(), Some(t1 + TURN), "A's turn is timed from the house's move");
    // A's move: the house is asked again, and its turn shows no clock.
    let got = mv(&mut room, A, 0, 0, t1);
    assert_eq!(thinks(&got), [3]);
    assert!(matches!(
        msgs_to(&got, A)[..],
        [ServerMessage::Moved { clock_ms: None, next: Some(Player::X), .. }]
    ));
    assert_eq!(room.next_deadline(), None);
    // A choice that is not an empty cell is replaced by a quick move.
    room.house_move(3, Some((0, 0)), t1);
    let got = out(&mut room);
    assert!(matches!(
        msgs_to(&got, A)[..],
        [ServerMessage::Moved { row, col, seq: 3, .. }] if (*row, *col) != (0, 0) && (*row, *col) != (1, 1)
    ));
    room.house_move(99, None, t1);
    assert!(out(&mut room).is_empty());
}

#[test]
fn the_house_agrees_to_every_rematch() {
    let t0 = Instant::now();
    let (mut room, got) = house_room(true, t0);
    assert!(thinks(&got).is_empty(), "A moves first");
    room.request(A, Request::Resign, None, t0);
    let got = out(&mut room);
    assert_eq!(game_over(&got, A).map(|g| g.1), Some(EndReason::Resign));
    room.request(A, Request::Rematch, None, t0);
    let got = out(&mut room);
    // Seats swapped: the house is X now and is asked for the first move.
    assert!(matches!(msgs_to(&got, A)[..], [ServerMessage::GameStarted { you: Player::O, .. }]));
    assert_eq!(thinks(&got), [1]);
}

#[test]
fn a_player_away_from_a_house_game_loses_by_disconnect_after_the_grace() {
    let t0 = Instant::now();
    let (mut room, _) = house_room(true, t0);
    room.spectate(S, None, t0);
    // A and the house have each moved: the game is decided, not aborted.
    mv(&mut room, A, 0, 0, t0);
    room.house_move(2, Some((1, 1)), t0);
    out(&mut room);
    room.disconnect(A, t0);
    let got = out(&mut room);
    assert!(msgs_to(&got, HOUSE).is_empty());
    room.tick(t0 + GRACE);
    let got = out(&mut room);
    assert_eq!(game_over(&got, S).map(|g| (g.0, g.1)), Some((2, EndReason::Disconnect)));
    assert!(room.is_closed());
}

#[test]
fn a_restored_house_game_asks_the_house_again_when_it_is_to_move() {
    let t0 = Instant::now();
    let saved = crate::store::changes::LiveGame {
        berserk: [false; 2],
        tournament: None,
        opening: 0,
        times: Vec::new(),
        id: "G1".into(),
        room: "HOUSE2".into(),
        rules: Rules::classic(3),
        turn_timeout: Some(TURN),
        players: [Identity::guest("ann"), house::identity()],
        tokens: [[1; 32], [0; 32]],
        moves: vec![[1, 1]],
        clock_left: None,
        started_at_ms: 0,
        house: Some(HouseLevel::Random),
    };
    let mut room = Room::restore(saved, settings(), seeded(), Duration::ZERO, t0).unwrap();
    let got = out(&mut room);
    assert_eq!(thinks(&got), [2]);
    room.house_move(2, Some((0, 0)), t0);
    let got = out(&mut room);
    assert!(got.iter().all(|(to, _)| *to != HOUSE));
    // Ann is away until she resumes; the house is there.
    assert_eq!(room.next_deadline(), Some(t0 + GRACE));
}

/// A room where A (a guest, player 1) plays the house on a `size` board.
fn house_room_of(size: usize, t0: Instant) -> Room {
    let rules = Rules::classic(size);
    let mut room = Room::house(
        "HOUSE3".into(),
        rules,
        settings(),
        house_rng(true),
        (A, Identity::guest("a")),
        HouseLevel::Perfect,
        t0,
    )
    .unwrap();
    out(&mut room);
    room
}

#[test]
fn the_house_is_asked_for_its_guest_by_connection_and_waits_until_the_game_ends() {
    let t0 = Instant::now();
    let mut room = house_room_of(3, t0);
    room.request(A, Request::Move { lag_ms: 0, row: 0, col: 0 }, None, t0);
    let (outputs, _) = room.drain();
    let asked: Vec<_> = outputs
        .into_iter()
        .filter_map(|o| if let Output::Think { seq, asker, .. } = o { Some((seq, asker)) } else { None })
        .collect();
    assert_eq!(asked, [(2, Asker::Conn(A))]);
    assert!(room.house_waits(2));
    assert!(!room.house_waits(1) && !room.house_waits(3));
    // A resigns while the house thinks: its move is wanted no more.
    room.request(A, Request::Resign, None, t0);
    out(&mut room);
    assert!(!room.house_waits(2));
    room.house_move(2, Some((1, 1)), t0);
    assert!(out(&mut room).is_empty(), "a move after the game ended is not played");
}

#[test]
fn without_a_search_in_time_the_house_still_moves_and_blocks_on_3x3() {
    let t0 = Instant::now();
    let mut room = house_room_of(3, t0);
    mv(&mut room, A, 0, 0, t0);
    room.house_move(2, None, t0);
    let got = out(&mut room);
    let Some(ServerMessage::Moved { row, col, seq: 2, .. }) = msgs_to(&got, A).first().cloned() else {
        panic!("the house did not move: {got:?}")
    };
    let (row, col) = (*row, *col);
    // A takes a second cell of a line through its corner that the house is
    // not on: the house, still without a search, must take the third.
    let lines = [[(0, 1), (0, 2)], [(1, 0), (2, 0)], [(1, 1), (2, 2)]];
    let [mine, threat] = *lines.iter().find(|l| !l.contains(&(row, col))).expect("a free line");
    mv(&mut room, A, mine.0 as i64, mine.1 as i64, t0);
    room.house_move(4, None, t0);
    let got = out(&mut room);
    assert!(
        matches!(msgs_to(&got, A)[..], [ServerMessage::Moved { row, col, seq: 4, .. }] if (*row, *col) == threat),
        "the quick move did not block at {threat:?}: {got:?}"
    );
}

#[test]
fn on_a_big_board_the_quick_move_is_next_to_the_last_move() {
    let t0 = Instant::now();
    let mut room = house_room_of(100, t0);
    mv(&mut room, A, 50, 50, t0);
    room.house_move(2, None, t0);
    let got = out(&mut room);
    assert!(
        matches!(
            msgs_to(&got, A)[..],
            [ServerMessage::Moved { row, col, seq: 2, .. }] if row.abs_diff(50) <= 1 && col.abs_diff(50) <= 1
        ),
        "{got:?}"
    );
    // Around a corner, off the board's edge.
    mv(&mut room, A, 0, 0, t0);
    room.house_move(4, None, t0);
    let got = out(&mut room);
    assert!(
        matches!(msgs_to(&got, A)[..], [ServerMessage::Moved { row, col, seq: 4, .. }] if *row <= 1 && *col <= 1 && (*row, *col) != (0, 0)),
        "{got:?}"
    );
}
