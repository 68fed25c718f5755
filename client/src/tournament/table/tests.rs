use tictactoe_protocol::tournament::TournamentStatus;

use super::*;
use crate::fixtures::{standing, tournament};

#[test]
fn the_standings_line_up_with_the_streak_the_results_and_the_player_marked() {
    let mut bob = standing(2, "bob", &[0, 2, 1], false);
    bob.paused = true;
    let mut zed = standing(3, "Zoë", &[], false);
    zed.performance = None;
    let view =
        tournament(TournamentStatus::Running, vec![standing(1, "ann", &[2, 2, 4], true), bob, zed], &[]);
    let fire = standings(&view, Some("BOB"), Marks::Fire);
    assert_eq!(
        fire,
        [
            "    #  name     score  games  perf  results",
            "    1  ann  🔥      8      3  1600  2 2 4",
            ">   2  bob          3      3  1700  0 2 1  (paused)",
            "    3  Zoë          0      0     -",
        ]
    );
    let plain = standings(&view, None, Marks::Plain);
    assert_eq!(plain[1], "    1  ann  *       8      3  1600  2 2 4");
    assert_eq!(standing_line(&view, "ann", Marks::Plain), "rank 1 of 3, score 8 *");
    assert_eq!(standing_line(&view, "bob", Marks::Fire), "rank 2 of 3, score 3");
    assert_eq!(standing_line(&view, "cy", Marks::Fire), "not in the standings yet (3 players)");
}

#[test]
fn a_long_run_of_games_shows_the_latest_and_no_players_say_so() {
    let many: Vec<u32> = (0..20).map(|i| i % 3).collect();
    let view = tournament(TournamentStatus::Running, vec![standing(1, "ann", &many, false)], &[]);
    let row = &standings(&view, None, Marks::Plain)[1];
    assert!(row.ends_with("… 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1"), "{row}");
    let empty = tournament(TournamentStatus::Starting, Vec::new(), &[]);
    assert_eq!(standings(&empty, None, Marks::Plain)[1], "    nobody has joined yet");
}

#[test]
fn a_list_says_where_each_tournament_is_by_the_clock_given() {
    let running = tournament(TournamentStatus::Running, vec![standing(1, "ann", &[2], false)], &[]).summary;
    let mut starting = running.clone();
    (starting.id, starting.name, starting.status, starting.size, starting.win) =
        ("T2".into(), "Gomoku hour".into(), TournamentStatus::Starting, 15, 5);
    starting.clock = tictactoe_protocol::Fischer { initial_ms: 180_000, increment_ms: 2_000 };
    let mut done = running.clone();
    (done.id, done.status, done.players) = ("T3".into(), TournamentStatus::Finished, 12);
    let text = list(&[running.clone(), starting, done], 1_000_000 - 65_000);
    assert_eq!(
        text,
        "id  name           board              clock  players  status\n\
         T1  Evening arena  3×3                0.5+0  1        running, ends in 2m 05s\n\
         T2  Gomoku hour    15×15, 5 in a row  3+2    1        starting in 1m 05s\n\
         T3  Evening arena  3×3                0.5+0  12       finished\n"
    );
    assert_eq!(list(&[], 0), "no tournaments starting, running or recently finished\n");
    assert_eq!(heading(&running, 1_059_500), "Evening arena — 3×3, 0.5+0 — running, ends in 1s — 1 player");
}

#[test]
fn spans_read_as_people_say_them() {
    assert_eq!([span(-5), span(0), span(1), span(59_000), span(60_000)], ["0s", "0s", "1s", "59s", "1m 00s"]);
    assert_eq!([span(3_599_000), span(3_600_000), span(43_200_000)], ["59m 59s", "1h 00m", "12h 00m"]);
}
