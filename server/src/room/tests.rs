//! The room's rules, driven by a fake clock: no sockets, no sleeps.

use crate::core::account::{self, Identity};
use crate::store::changes::LiveGame;
use crate::store::record::GameRecord;

use super::*;
use tictactoe_protocol::{ClosedReason, Line, LineKind, Player, judge};

/// A room's generator with a fixed seed.
pub(super) fn seeded() -> rand::rngs::StdRng {
    rand::SeedableRng::seed_from_u64(1)
}

/// A generator with which the house room seats the human first, or not.
pub(super) fn house_rng(human_first: bool) -> rand::rngs::StdRng {
    use rand::{Rng, SeedableRng};
    (0..)
        .map(rand::rngs::StdRng::seed_from_u64)
        .find(|rng| rng.clone().random::<bool>() == human_first)
        .unwrap_or_else(seeded)
}

pub(super) const A: ConnId = ConnId::new(0, 1);
const B: ConnId = ConnId::new(0, 2);
pub(super) const S: ConnId = ConnId::new(0, 3);
pub(super) const TURN: Duration = Duration::from_secs(10);
pub(super) const GRACE: Duration = Duration::from_secs(5);

/// What one connection received, decoded.
#[derive(Debug, PartialEq)]
pub(super) enum Got {
    Msg(ServerMessage),
    Live(bool),
    Released,
    Replaced,
    Record(Box<GameRecord>),
    Save(LiveWrite),
    Think(usize),
}

pub(super) fn settings() -> Settings {
    Settings { turn_timeout: Some(TURN), grace: GRACE, records: false, wall: crate::room::WallClock::now() }
}

/// The room's output, with every broadcast expanded to its recipients.
pub(super) fn out(room: &mut Room) -> Vec<(ConnId, Got)> {
    let (outputs, recipients) = room.drain();
    let mut got = Vec::new();
    for output in outputs {
        match output {
            Output::Send { to, msg } => got.push((to, Got::Msg(msg))),
            Output::Broadcast { msg, to } => {
                got.extend(recipients[to].iter().map(|&c| (c, Got::Msg(msg.clone()))));
            }
            Output::Live { to, live } => got.push((to, Got::Live(live))),
            Output::Release { to } => got.push((to, Got::Released)),
            Output::Replace { to } => got.push((to, Got::Replaced)),
            Output::Record { record, .. } => got.push((ConnId::MIN, Got::Record(record))),
            Output::Save(write) => got.push((ConnId::MIN, Got::Save(write))),
            Output::Think { seq, .. } => got.push((HOUSE, Got::Think(seq))),
        }
    }
    got
}

pub(super) fn msgs_to(got: &[(ConnId, Got)], conn: ConnId) -> Vec<&ServerMessage> {
    got.iter()
        .filter(|(to, _)| *to == conn)
        .filter_map(|(_, g)| match g {
            Got::Msg(m) => Some(m),
            _ => None,
        })
        .collect()
}

pub(super) fn game_over(got: &[(ConnId, Got)], conn: ConnId) -> Option<(u8, EndReason, Vec<[u16; 2]>)> {
    msgs_to(got, conn).into_iter().find_map(|m| match m {
        ServerMessage::GameOver { winner, reason, moves, .. } => {
            Some((winner.map_or(0, Player::number), *reason, moves.clone()))
        }
        _ => None,
    })
}

pub(super) fn error_code(got: &[(ConnId, Got)], conn: ConnId) -> Option<ErrorCode> {
    msgs_to(got, conn).into_iter().find_map(|m| match m {
        ServerMessage::Error { code, .. } => Some(*code),
        _ => None,
    })
}

/// A 3×3 room where A is player 1 and B player 2, game started at `t0`, and
/// what it said.
fn paired(t0: Instant) -> (Room, Vec<(ConnId, Got)>) {
    paired_on(Rules::classic(3), settings(), t0)
}

/// A room on `rules` and `settings` where A is player 1 and B player 2,
/// game started at `t0`, and what it said.
pub(super) fn paired_on(rules: Rules, settings: Settings, t0: Instant) -> (Room, Vec<(ConnId, Got)>) {
    let (a, b) = ((A, Identity::guest("a")), (B, Identity::guest("b")));
    let mut room = Room::paired("ROOM".into(), rules, settings, seeded(), a, b, t0).unwrap();
    let got = out(&mut room);
    (room, got)
}

/// A room where A is player 1 and B player 2, game started at `t0`.
fn started(t0: Instant) -> Room {
    let (room, got) = paired(t0);
    for (conn, you) in [(A, Player::X), (B, Player::O)] {
        assert!(
            matches!(msgs_to(&got, conn)[..], [ServerMessage::GameStarted { you: y, turn: Player::X, .. }] if *y == you)
        );
    }
    room
}

