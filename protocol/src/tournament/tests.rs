use super::*;

fn terms(size: usize) -> Terms {
    let clock = Fischer { initial_ms: 60_000, increment_ms: 0 };
    Terms { name: "t".into(), size, win: size, clock, duration_ms: 60_000 }
}

/// A game between `x` and `o` ending at `t`: `winner` 1 or 2 (0 a draw), with `plies` moves.
fn game(t: i64, x: &str, o: &str, winner: u8, plies: usize) -> ScoredGame {
    ScoredGame {
        id: format!("g{t}").into(),
        ended_at: t,
        players: [x.into(), o.into()],
        winner: match winner {
            1 => Some(Player::X),
            2 => Some(Player::O),
            _ => None,
        },
        reason: if winner == 0 { EndReason::Draw } else { EndReason::Line },
        moves: [plies.div_ceil(2), plies / 2],
        berserk: [false, false],
        ratings: [Some(1500), Some(1500)],
    }
}

fn row<'a>(rows: &'a [Standing], name: &str) -> &'a Standing {
    rows.iter().find(|r| r.name == name).expect(name)
}

#[test]
fn thresholds_scale_to_small_boards_as_compete_md_says() {
    assert_eq!((terms(3).berserk_moves(), terms(3).draw_moves()), (3, 5));
    assert_eq!((terms(4).berserk_moves(), terms(4).draw_moves()), (4, 8));
    assert_eq!((terms(15).berserk_moves(), terms(15).draw_moves()), (7, 10));
}

#[test]
fn two_wins_in_a_row_make_a_streak_that_doubles_until_a_game_not_won() {
    let t = terms(3);
    let games = [
        game(1, "a", "b", 1, 5),
        game(2, "a", "c", 1, 5),
        game(3, "a", "b", 1, 5), // streak: 4
        game(4, "a", "c", 0, 9), // streak draw: 2, ends it
        game(5, "a", "b", 1, 5), // 2
        game(6, "a", "c", 2, 6), // loss 0
    ];
    let rows = standings(&t, &[], &games);
    let a = row(&rows, "a");
    assert_eq!(a.results, [2, 2, 4, 2, 2, 0]);
    assert_eq!((a.score, a.games, a.streak, a.rank), (12, 6, false, 1));
    let c = row(&rows, "c");
    assert_eq!(c.results, [0, 1, 2]);
    assert_eq!(c.score, 3);
}

#[test]
fn a_short_draw_scores_nothing_and_an_aborted_game_is_not_counted() {
    let t = terms(3);
    let mut aborted = game(3, "a", "b", 0, 1);
    aborted.reason = EndReason::Aborted;
    let games = [game(1, "a", "b", 1, 5), game(2, "a", "b", 1, 5), aborted, game(4, "a", "b", 0, 4)];
    let rows = standings(&t, &[], &games);
    let a = row(&rows, "a");
    assert_eq!(a.results, [2, 2, 0], "the short draw scores 0 and the aborted game is skipped");
    assert!(!a.streak);
    let with_five = standings(&t, &[], &[game(1, "a", "b", 0, 5)]);
    assert_eq!(row(&with_five, "a").results, [1]);
}

#[test]
fn a_berserk_win_scores_one_more_only_with_enough_own_moves() {
    let t = terms(3);
    let mut long = game(1, "a", "b", 1, 5); // a made 3 moves
    long.berserk = [true, true];
    let mut short = game(2, "c", "d", 1, 3); // c made 2 moves
    short.berserk = [true, false];
    let rows = standings(&t, &[], &[long, short]);
    assert_eq!(row(&rows, "a").score, 3);
    assert_eq!(row(&rows, "b").score, 0, "a berserk loss is a loss");
    assert_eq!(row(&rows, "c").score, 2);
}

#[test]
fn ties_break_by_performance_and_players_without_games_are_listed() {
    let t = terms(3);
    let mut strong = game(1, "a", "s", 1, 5);
    strong.ratings = [Some(1500), Some(2000)];
    let mut weak = game(2, "b", "w", 1, 5);
    weak.ratings = [Some(1500), Some(1000)];
    let players = [("a".to_owned(), false), ("z".to_owned(), true)];
    let rows = standings(&t, &players, &[weak, strong]);
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "s", "w", "z"]);
    assert_eq!(rows[0].performance, Some(2500));
    assert_eq!(rows[1].performance, Some(1500));
    assert_eq!((rows[4].games, rows[4].performance, rows[4].paused), (0, None, true));
    assert_eq!(rows.iter().map(|r| r.rank).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
}

fn free(name: &str, rank: usize, last: Option<&str>) -> Free<String> {
    Free { key: name.to_owned(), name: name.to_owned(), rank, last: last.map(str::to_owned) }
}

#[test]
fn pairing_takes_the_nearest_in_rank_but_not_the_last_opponent_while_another_is_free() {
    let pairs =
        pair(vec![free("a", 1, Some("b")), free("b", 2, Some("a")), free("c", 3, None), free("d", 9, None)]);
    assert_eq!(pairs, [("a".to_owned(), "c".to_owned()), ("b".to_owned(), "d".to_owned())]);
    let alone = pair(vec![free("a", 1, Some("b")), free("b", 2, Some("a"))]);
    assert_eq!(alone, [("a".to_owned(), "b".to_owned())], "no other player is free");
    assert!(pair(vec![free("a", 1, None)]).is_empty());
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_free_player_but_one_is_paired_and_never_with_a_last_opponent_needlessly(
            lasts in proptest::collection::vec(proptest::option::of(0usize..12), 0..12)
        ) {
            let n = lasts.len();
            let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
            let free_players: Vec<Free<usize>> = (0..n)
                .map(|i| Free {
                    key: i,
                    name: names[i].clone(),
                    rank: i + 1,
                    last: lasts[i].filter(|&l| l < n && l != i).map(|l| names[l].clone()),
                })
                .collect();
            let pairs = pair(free_players.clone());
            let mut seen = std::collections::HashSet::new();
            for &(a, b) in &pairs {
                prop_assert!(a != b && seen.insert(a) && seen.insert(b));
            }
            // Never stalls: at most one is left unpaired.
            prop_assert!(n - seen.len() <= 1, "{} of {} unpaired", n - seen.len(), n);
            prop_assert!(!needless_rematch(&free_players, &pairs), "{pairs:?}");
        }
    }
}
