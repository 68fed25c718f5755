//! A sound one-ply heuristic for boards too big to search, for any win
//! length: win now, else block, else the cell on the most promising windows
//! (every `win` consecutive cells in a row, column or diagonal), where a
//! window grows in worth steeply with the marks in it and counts only while
//! one side alone holds it — so open runs are extended and the opponent's
//! open threes and fours are blocked before they become a win.

use tictactoe_protocol::{Game, LineKind, Player};

use crate::{Strategy, empty_cells};

/// The heuristic as a strategy of its own: instant, and sound on any board.
#[derive(Debug, Default)]
pub struct Heuristic;

impl Strategy for Heuristic {
    fn choose(&mut self, game: &Game, _think: std::time::Duration) -> Result<(usize, usize), String> {
        Ok(choose(game))
    }
}

/// One window's cells and who holds them.
struct Window {
    cells: Vec<(usize, usize)>,
    mine: usize,
    theirs: usize,
}

/// Every window of `game.win()` consecutive cells.
fn windows(game: &Game, me: Player) -> Vec<Window> {
    let (n, k) = (game.size(), game.win());
    let board: Vec<Vec<u8>> = game.board().into_iter().map(String::into_bytes).collect();
    let (mine, theirs) = (me.mark() as u8, me.other().mark() as u8);
    let mut all = Vec::new();
    for kind in LineKind::ALL {
        let (dr, dc) = kind.step();
        for r in 0..n {
            for c in 0..n {
                let end_r = r as isize + dr * (k as isize - 1);
                let end_c = c as isize + dc * (k as isize - 1);
                if end_r < 0 || end_c < 0 || end_r >= n as isize || end_c >= n as isize {
                    continue;
                }
                let cells: Vec<(usize, usize)> = (0..k as isize)
                    .map(|i| ((r as isize + i * dr) as usize, (c as isize + i * dc) as usize))
                    .collect();
                let count = |m: u8| cells.iter().filter(|&&(r, c)| board[r][c] == m).count();
                all.push(Window { mine: count(mine), theirs: count(theirs), cells });
            }
        }
    }
    all
}

/// The heuristic move for the player to move.
pub fn choose(game: &Game) -> (usize, usize) {
    let Some(me) = game.turn() else { return (0, 0) };
    let (n, k) = (game.size(), game.win());
    let windows = windows(game, me);
    let empty_in = |w: &Window| w.cells.iter().copied().find(|&(r, c)| !game.is_occupied(r, c));
    // Win now, then block.
    for finishing in [true, false] {
        for w in &windows {
            let (own, other) = if finishing { (w.mine, w.theirs) } else { (w.theirs, w.mine) };
            if own == k - 1 && other == 0 {
                if let Some(cell) = empty_in(w) {
                    return cell;
                }
            }
        }
    }
    // The empty cell on the most valuable windows: each mark in a window
    // still open to one side multiplies its worth; our own count double.
    let worth = |marks: usize| 1i64 << (3 * marks.min(20));
    let mut score = vec![0i64; n * n];
    for w in &windows {
        let weight = match (w.mine, w.theirs) {
            (m, 0) => 2 * worth(m),
            (0, t) => worth(t),
            _ => 0,
        };
        for &(r, c) in &w.cells {
            score[r * n + c] = score[r * n + c].saturating_add(weight);
        }
    }
    let centre = |(r, c): (usize, usize)| (2 * r).abs_diff(n - 1) + (2 * c).abs_diff(n - 1);
    empty_cells(game)
        .into_iter()
        .max_by_key(|&cell| (score[cell.0 * n + cell.1], std::cmp::Reverse(centre(cell))))
        .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(n: usize, moves: &[(usize, usize)]) -> Game {
        let mut g = Game::new(n).unwrap();
        for &(r, c) in moves {
            g.play(r, c).unwrap();
        }
        g
    }

    #[test]
    fn wins_now_then_blocks() {
        // X to move with (0,0),(0,1) and O threatening column 2: X wins at (0,2).
        let g = game(3, &[(0, 0), (1, 2), (0, 1), (2, 2)]);
        assert_eq!(choose(&g), (0, 2));
        // O to move must block X's row 0.
        let g = game(3, &[(0, 0), (1, 1), (0, 1)]);
        assert_eq!(choose(&g), (0, 2));
    }

    #[test]
    fn connect_k_blocks_an_open_three_and_extends_its_own_run() {
        let five = |moves: &[(usize, usize)]| {
            let mut g = Game::with_win(15, 5).unwrap();
            for &(r, c) in moves {
                g.play(r, c).unwrap();
            }
            g
        };
        // O to move; X has an open four on row 7 (7,5)..(7,8): O must take an end.
        let g = five(&[(7, 5), (0, 0), (7, 6), (0, 14), (7, 7), (14, 0), (7, 8)]);
        assert!(matches!(choose(&g), (7, 4) | (7, 9)), "{:?}", choose(&g));
        // X to move with four in a column and a free end: X wins there.
        let g = five(&[(2, 3), (0, 0), (3, 3), (0, 14), (4, 3), (14, 0), (5, 3), (14, 14)]);
        assert!(matches!(choose(&g), (1, 3) | (6, 3)), "{:?}", choose(&g));
        // X to move; O threatens an open three on a diagonal: X blocks an end.
        let g = five(&[(0, 0), (5, 5), (0, 14), (6, 6), (14, 0), (7, 7)]);
        assert!(matches!(choose(&g), (4, 4) | (8, 8)), "{:?}", choose(&g));
    }

    #[test]
    fn big_boards_get_a_legal_move() {
        let g = game(20, &[(0, 0), (5, 5)]);
        let (r, c) = choose(&g);
        assert!(!g.is_occupied(r, c));
    }
}