/// A started room where each side has moved once (A at a1, B at b2): A is
/// to move, and a timeout or a disconnect now decides the game.
fn opened(t0: Instant) -> Room {
    let mut room = started(t0);
    mv(&mut room, A, 0, 0, t0);
    mv(&mut room, B, 1, 1, t0);
    room
}

/// A started room where A is player 1 and B player 2, and the resume token of `seat`'s player.
fn paired_with_token(t0: Instant, seat: ConnId) -> (Room, Arc<str>) {
    let (room, got) = paired(t0);
    let token = msgs_to(&got, seat).into_iter().find_map(|m| match m {
        ServerMessage::GameStarted { resume_token, .. } => Some(resume_token.clone()),
        _ => None,
    });
    (room, token.unwrap())
}

pub(super) fn mv(room: &mut Room, conn: ConnId, row: i64, col: i64, now: Instant) -> Vec<(ConnId, Got)> {
    room.request(conn, Request::Move { lag_ms: 0, row, col }, None, now);
    out(room)
}

#[test]
fn moves_alternate_and_both_see_them() {
    let t0 = Instant::now();
    let mut room = started(t0);
    let got = mv(&mut room, A, 1, 1, t0);
    for conn in [A, B] {
        assert!(matches!(
            msgs_to(&got, conn)[..],
            [ServerMessage::Moved {
                seq: 1,
                player: Player::X,
                next: Some(Player::O),
                clock_ms: Some(10_000),
                ..
            }]
        ));
    }
    let got = mv(&mut room, A, 0, 0, t0);
    assert_eq!(error_code(&got, A), Some(ErrorCode::NotYourTurn));
    assert!(msgs_to(&got, B).is_empty());
    let got = mv(&mut room, B, 1, 1, t0);
    assert_eq!(error_code(&got, B), Some(ErrorCode::CellOccupied));
    let got = mv(&mut room, B, 3, 0, t0);
    assert_eq!(error_code(&got, B), Some(ErrorCode::OutOfBounds));
    let got = mv(&mut room, B, -1, 0, t0);
    assert_eq!(error_code(&got, B), Some(ErrorCode::OutOfBounds));
    let got = mv(&mut room, B, 0, 0, t0);
    assert!(matches!(msgs_to(&got, A)[..], [ServerMessage::Moved { seq: 2, player: Player::O, .. }]));
}

#[test]
fn mover_alone_gets_the_id() {
    let t0 = Instant::now();
    let mut room = started(t0);
    room.request(A, Request::Move { lag_ms: 0, row: 0, col: 0 }, Some(RequestId::Int(7)), t0);
    let got = out(&mut room);
    assert!(matches!(msgs_to(&got, A)[..], [ServerMessage::Moved { id: Some(RequestId::Int(7)), .. }]));
    assert!(matches!(msgs_to(&got, B)[..], [ServerMessage::Moved { id: None, .. }]));
}

#[test]
fn a_win_ends_the_game_for_everyone_and_judges_the_same() {
    let t0 = Instant::now();
    let mut room = started(t0);
    room.spectate(S, None, t0);
    out(&mut room);
    for (conn, r, c) in [(A, 0, 2), (B, 0, 0), (A, 1, 1), (B, 0, 1)] {
        mv(&mut room, conn, r, c, t0);
    }
    let got = mv(&mut room, A, 2, 0, t0);
    for conn in [A, B, S] {
        let (winner, reason, moves) = game_over(&got, conn).unwrap();
        assert_eq!((winner, reason), (1, EndReason::Line));
        let moves: Vec<[usize; 2]> = moves.iter().map(|m| [usize::from(m[0]), usize::from(m[1])]).collect();
        assert_eq!(judge(3, 3, &moves).unwrap().winner_number(), 1);
    }
    assert!(msgs_to(&got, A).iter().any(|m| matches!(
        m,
        ServerMessage::GameOver {
            line: Some(Line { kind: LineKind::AntiDiag, index: 0, start: [0, 2], len: 3 }),
            ..
        }
    )));
    assert!(got.contains(&(A, Got::Live(false))));
    let got = mv(&mut room, B, 2, 2, t0);
    assert_eq!(error_code(&got, B), Some(ErrorCode::GameOver));
    assert_eq!((room.counts().started, room.counts().finished()), (1, 1));
}

#[test]
fn player_one_times_out() {
    let t0 = Instant::now();
    let mut room = opened(t0);
    assert_eq!(room.next_deadline(), Some(t0 + TURN));
    room.tick(t0 + TURN - Duration::from_millis(1));
    assert!(out(&mut room).is_empty());
    room.tick(t0 + TURN);
    let got = out(&mut room);
    assert_eq!(game_over(&got, B).map(|g| (g.0, g.1)), Some((2, EndReason::Timeout)));
}

