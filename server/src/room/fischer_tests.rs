//! A room on a Fischer clock, driven by a fake clock: the first moves' own
//! turn, the mover's clock and its increment, a flag while away, the times
//! saved with each move, and a restored game's clocks.

use super::tests::{A, GRACE, msgs_to, mv, out, seeded, settings};
use super::*;
use crate::core::account::Identity;
use crate::store::changes::LiveGame;

const B: ConnId = ConnId::new(0, 2);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A 3×3 room on `initial_ms`+`increment_ms` where A is player 1.
fn timed(initial_ms: u64, increment_ms: u64, records: bool, t0: Instant) -> Room {
    let rules = Rules::classic(3).with_clock(Some(Fischer { initial_ms, increment_ms }));
    let settings = Settings { records, ..settings() };
    super::tests::paired_on(rules, settings, t0).0
}

/// The `clocks` and `running` of the `moved` that `conn` got.
fn moved_clocks(got: &[(ConnId, super::tests::Got)], conn: ConnId) -> (Option<[u64; 2]>, Option<Player>) {
    msgs_to(got, conn)
        .into_iter()
        .find_map(|m| match m {
            ServerMessage::Moved { clocks, running, .. } => Some((*clocks, *running)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no moved in {got:?}"))
}

#[test]
fn the_first_moves_run_on_their_own_turn_then_the_movers_clock_runs() {
    let t0 = Instant::now();
    let mut room = timed(10_000, 2_000, false, t0);
    assert_eq!(room.next_deadline(), Some(t0 + ms(30_000)), "X's first move has 30 s");
    let got = mv(&mut room, A, 0, 0, t0 + ms(20_000));
    assert_eq!(moved_clocks(&got, B), (Some([10_000, 10_000]), None));
    assert_eq!(room.next_deadline(), Some(t0 + ms(50_000)), "and O's has its own 30 s");
    let got = mv(&mut room, B, 1, 1, t0 + ms(21_000));
    assert_eq!(moved_clocks(&got, A), (Some([10_000, 10_000]), Some(Player::X)));
    assert_eq!(room.next_deadline(), Some(t0 + ms(31_000)), "X's clock runs: 10 s");
    let got = mv(&mut room, A, 0, 1, t0 + ms(24_000));
    assert_eq!(moved_clocks(&got, B), (Some([9_000, 10_000]), Some(Player::O)), "10 - 3 + 2");
    assert_eq!(room.next_deadline(), Some(t0 + ms(34_000)));
}

#[test]
fn an_away_players_clock_runs_and_its_flag_ends_the_game_and_the_room() {
    let t0 = Instant::now();
    let mut room = timed(3_000, 0, false, t0);
    mv(&mut room, A, 0, 0, t0);
    mv(&mut room, B, 1, 1, t0);
    room.disconnect(A, t0 + ms(500));
    out(&mut room);
    // The clock (2.5 s left) falls before the grace (5 s) ends.
    assert!(GRACE > ms(3_000));
    assert_eq!(room.next_deadline(), Some(t0 + ms(3_000)));
    room.tick(t0 + ms(3_000));
    let got = out(&mut room);
    let over = msgs_to(&got, B).into_iter().find_map(|m| match m {
        ServerMessage::GameOver { winner, reason, clocks, .. } => Some((*winner, *reason, *clocks)),
        _ => None,
    });
    assert_eq!(over, Some((Some(Player::O), EndReason::Timeout, Some([0, 3_000]))));
    assert!(room.is_closed(), "an away player cannot rematch: {got:?}");
}

#[test]
fn each_move_is_saved_with_the_movers_time_and_a_restored_game_runs_from_it() {
    let t0 = Instant::now();
    let mut room = timed(10_000, 1_000, true, t0);
    let mut lefts = Vec::new();
    for (conn, r, c, at) in [(A, 0, 0, 1_000), (B, 1, 1, 2_000), (A, 0, 1, 4_000), (B, 2, 2, 9_000)] {
        let got = mv(&mut room, conn, r, c, t0 + ms(at));
        lefts.extend(got.iter().filter_map(|(_, g)| match g {
            super::tests::Got::Save(LiveWrite::Move { left, .. }) => Some(*left),
            _ => None,
        }));
    }
    // First moves at the initial time; then 10 - 2 + 1 and 10 - 5 + 1.
    assert_eq!(lefts, [Some(10_000), Some(10_000), Some(9_000), Some(6_000)]);
    let saved = LiveGame {
        berserk: [false; 2],
        tournament: None,
        opening: 0,
        id: "GAME1234".into(),
        room: "ROOM".into(),
        rules: room.rules(),
        turn_timeout: None,
        players: [Identity::guest("a"), Identity::guest("b")],
        tokens: [[1; 32], [2; 32]],
        moves: vec![[0, 0], [1, 1], [0, 1], [2, 2]],
        times: vec![10_000, 10_000, 9_000, 6_000],
        clock_left: None,
        started_at_ms: 0,
        house: None,
    };
    // Restored an hour later: the hour is nobody's, X's 9 s run from now.
    let later = t0 + Duration::from_secs(3_600);
    let settings = Settings { records: true, ..settings() };
    let mut back = Room::restore(saved, settings, seeded(), Duration::ZERO, later).unwrap();
    let flag = back.fischer.as_ref().and_then(super::fischer::Clocks::deadline);
    assert_eq!(flag, Some(later + ms(9_000)));
    assert_eq!((back.clocks_at(later + ms(500)), back.running()), (Some([8_500, 6_000]), Some(Player::X)));
    out(&mut back);
}
