//! Property tests: the engine (counters for a whole line, bit planes or runs
//! for a shorter win) against the reference board that walks from every
//! move, for every size up to 12 and every win length, and on boards of 30 to
//! 70 where two players fill long parallel lines in any order; and the judge
//! against the engine.

use proptest::prelude::*;
use tictactoe_protocol::oracle::Board;
use tictactoe_protocol::{Game, MoveError, Player, Verdict, judge};

/// A size, a win length for it, and an order to try the cells in.
fn random_game() -> impl Strategy<Value = (usize, usize, Vec<usize>)> {
    (1..=12usize).prop_flat_map(|n| {
        (Just(n), Game::min_win(n)..=n, Just((0..n * n).collect::<Vec<_>>()).prop_shuffle())
    })
}

/// A `(row, col)`.
type Cell = (usize, usize);

/// Two neighbouring parallel lines on a board of 30 to 70, `X`'s cells and
/// `O`'s in the order they fill them, and a win length up to the size: lines
/// longer than the bit planes' window, runs joined from both sides, every
/// direction, off the centre.
fn long_lines() -> impl Strategy<Value = (usize, usize, Vec<Cell>, Vec<Cell>)> {
    (30..=70usize).prop_flat_map(|n| {
        let order = || Just((0..n).collect::<Vec<_>>()).prop_shuffle();
        (Just(n), Game::min_win(n)..=n, 0..4usize, 0..n / 2, order(), order()).prop_map(
            |(n, win, kind, a, xs, os)| {
                // Cell `j` of the line `a` (`a + 1` for `O`) of this kind.
                let cell = |line: usize, j: usize| -> Option<(usize, usize)> {
                    let (r, c) = match kind {
                        0 => (line, j),
                        1 => (j, line),
                        2 => (j, j + line),
                        _ => (j, (n - 1 - line).checked_sub(j)?),
                    };
                    (r < n && c < n).then_some((r, c))
                };
                let xs = xs.iter().filter_map(|&j| cell(a, j)).collect();
                let os = os.iter().filter_map(|&j| cell(a + 1, j)).collect();
                (n, win, xs, os)
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn engine_matches_the_reference_board_and_judge((n, win, cells) in random_game()) {
        let mut game = Game::with_win(n, win).unwrap();
        let mut board = Board::new(n, win);
        let mut played: Vec<[usize; 2]> = Vec::new();
        for cell in cells {
            if game.status().is_over() {
                break;
            }
            let (r, c) = (cell / n, cell % n);
            let status = game.play(r, c).unwrap();
            played.push([r, c]);
            prop_assert_eq!(status, board.play(r, c).unwrap(), "n {} win {} moves {:?}", n, win, played);
            prop_assert_eq!(judge(n, win, &played), Ok(Verdict::from_status(status)));
        }
        prop_assert!(game.status().is_over());
    }

    #[test]
    fn undo_takes_back_exactly_one_move((n, win, cells) in random_game(), stop in 0usize..144) {
        // Play some moves, take the last few back one by one, and play them
        // again: every state on the way back equals the one on the way out.
        let mut game = Game::with_win(n, win).unwrap();
        let mut states = vec![game.clone()];
        for &cell in cells.iter().take(stop % (n * n) + 1) {
            if game.status().is_over() {
                break;
            }
            game.play(cell / n, cell % n).unwrap();
            states.push(game.clone());
        }
        while game.undo().is_some() {
            states.pop();
            prop_assert_eq!(&game, states.last().unwrap());
        }
    }

    #[test]
    fn refused_moves_change_nothing((n, win, cells) in random_game(), stop in 0usize..144) {
        let mut game = Game::with_win(n, win).unwrap();
        for &cell in cells.iter().take(stop % (n * n)) {
            if game.status().is_over() {
                break;
            }
            game.play(cell / n, cell % n).unwrap();
        }
        let before = game.clone();
        let over = game.status().is_over();
        let expect = |e: MoveError| if over { MoveError::GameOver } else { e };
        prop_assert_eq!(game.play(n, 0), Err(expect(MoveError::OutOfBounds)));
        prop_assert_eq!(game.play(0, n), Err(expect(MoveError::OutOfBounds)));
        if let Some(&[r, c]) = game.moves().first() {
            prop_assert_eq!(game.play(usize::from(r), usize::from(c)), Err(expect(MoveError::Occupied)));
        }
        let wrong = game.turn().map_or(Player::X, Player::other);
        prop_assert_eq!(game.play_as(wrong, 0, 0), Err(expect(MoveError::NotYourTurn)));
        prop_assert_eq!(&game, &before);
    }

    #[test]
    fn long_runs_match_the_reference_board((n, win, xs, os) in long_lines(), back in 0usize..40) {
        let mut game = Game::with_win(n, win).unwrap();
        let mut board = Board::new(n, win);
        let moves: Vec<(usize, usize)> = xs.iter().zip(&os).flat_map(|(&x, &o)| [x, o]).collect();
        let mut statuses = Vec::new();
        for &(r, c) in &moves {
            if game.status().is_over() {
                break;
            }
            let status = game.play(r, c).unwrap();
            prop_assert_eq!(status, board.play(r, c).unwrap(), "n {} win {} moves {:?}", n, win, &moves[..=statuses.len()]);
            statuses.push(status);
        }
        // Take some moves back and play them again: the same outcomes; then
        // take every move back: a fresh game.
        let back = back.min(statuses.len());
        for _ in 0..back {
            game.undo();
        }
        for (i, &(r, c)) in moves.iter().enumerate().take(statuses.len()).skip(statuses.len() - back) {
            prop_assert_eq!(game.play(r, c).unwrap(), statuses[i]);
        }
        while game.undo().is_some() {}
        prop_assert_eq!(game, Game::with_win(n, win).unwrap());
    }
}