/// Before each side has moved, running out of time, dropping out or
/// leaving aborts the game: no winner, and (between accounts) no rating.
#[test]
fn a_game_ended_before_each_side_moved_is_aborted_and_unrated() {
    let t0 = Instant::now();
    let rated = Settings { records: true, ..settings() };
    let accounts = |n: i64| {
        Arc::new(Identity {
            name: format!("p{n}").into(),
            account: Some(n),
            bot: false,
            ratings: Box::default(),
        })
    };
    type End = fn(&mut Room, Instant);
    let end: [(&str, End); 3] = [
        ("timeout", |room, t0| room.tick(t0 + TURN)),
        ("disconnect", |room, t0| {
            room.disconnect(B, t0);
            room.tick(t0 + GRACE);
        }),
        ("leave", |room, t0| room.request(B, Request::Leave, None, t0)),
    ];
    for moves in [0, 1] {
        for (how, finish) in end {
            let mut room = Room::paired(
                "ROOM".into(),
                Rules::classic(3),
                rated.clone(),
                seeded(),
                (A, accounts(1)),
                (B, accounts(2)),
                t0,
            )
            .unwrap();
            if moves == 1 {
                mv(&mut room, A, 0, 0, t0);
            }
            out(&mut room);
            // B's turn after one move: the timeout case waits for it.
            finish(&mut room, t0 + TURN * moves);
            let got = out(&mut room);
            assert_eq!(
                game_over(&got, A).map(|g| (g.0, g.1)),
                Some((0, EndReason::Aborted)),
                "{how} after {moves}"
            );
            let record = got.iter().find_map(|(_, g)| if let Got::Record(r) = g { Some(r) } else { None });
            let record = record.expect("an aborted game is recorded");
            assert_eq!((record.winner, record.reason, record.ratings), (None, EndReason::Aborted, None));
            let players = [record.players[0].account, record.players[1].account];
            assert_eq!(
                crate::ratings::rated_pair(players, record.reason),
                None,
                "the store will not rate it"
            );
        }
    }
}

#[test]
fn player_two_times_out_and_the_clock_restarts_per_move() {
    let t0 = Instant::now();
    let mut room = opened(t0);
    let t1 = t0 + Duration::from_secs(9);
    mv(&mut room, A, 2, 2, t1);
    assert_eq!(room.next_deadline(), Some(t1 + TURN));
    room.tick(t0 + TURN);
    assert!(out(&mut room).is_empty());
    room.tick(t1 + TURN);
    let got = out(&mut room);
    assert_eq!(game_over(&got, A).map(|g| (g.0, g.1)), Some((1, EndReason::Timeout)));
}

#[test]
fn grace_expiry_loses_by_disconnect() {
    let t0 = Instant::now();
    let mut room = opened(t0);
    room.disconnect(B, t0);
    let got = out(&mut room);
    assert_eq!(msgs_to(&got, A), vec![&ServerMessage::OpponentDisconnected { grace_ms: 5000 }]);
    assert_eq!(room.next_deadline(), Some(t0 + GRACE));
    room.tick(t0 + GRACE);
    let got = out(&mut room);
    assert_eq!(game_over(&got, A).map(|g| (g.0, g.1)), Some((1, EndReason::Disconnect)));
    assert!(room.is_closed());
}

#[test]
fn resume_within_grace_restores_the_seat_and_board() {
    let t0 = Instant::now();
    let (mut room, token) = paired_with_token(t0, B);
    mv(&mut room, A, 1, 1, t0);
    room.disconnect(B, t0);
    out(&mut room);
    let b2: ConnId = ConnId::new(0, 9);
    room.resume(b2, "ROOMwrong", None, t0);
    let got = out(&mut room);
    assert_eq!(error_code(&got, b2), Some(ErrorCode::InvalidToken));
    room.resume(b2, &token, Some(RequestId::Int(1)), t0 + Duration::from_secs(1));
    let got = out(&mut room);
    match msgs_to(&got, b2)[..] {
        [
            ServerMessage::State {
                you: Some(Player::O),
                turn: Some(Player::O),
                board,
                moves,
                id: Some(RequestId::Int(1)),
                ..
            },
        ] => {
            assert_eq!(board, &vec!["...".to_owned(), ".X.".into(), "...".into()]);
            assert_eq!(moves, &vec![[1, 1]]);
        }
        ref other => panic!("unexpected {other:?}"),
    }
    assert_eq!(msgs_to(&got, A), vec![&ServerMessage::OpponentReconnected {}]);
    let got = mv(&mut room, b2, 0, 0, t0 + Duration::from_secs(2));
    assert!(matches!(msgs_to(&got, A)[..], [ServerMessage::Moved { player: Player::O, seq: 2, .. }]));
    // The old connection no longer plays for the seat.
    let got = mv(&mut room, B, 2, 2, t0 + Duration::from_secs(2));
    assert_eq!(error_code(&got, B), Some(ErrorCode::NotInGame));
}

