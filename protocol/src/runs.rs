//! Connect-k in O(1) per move: for each of the four directions, every run of
//! one player's marks keeps its length at its two end cells. A new mark's
//! neighbours in a direction are ends of their runs (the new cell was empty),
//! so the run through the new mark is their two lengths plus one, found and
//! recorded at the new ends in constant time, whatever the win length — the
//! "longest consecutive sequence" trick, in two dimensions. Undo is O(1) too:
//! each move keeps the lengths of the runs behind it that it joined.
//! [`crate::bitlines`] takes wins up to 29 in less memory and time; these
//! keep the longer ones.
//!
//! Each cell keeps a length per player, written only at that player's marks,
//! so a neighbour's run is one load with no owner to compare: an empty cell,
//! the other player's mark and the border all read zero. The grid has a
//! border of one cell so that a neighbour is always an index away and never
//! a bounds check.

use crate::line::{Line, LineKind};
use crate::player::Player;

/// One grid cell: per player, per direction (in [`LineKind::ALL`] order),
/// the length of the player's run this cell ends — meaningful at a run's two
/// ends only, zero wherever the player has no mark. Sixteen bytes, aligned,
/// so a neighbour never straddles two cache lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(align(16))]
struct Cell {
    len: [[u16; 4]; 2],
}

/// Run lengths for a game whose win length is shorter than its board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Runs {
    /// Cells per grid row: the board's plus the border on both sides.
    stride: usize,
    win: u16,
    grid: Vec<Cell>,
    /// Per move played, per direction, the length of the run behind it that
    /// it joined: what undo needs to split the run again.
    backs: Vec<[u16; 4]>,
}

impl Runs {
    /// Empty runs for a `size`×`size` board won by `win` in a row.
    pub(crate) fn new(size: usize, win: u16) -> Runs {
        let stride = size + 2;
        Runs { stride, win, grid: vec![Cell::default(); stride * stride], backs: Vec::new() }
    }

    /// Records `player`'s mark at the empty cell `(row, col)`. Returns the
    /// first run (row, column, diagonal, anti-diagonal) of `win` or more
    /// through it.
    pub(crate) fn play(&mut self, player: Player, row: usize, col: usize) -> Option<Line> {
        let me = usize::from(player.number() - 1);
        let cell = (row + 1) * self.stride + col + 1;
        let mut won = None;
        let grid = &mut self.grid[..];
        let mut backs = [0u16; 4];
        for (dir, step) in [1, self.stride, self.stride + 1, self.stride - 1].into_iter().enumerate() {
            let (back, ahead) = (grid[cell - step].len[me][dir], grid[cell + step].len[me][dir]);
            let total = back + 1 + ahead;
            let start = cell - usize::from(back) * step;
            grid[start].len[me][dir] = total;
            grid[cell + usize::from(ahead) * step].len[me][dir] = total;
            backs[dir] = back;
            if total >= self.win && won.is_none() {
                won = Some((dir, back, total));
            }
        }
        self.backs.push(backs);
        won.map(|(dir, back, total)| Line::through(LineKind::ALL[dir], row, col, usize::from(back), total))
    }

    /// Takes back the last mark, `player`'s at `(row, col)`. Undo is last in,
    /// first out, so the run through the mark is as it was played: its start
    /// is `back` cells behind, and its length there tells how far it reaches
    /// ahead.
    pub(crate) fn undo(&mut self, player: Player, row: usize, col: usize) {
        let me = usize::from(player.number() - 1);
        let cell = (row + 1) * self.stride + col + 1;
        let backs = self.backs.pop().unwrap_or_default();
        let grid = &mut self.grid[..];
        for (dir, step) in [1, self.stride, self.stride + 1, self.stride - 1].into_iter().enumerate() {
            let back = backs[dir];
            let start = cell - usize::from(back) * step;
            let ahead = grid[start].len[me][dir] - 1 - back;
            // The joined runs are apart again. Play wrote only their outer
            // ends, so only those get their lengths back; the inner ends
            // still hold them. With no run on a side, that side's write
            // lands on the mark's own cell, cleared below.
            grid[start].len[me][dir] = back;
            grid[cell + usize::from(ahead) * step].len[me][dir] = ahead;
        }
        grid[cell] = Cell::default();
    }
}
