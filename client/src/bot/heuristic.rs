//! A sound one-ply heuristic for boards too big to search: win now, else
//! block, else push the best line still open to us.

use tictactoe_protocol::{Game, Player};

use super::empty_cells;

/// One line's cells and who holds them.
struct LineCount {
    cells: Vec<(usize, usize)>,
    mine: usize,
    theirs: usize,
}

fn lines(game: &Game, me: Player) -> Vec<LineCount> {
    let n = game.size();
    let board: Vec<Vec<u8>> = game.board().into_iter().map(String::into_bytes).collect();
    let mut all: Vec<Vec<(usize, usize)>> = Vec::with_capacity(2 * n + 2);
    for i in 0..n {
        all.push((0..n).map(|j| (i, j)).collect());
        all.push((0..n).map(|j| (j, i)).collect());
    }
    all.push((0..n).map(|i| (i, i)).collect());
    all.push((0..n).map(|i| (i, n - 1 - i)).collect());
    let mine = me.mark() as u8;
    let theirs = me.other().mark() as u8;
    all.into_iter()
        .map(|cells| {
            let count = |m: u8| cells.iter().filter(|&&(r, c)| board[r][c] == m).count();
            LineCount { mine: count(mine), theirs: count(theirs), cells }
        })
        .collect()
}

/// The heuristic move for the player to move.
pub fn choose(game: &Game) -> (usize, usize) {
    let Some(me) = game.turn() else { return (0, 0) };
    let n = game.size();
    let lines = lines(game, me);
    let empty_on = |l: &LineCount| l.cells.iter().copied().find(|&(r, c)| !game.is_occupied(r, c));
    // Win now, then block.
    for finishing in [true, false] {
        for l in &lines {
            let (own, other) = if finishing { (l.mine, l.theirs) } else { (l.theirs, l.mine) };
            if own == n - 1 && other == 0 {
                if let Some(cell) = empty_on(l) {
                    return cell;
                }
            }
        }
    }
    // The empty cell that serves the most open lines, weighted by progress;
    // lines still open to the opponent count too, as places to block.
    let mut best = None;
    let mut best_score = i64::MIN;
    let mut score = vec![0i64; n * n];
    for l in &lines {
        let weight = match (l.mine, l.theirs) {
            (m, 0) => 4 * (m as i64 + 1) * (m as i64 + 1),
            (0, t) => (t as i64 + 1) * (t as i64 + 1),
            _ => 0,
        };
        for &(r, c) in &l.cells {
            score[r * n + c] += weight;
        }
    }
    for (r, c) in empty_cells(game) {
        let s = score[r * n + c];
        if s > best_score {
            best_score = s;
            best = Some((r, c));
        }
    }
    best.unwrap_or((0, 0))
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
    fn big_boards_get_a_legal_move() {
        let g = game(20, &[(0, 0), (5, 5)]);
        let (r, c) = choose(&g);
        assert!(!g.is_occupied(r, c));
    }
}