#[test]
fn timer_pauses_while_away_and_resumes_after() {
    let t0 = Instant::now();
    let (mut room, token) = paired_with_token(t0, A);
    mv(&mut room, A, 0, 0, t0);
    mv(&mut room, B, 1, 1, t0);
    // A (to move) used 4 s, then dropped for 3 s: 6 s are left after resuming.
    room.disconnect(A, t0 + Duration::from_secs(4));
    out(&mut room);
    assert_eq!(room.next_deadline(), Some(t0 + Duration::from_secs(4) + GRACE));
    let back = t0 + Duration::from_secs(7);
    room.resume(ConnId::new(0, 10), &token, None, back);
    let got = out(&mut room);
    assert!(matches!(
        msgs_to(&got, ConnId::new(0, 10))[..],
        [ServerMessage::State { clock_ms: Some(6000), .. }]
    ));
    assert_eq!(room.next_deadline(), Some(back + Duration::from_secs(6)));
    room.tick(back + Duration::from_secs(6));
    let got = out(&mut room);
    assert_eq!(game_over(&got, B).map(|g| (g.0, g.1)), Some((2, EndReason::Timeout)));
}

#[test]
fn resign_gives_the_game_to_the_opponent() {
    let t0 = Instant::now();
    let mut room = started(t0);
    room.request(B, Request::Resign, None, t0);
    let got = out(&mut room);
    assert_eq!(game_over(&got, A).map(|g| (g.0, g.1)), Some((1, EndReason::Resign)));
    room.request(B, Request::Resign, None, t0);
    assert_eq!(error_code(&out(&mut room), B), Some(ErrorCode::GameOver));
}

#[test]
fn leave_mid_game_is_resigning_and_closes_the_room() {
    let t0 = Instant::now();
    let mut room = opened(t0);
    room.request(A, Request::Leave, None, t0);
    let got = out(&mut room);
    assert_eq!(game_over(&got, B).map(|g| (g.0, g.1)), Some((2, EndReason::Resign)));
    assert!(got.contains(&(A, Got::Released)) && got.contains(&(B, Got::Released)));
    assert!(room.is_closed());
}

#[test]
fn rematch_swaps_seats_and_renews_tokens() {
    let t0 = Instant::now();
    let mut room = started(t0);
    room.request(B, Request::Rematch, None, t0);
    assert_eq!(error_code(&out(&mut room), B), Some(ErrorCode::Busy));
    room.request(A, Request::Resign, None, t0);
    out(&mut room);
    room.request(A, Request::Rematch, None, t0);
    let got = out(&mut room);
    assert!(msgs_to(&got, A).is_empty());
    assert_eq!(msgs_to(&got, B), vec![&ServerMessage::RematchOffered {}]);
    room.request(B, Request::Rematch, None, t0);
    let got = out(&mut room);
    assert!(matches!(
        msgs_to(&got, B)[..],
        [ServerMessage::GameStarted { you: Player::X, mark: Player::X, .. }]
    ));
    assert!(matches!(
        msgs_to(&got, A)[..],
        [ServerMessage::GameStarted { you: Player::O, mark: Player::O, .. }]
    ));
    // B now moves first; seq starts again at 1.
    let got = mv(&mut room, B, 0, 0, t0);
    assert!(matches!(msgs_to(&got, A)[..], [ServerMessage::Moved { player: Player::X, seq: 1, .. }]));
    assert_eq!((room.counts().started, room.counts().finished()), (2, 1));
}

#[test]
fn disconnect_without_grace_loses_at_once() {
    let t0 = Instant::now();
    let quick = Settings {
        turn_timeout: None,
        grace: Duration::ZERO,
        records: false,
        wall: crate::room::WallClock::now(),
    };
    let mut room = Room::paired(
        "ROOM".into(),
        Rules::classic(3),
        quick,
        seeded(),
        (A, Identity::guest("a")),
        (B, Identity::guest("b")),
        t0,
    )
    .unwrap();
    out(&mut room);
    assert_eq!(room.next_deadline(), None);
    mv(&mut room, A, 0, 0, t0);
    mv(&mut room, B, 1, 1, t0);
    room.disconnect(A, t0);
    let got = out(&mut room);
    assert_eq!(game_over(&got, B).map(|g| (g.0, g.1)), Some((2, EndReason::Disconnect)));
    assert!(room.is_closed());
}

