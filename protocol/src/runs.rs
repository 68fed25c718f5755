//! Connect-k in O(1) per move: for each of the four directions, every run of
//! one player's marks keeps its length at its two end cells. A new mark's
//! neighbours in a direction are ends of their runs (the new cell was empty),
//! so the run through the new mark is their two lengths plus one, found and
//! recorded at the new ends in constant time, whatever the win length — the
//! "longest consecutive sequence" trick, in two dimensions. Undo is O(1) too:
//! each move keeps the two lengths it joined.
//!
//! The grid has a border of one cell that never holds a mark, so that a
//! neighbour is always an index away and never a bounds check.

use crate::line::{Line, LineKind};
use crate::player::Player;

/// The border's owner: matches no player.
const BORDER: u16 = 3;

/// One grid cell: who holds it and, per direction (in [`LineKind::ALL`]
/// order), the length of the run it ends (meaningful at a run's two ends
/// only) and, for a mark, how long the run behind it was when it was played
/// (what undo needs to split the run again). Kept together, a neighbour costs
/// one cache line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cell {
    owner: u16,
    len: [u16; 4],
    back: [u16; 4],
}

/// Run lengths and marks for a game whose win length is shorter than its board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Runs {
    /// Cells per grid row: the board's plus the border on both sides.
    stride: usize,
    win: u16,
    grid: Vec<Cell>,
}

impl Runs {
    /// Empty runs for a `size`×`size` board won by `win` in a row.
    pub(crate) fn new(size: usize, win: u16) -> Runs {
        let stride = size + 2;
        let border = Cell { owner: BORDER, ..Cell::default() };
        let mut grid = vec![border; stride * stride];
        for r in 1..=size {
            grid[r * stride + 1..r * stride + 1 + size].fill(Cell::default());
        }
        Runs { stride, win, grid }
    }

    /// Records `player`'s mark at the empty cell `(row, col)`. Returns the
    /// first run (row, column, diagonal, anti-diagonal) of `win` or more
    /// through it.
    pub(crate) fn play(&mut self, player: Player, row: usize, col: usize) -> Option<Line> {
        let me = u16::from(player.number());
        let cell = (row + 1) * self.stride + col + 1;
        let mut won = None;
        let grid = &mut self.grid[..];
        let mut backs = [0u16; 4];
        for (dir, step) in [1, self.stride, self.stride + 1, self.stride - 1].into_iter().enumerate() {
            let run = |c: &Cell| if c.owner == me { c.len[dir] } else { 0 };
            let (back, ahead) = (run(&grid[cell - step]), run(&grid[cell + step]));
            let total = back + 1 + ahead;
            let start = cell - usize::from(back) * step;
            grid[start].len[dir] = total;
            grid[cell + usize::from(ahead) * step].len[dir] = total;
            backs[dir] = back;
            if total >= self.win && won.is_none() {
                won = Some((dir, start, total));
            }
        }
        let at = &mut grid[cell];
        at.owner = me;
        at.back = backs;
        won.map(|(dir, start, total)| self.line(dir, row, col, start, total))
    }

    /// The winning run along direction `dir` through `(row, col)`, from grid cell `start`.
    fn line(&self, dir: usize, row: usize, col: usize, start: usize, len: u16) -> Line {
        let kind = LineKind::ALL[dir];
        let index = match kind {
            LineKind::Row => row as i64,
            LineKind::Col => col as i64,
            LineKind::Diag => col as i64 - row as i64,
            LineKind::AntiDiag => (row + col) as i64,
        };
        let (r, c) = (start / self.stride - 1, start % self.stride - 1);
        Line { kind, index, start: [r as u16, c as u16], len }
    }

    /// Takes back the last mark, at `(row, col)`. Undo is last in, first out,
    /// so the run through the mark is as it was played: its start is `back`
    /// cells behind, and its length there tells how far it reaches ahead.
    pub(crate) fn undo(&mut self, row: usize, col: usize) {
        let cell = (row + 1) * self.stride + col + 1;
        let grid = &mut self.grid[..];
        let backs = grid[cell].back;
        for (dir, step) in [1, self.stride, self.stride + 1, self.stride - 1].into_iter().enumerate() {
            let back = backs[dir];
            let start = cell - usize::from(back) * step;
            let ahead = grid[start].len[dir] - 1 - back;
            // The joined runs are apart again; each gets its length back at its ends.
            if back > 0 {
                grid[start].len[dir] = back;
                grid[cell - step].len[dir] = back;
            }
            if ahead > 0 {
                grid[cell + usize::from(ahead) * step].len[dir] = ahead;
                grid[cell + step].len[dir] = ahead;
            }
        }
        grid[cell] = Cell::default();
    }
}
