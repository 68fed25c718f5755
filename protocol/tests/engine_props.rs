//! Property tests: the counter engine against a brute-force scan, and the judge
//! against the engine.

use proptest::prelude::*;
use tictactoe_protocol::{Game, Line, LineKind, MoveError, Player, Status, Verdict, judge};

/// Decides a board by scanning every line, in the engine's priority order.
#[allow(clippy::needless_range_loop)]
fn brute_force(game: &Game) -> Status {
    let n = game.size();
    let board: Vec<Vec<u8>> = game.board().into_iter().map(String::into_bytes).collect();
    let full = |cells: &mut dyn Iterator<Item = u8>| {
        let cells: Vec<u8> = cells.collect();
        let first = cells[0];
        (first != b'.' && cells.iter().all(|&c| c == first)).then_some(first)
    };
    let mut lines: Vec<(Line, Option<u8>)> = Vec::new();
    for r in 0..n {
        lines.push((Line { kind: LineKind::Row, index: r }, full(&mut (0..n).map(|c| board[r][c]))));
    }
    for c in 0..n {
        lines.push((Line { kind: LineKind::Col, index: c }, full(&mut (0..n).map(|r| board[r][c]))));
    }
    lines.push((Line { kind: LineKind::Diag, index: 0 }, full(&mut (0..n).map(|i| board[i][i]))));
    lines.push((Line { kind: LineKind::AntiDiag, index: 0 }, full(&mut (0..n).map(|i| board[i][n - 1 - i]))));
    // Only lines through the last move can be complete; among them rows come first.
    let won: Vec<_> = lines.into_iter().filter_map(|(l, m)| m.map(|m| (l, m))).collect();
    if let Some(&(line, mark)) = won.first() {
        let winner = if mark == b'X' { Player::X } else { Player::O };
        return Status::Won { winner, line };
    }
    if game.moves().len() == n * n {
        Status::Draw
    } else {
        Status::InProgress { turn: Player::for_move(game.moves().len()) }
    }
}

fn random_game() -> impl Strategy<Value = (usize, Vec<usize>)> {
    (1..=12usize).prop_flat_map(|n| (Just(n), Just((0..n * n).collect::<Vec<_>>()).prop_shuffle()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn engine_matches_brute_force_and_judge((n, cells) in random_game()) {
        let mut game = Game::new(n).unwrap();
        let mut played: Vec<[usize; 2]> = Vec::new();
        for cell in cells {
            if game.status().is_over() {
                break;
            }
            let (r, c) = (cell / n, cell % n);
            let status = game.play(r, c).unwrap();
            played.push([r, c]);
            prop_assert_eq!(status, brute_force(&game));
            prop_assert_eq!(judge(n, &played), Ok(Verdict::from_status(status)));
        }
        prop_assert!(game.status().is_over());
    }

    #[test]
    fn refused_moves_change_nothing((n, cells) in random_game(), stop in 0usize..144) {
        let mut game = Game::new(n).unwrap();
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
}