#[test]
fn private_room_waits_then_fills_and_refuses_a_third() {
    let t0 = Instant::now();
    let mut room = Room::private(
        "ROOM".into(),
        Rules::classic(4),
        settings(),
        seeded(),
        (A, Identity::guest("a")),
        None,
        None,
        Some(RequestId::Int(1)),
    )
    .unwrap();
    let got = out(&mut room);
    assert!(matches!(
        msgs_to(&got, A)[..],
        [ServerMessage::RoomCreated { size: 4, id: Some(RequestId::Int(1)), .. }]
    ));
    room.request(A, Request::Move { lag_ms: 0, row: 0, col: 0 }, None, t0);
    assert_eq!(error_code(&out(&mut room), A), Some(ErrorCode::NotInGame));
    room.join(B, Identity::guest("b"), None, false, t0);
    let got = out(&mut room);
    assert!(matches!(msgs_to(&got, B)[..], [ServerMessage::GameStarted { you: Player::O, size: 4, .. }]));
    room.join(S, Identity::guest("c"), Some(RequestId::Int(2)), false, t0);
    let got = out(&mut room);
    assert_eq!(error_code(&got, S), Some(ErrorCode::RoomFull));
    assert!(got.contains(&(S, Got::Released)));
}

#[test]
fn spectators_cannot_move_and_creator_leaving_closes_a_waiting_room() {
    let t0 = Instant::now();
    let mut room = started(t0);
    room.spectate(S, None, t0);
    let got = out(&mut room);
    assert!(matches!(msgs_to(&got, S)[..], [ServerMessage::State { you: None, turn: Some(Player::X), .. }]));
    let got = mv(&mut room, S, 0, 0, t0);
    assert_eq!(error_code(&got, S), Some(ErrorCode::NotInGame));
    room.request(S, Request::Leave, None, t0);
    assert_eq!(out(&mut room), vec![(S, Got::Released)]);
    // Left again (a watch of another room on its way): no stray error.
    room.request(S, Request::Leave, None, t0);
    assert_eq!(out(&mut room), vec![(S, Got::Released)]);
    let got = mv(&mut room, A, 0, 0, t0);
    assert!(msgs_to(&got, S).is_empty(), "a spectator who left gets nothing");

    let mut waiting = Room::private(
        "W".into(),
        Rules::classic(3),
        settings(),
        seeded(),
        (A, Identity::guest("a")),
        None,
        None,
        None,
    )
    .unwrap();
    waiting.disconnect(A, t0);
    assert!(waiting.is_closed());
}

#[test]
fn shutdown_ends_the_game_with_no_winner() {
    let t0 = Instant::now();
    let mut room = started(t0);
    room.shutdown(t0, true);
    let got = out(&mut room);
    assert_eq!(game_over(&got, A).map(|g| (g.0, g.1)), Some((0, EndReason::Shutdown)));
    assert!(room.is_closed());
}

fn room_closed(got: &[(ConnId, Got)], conn: ConnId) -> Option<ClosedReason> {
    msgs_to(got, conn).into_iter().find_map(|m| match m {
        ServerMessage::RoomClosed { reason, .. } => Some(*reason),
        _ => None,
    })
}

/// A started room with spectator S, played to a win by A at `t0`.
fn finished(t0: Instant) -> Room {
    let mut room = started(t0);
    room.spectate(S, None, t0);
    for (conn, r, c) in [(A, 0, 0), (B, 1, 0), (A, 0, 1), (B, 1, 1), (A, 0, 2)] {
        mv(&mut room, conn, r, c, t0);
    }
    room
}

#[test]
fn leaving_after_the_game_tells_the_others_and_not_the_leaver() {
    let t0 = Instant::now();
    let mut room = finished(t0);
    room.request(B, Request::Rematch, None, t0);
    out(&mut room);
    room.request(A, Request::Leave, None, t0);
    let got = out(&mut room);
    assert_eq!(room_closed(&got, B), Some(ClosedReason::Left));
    assert_eq!(room_closed(&got, S), Some(ClosedReason::Left));
    assert_eq!(room_closed(&got, A), None);
    for conn in [A, B, S] {
        assert!(got.iter().any(|(to, g)| *to == conn && *g == Got::Released), "{conn} released");
    }
    assert!(room.is_closed());
    // Anything that still reaches it is refused, and changes nothing.
    room.request(B, Request::Rematch, Some(RequestId::Int(1)), t0);
    assert_eq!(error_code(&out(&mut room), B), Some(ErrorCode::NotInGame));
    room.join(S, Identity::guest("s"), None, false, t0);
    assert_eq!(error_code(&out(&mut room), S), Some(ErrorCode::RoomNotFound));
    room.spectate(S, None, t0);
    assert_eq!(error_code(&out(&mut room), S), Some(ErrorCode::RoomNotFound));
}

#[test]
fn a_drop_after_the_game_closes_the_room_with_disconnect() {
    let t0 = Instant::now();
    let mut room = finished(t0);
    room.disconnect(B, t0);
    let got = out(&mut room);
    assert_eq!(room_closed(&got, A), Some(ClosedReason::Disconnect));
    assert_eq!(room_closed(&got, S), Some(ClosedReason::Disconnect));
    assert_eq!(room_closed(&got, B), None);
}

#[test]
fn grace_running_out_ends_the_game_then_closes_the_room() {
    let t0 = Instant::now();
    let mut room = opened(t0);
    room.spectate(S, None, t0);
    out(&mut room);
    room.disconnect(B, t0);
    out(&mut room);
    room.tick(t0 + GRACE);
    let got = out(&mut room);
    let to_a = msgs_to(&got, A);
    assert!(matches!(
        to_a[0],
        ServerMessage::GameOver { reason: EndReason::Disconnect, winner: Some(Player::X), .. }
    ));
    assert!(matches!(to_a[1], ServerMessage::RoomClosed { reason: ClosedReason::Disconnect, .. }));
    assert_eq!(room_closed(&got, S), Some(ClosedReason::Disconnect));
}

#[test]
fn a_creator_leaving_or_dropping_from_a_waiting_room_tells_its_spectators() {
    let t0 = Instant::now();
    for leave in [true, false] {
        let mut room = Room::private(
            "ROOM".into(),
            Rules::classic(3),
            settings(),
            seeded(),
            (A, Identity::guest("a")),
            None,
            None,
            None,
        )
        .unwrap();
        room.spectate(S, None, t0);
        out(&mut room);
        if leave {
            room.request(A, Request::Leave, None, t0);
        } else {
            room.disconnect(A, t0);
        }
        let got = out(&mut room);
        let want = if leave { ClosedReason::Left } else { ClosedReason::Disconnect };
        assert_eq!(room_closed(&got, S), Some(want));
        assert_eq!(room_closed(&got, A), None);
    }
}

#[test]
fn shutdown_closes_without_room_closed() {
    let t0 = Instant::now();
    let mut room = finished(t0);
    room.shutdown(t0, true);
    let got = out(&mut room);
    assert!([A, B, S].iter().all(|&c| room_closed(&got, c).is_none()));
}

#[test]
fn sync_answers_seats_and_spectators_with_their_state() {
    let t0 = Instant::now();
    let mut room = started(t0);
    room.spectate(S, None, t0);
    mv(&mut room, A, 1, 1, t0);
    for (conn, you) in [(A, Some(Player::X)), (B, Some(Player::O)), (S, None)] {
        room.request(conn, Request::Sync, Some(RequestId::Int(7)), t0 + Duration::from_secs(1));
        let got = out(&mut room);
        let [ServerMessage::State { you: y, id, moves, turn, clock_ms, .. }] = &msgs_to(&got, conn)[..]
        else {
            panic!("{got:?}")
        };
        assert_eq!(
            (*y, id.clone(), moves.clone(), *turn),
            (you, Some(RequestId::Int(7)), vec![[1, 1]], Some(Player::O))
        );
        assert_eq!(*clock_ms, Some(9000));
    }
}

#[test]
fn resuming_a_present_seat_replaces_the_old_connection() {
    let t0 = Instant::now();
    let (mut room, token) = paired_with_token(t0, A);
    room.resume(S, &token, None, t0);
    let got = out(&mut room);
    assert!(got.contains(&(A, Got::Replaced)));
    assert!(matches!(msgs_to(&got, S)[..], [ServerMessage::State { you: Some(Player::X), .. }]));
    // The opponent notices nothing: its opponent never went away.
    assert!(msgs_to(&got, B).is_empty());
    assert!(
        mv(&mut room, S, 0, 0, t0)
            .iter()
            .any(|(to, g)| *to == B && matches!(g, Got::Msg(ServerMessage::Moved { .. })))
    );
}

#[test]
fn broadcast_ranges_index_their_recipients_and_the_buffer_is_reused() {
    let mut o = Outbox::default();
    o.broadcast(ServerMessage::RematchOffered {}, [ConnId::new(0, 1), ConnId::new(0, 2)].into_iter());
    o.send(ConnId::new(0, 3), ServerMessage::OpponentReconnected {});
    o.broadcast(ServerMessage::Pong { id: None }, [ConnId::new(0, 4)].into_iter());
    o.broadcast(ServerMessage::Pong { id: None }, std::iter::empty());
    let (out, rcpt) = o.drain();
    let out: Vec<Output> = out.collect();
    assert_eq!(out.len(), 3, "an empty broadcast is dropped");
    let Output::Broadcast { to, .. } = &out[0] else { panic!("{out:?}") };
    assert_eq!(&rcpt[to.clone()], &[ConnId::new(0, 1), ConnId::new(0, 2)]);
    let Output::Broadcast { to, .. } = &out[2] else { panic!("{out:?}") };
    assert_eq!(&rcpt[to.clone()], &[ConnId::new(0, 4)]);
    // The next round starts the buffer afresh.
    o.broadcast(ServerMessage::Pong { id: None }, [ConnId::new(0, 9)].into_iter());
    let (out, rcpt) = o.drain();
    let out: Vec<Output> = out.collect();
    assert_eq!(out, vec![Output::Broadcast { msg: ServerMessage::Pong { id: None }, to: 0..1 }]);
    assert_eq!(rcpt, &[ConnId::new(0, 9)]);
}

fn account(name: &str, id: i64) -> Arc<Identity> {
    Arc::new(Identity { name: name.into(), account: Some(id), bot: false, ratings: Box::default() })
}

/// With records on: a finished game is recorded with its id (which
/// `game_over` carries); the store rates it if both players are accounts
/// (the room's task fills `game_over`'s ratings in from the store's answer),
/// and the room then shows its players' new ratings.
#[test]
fn finished_games_are_recorded_and_rated_between_accounts() {
    let t0 = Instant::now();
    let with_records = Settings { records: true, ..settings() };
    let rules = Rules { clock: None, size: 4, win: 3 };
    for (o, rated) in [(account("bob", 2), true), (Identity::guest("bob"), false)] {
        let mut room = Room::paired(
            "ROOM".into(),
            rules,
            with_records.clone(),
            seeded(),
            (A, account("ann", 1)),
            (B, o),
            t0,
        )
        .unwrap();
        for (conn, r, c) in [(A, 0, 0), (B, 1, 0), (A, 0, 1), (B, 1, 1), (A, 0, 2)] {
            room.request(
                conn,
                Request::Move { lag_ms: 0, row: r, col: c },
                None,
                t0 + Duration::from_secs(3),
            );
        }
        let got = out(&mut room);
        let record = got.iter().find_map(|(_, g)| match g {
            Got::Record(r) => Some(r.clone()),
            _ => None,
        });
        let record = record.expect("a record");
        let over = got.iter().find_map(|(to, g)| match g {
            Got::Msg(ServerMessage::GameOver { game_id, ratings, .. }) if *to == A => {
                Some((game_id.clone(), *ratings))
            }
            _ => None,
        });
        let (game_id, ratings) = over.expect("game_over");
        assert_eq!(game_id.as_deref(), Some(&*record.id));
        assert_eq!(record.moves.len(), 5);
        assert_eq!(record.winner, Some(Player::X));
        assert_eq!((record.ratings, ratings), (None, None), "the room rates nothing itself");
        let players = [record.players[0].account, record.players[1].account];
        assert_eq!(crate::ratings::rated_pair(players, record.reason).is_some(), rated);
        if rated {
            let standings = crate::ratings::rate([crate::ratings::Standing::default(); 2], Some(0));
            // Each account, whichever seat it holds by now.
            room.rated(2, standings[1].after.shown());
            room.rated(1, standings[0].after.shown());
            let state = room.state(None, None, t0);
            let ServerMessage::State { players, .. } = state else { panic!("state") };
            let shown: Vec<_> = players.iter().map(|p| p.rating).collect();
            assert_eq!(shown, [Some(standings[0].after.shown()), Some(standings[1].after.shown())]);
            assert!(shown[0] > Some(1500) && shown[1] < Some(1500));
        }
    }
}

fn saved(got: &[(ConnId, Got)]) -> Vec<&LiveWrite> {
    got.iter()
        .filter_map(|(_, g)| match g {
            Got::Save(w) => Some(w),
            _ => None,
        })
        .collect()
}

fn token_of(got: &[(ConnId, Got)], conn: ConnId) -> Arc<str> {
    msgs_to(got, conn)
        .into_iter()
        .find_map(|m| match m {
            ServerMessage::GameStarted { resume_token, .. } => Some(resume_token.clone()),
            _ => None,
        })
        .expect("game_started")
}

/// With records on, a room saves its game as it goes: the seats with their
/// token hashes at the start, every accepted move with its number, and at
/// shutdown the clock; nobody hears `game_over`. The saved game is a room
/// again: both players away, the clock paused with what it had, and a
/// player who resumes with the old token plays on from the next `seq`.
#[test]
fn a_saved_game_goes_on_after_a_restart() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let with_records = Settings { records: true, ..settings() };
    let (ann, bob) = (Identity::guest("ann"), Identity::guest("bob"));
    let mut room = Room::paired(
        "ROOM".into(),
        Rules::classic(3),
        with_records.clone(),
        seeded(),
        (A, ann),
        (B, bob),
        t0,
    )
    .unwrap();
    let got = out(&mut room);
    let (ta, tb) = (token_of(&got, A), token_of(&got, B));
    let [LiveWrite::Start(start)] = saved(&got)[..] else { panic!("{got:?}") };
    assert_eq!((&*start.players[0].name, &*start.players[1].name), ("ann", "bob"));
    assert!(account::matches(&ta, &start.tokens[0]) && account::matches(&tb, &start.tokens[1]));
    assert_eq!(start.turn_timeout, Some(TURN));
    let mut game = (**start).clone();
    room.request(A, Request::Move { lag_ms: 0, row: 1, col: 1 }, None, t0 + s(1));
    room.request(B, Request::Move { lag_ms: 0, row: 0, col: 0 }, None, t0 + s(2));
    // A refused move is not saved.
    room.request(A, Request::Move { lag_ms: 0, row: 0, col: 0 }, None, t0 + s(3));
    let got = out(&mut room);
    for w in saved(&got) {
        let LiveWrite::Move { seq, cell, .. } = w else { panic!("{w:?}") };
        assert_eq!(*seq as usize, game.moves.len() + 1);
        game.moves.push(*cell);
    }
    assert_eq!(game.moves, vec![[1, 1], [0, 0]]);

    room.shutdown(t0 + s(6), true);
    let got = out(&mut room);
    assert!(game_over(&got, A).is_none() && game_over(&got, B).is_none(), "{got:?}");
    let [LiveWrite::Clock { left, .. }] = saved(&got)[..] else { panic!("{got:?}") };
    assert_eq!(*left, Some(s(6)));
    assert!(room.is_closed());
    game.clock_left = *left;

    // The restart, 100 s later by the room's clock.
    let t1 = t0 + s(100);
    let mut room = Room::restore(game, with_records, seeded(), s(8), t1).unwrap();
    assert_eq!(room.next_deadline(), Some(t1 + GRACE));
    room.resume(B, &tb, None, t1 + s(1));
    let got = out(&mut room);
    let state = msgs_to(&got, B).into_iter().find_map(|m| match m {
        ServerMessage::State { moves, turn, you, clock_ms, .. } => {
            Some((moves.clone(), *turn, *you, *clock_ms))
        }
        _ => None,
    });
    assert_eq!(state, Some((vec![[1, 1], [0, 0]], Some(Player::X), Some(Player::O), Some(6000))));
    assert!(
        msgs_to(&got, B).iter().any(|m| matches!(m, ServerMessage::OpponentDisconnected { grace_ms: 4000 }))
    );
    room.resume(A, &ta, None, t1 + s(2));
    out(&mut room);
    // Both back: ann's clock runs from what it had.
    assert_eq!(room.next_deadline(), Some(t1 + s(8)));
    room.request(A, Request::Move { lag_ms: 0, row: 2, col: 2 }, None, t1 + s(3));
    let got = out(&mut room);
    assert!(
        msgs_to(&got, B).iter().any(|m| matches!(m, ServerMessage::Moved { seq: 3, row: 2, col: 2, .. }))
    );
    let [LiveWrite::Move { seq: 3, .. }] = saved(&got)[..] else { panic!("{got:?}") };
}

/// Nobody comes back to a restored game: it ends by `disconnect` when the
/// grace runs out, the player to move losing, and becomes a record; a saved
/// game whose last move had ended it ends at once with its record.
#[test]
fn a_restored_game_nobody_returns_to_ends_by_disconnect() {
    let t0 = Instant::now();
    let with_records = Settings { records: true, ..settings() };
    let game = |moves: Vec<[u16; 2]>| LiveGame {
        berserk: [false; 2],
        tournament: None,
        opening: 0,
        times: Vec::new(),
        id: "GAME1234".into(),
        room: "ROOM".into(),
        rules: Rules::classic(3),
        turn_timeout: Some(TURN),
        players: [Identity::guest("ann"), Identity::guest("bob")],
        tokens: [[1; 32], [2; 32]],
        moves,
        clock_left: None,
        started_at_ms: 0,
        house: None,
    };
    for (moves, result) in [
        (vec![[0, 0]], (None, EndReason::Aborted)),
        (vec![[0, 0], [1, 1]], (Some(Player::O), EndReason::Disconnect)),
        (vec![[0, 0], [1, 1], [2, 2]], (Some(Player::X), EndReason::Disconnect)),
    ] {
        let mut room =
            Room::restore(game(moves), with_records.clone(), seeded(), Duration::ZERO, t0).unwrap();
        room.tick(t0 + GRACE);
        let got = out(&mut room);
        let [(_, Got::Record(record))] = &got[..] else { panic!("{got:?}") };
        assert_eq!((record.winner, record.reason), result);
        assert!(room.is_closed());
    }
    let won = vec![[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];
    let mut room = Room::restore(game(won.clone()), with_records, seeded(), Duration::ZERO, t0).unwrap();
    let got = out(&mut room);
    let [(_, Got::Record(record))] = &got[..] else { panic!("{got:?}") };
    assert_eq!((record.winner, record.reason, record.moves.clone()), (Some(Player::X), EndReason::Line, won));
    assert_eq!(&*record.id, "GAME1234", "the id chosen when the game started");
    assert!(room.is_closed());
}
