//! Connect-k in O(1) per move: for each of the four directions, every run of
//! one player's marks keeps its length at its two end cells. A new mark's
//! neighbours in a direction are ends of their runs (the new cell was empty),
//! so the run through the new mark is their two lengths plus one, found and
//! recorded at the new ends in constant time, whatever the win length — the
//! "longest consecutive sequence" trick, in two dimensions. Undo is O(1) too:
//! each move keeps the two lengths it joined.

use crate::line::{Line, LineKind};
use crate::player::Player;

/// Run lengths and marks for a game whose win length is shorter than its board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Runs {
    size: usize,
    win: u16,
    /// Per cell, per direction (in [`LineKind::ALL`] order): the length of the
    /// run the cell ends. Meaningful at a run's two ends only.
    len: Vec<[u16; 4]>,
    /// One bit per cell: set where `X` played (with the game's occupancy
    /// bits, the owner of every cell).
    xs: Vec<u64>,
    /// Per move, per direction: the lengths of the runs it joined behind and ahead.
    joined: Vec<[[u16; 2]; 4]>,
}

impl Runs {
    /// Empty runs for a `size`×`size` board won by `win` in a row.
    pub(crate) fn new(size: usize, win: u16) -> Runs {
        Runs {
            size,
            win,
            len: vec![[0; 4]; size * size],
            xs: vec![0; (size * size).div_ceil(64)],
            joined: Vec::new(),
        }
    }

    /// Records `player`'s mark at the empty cell `(row, col)`; `occupied`
    /// tells which cells hold a mark (this one not yet). Returns the first
    /// run (row, column, diagonal, anti-diagonal) of `win` or more through it.
    pub(crate) fn play(&mut self, player: Player, row: usize, col: usize, occupied: &[u64]) -> Option<Line> {
        let n = self.size;
        let cell = row * n + col;
        let mut joined = [[0u16; 2]; 4];
        let mut line = None;
        for (dir, kind) in LineKind::ALL.into_iter().enumerate() {
            let (dr, dc) = kind.step();
            let back = self.neighbour(player, row, col, -dr, -dc, occupied).map_or(0, |c| self.len[c][dir]);
            let ahead = self.neighbour(player, row, col, dr, dc, occupied).map_or(0, |c| self.len[c][dir]);
            let total = back + 1 + ahead;
            let start = offset(row, col, -dr * back as isize, -dc * back as isize);
            let end = offset(row, col, dr * ahead as isize, dc * ahead as isize);
            self.len[start.0 * n + start.1][dir] = total;
            self.len[end.0 * n + end.1][dir] = total;
            joined[dir] = [back, ahead];
            if line.is_none() && total >= self.win {
                let index = match kind {
                    LineKind::Row => row as i64,
                    LineKind::Col => col as i64,
                    LineKind::Diag => col as i64 - row as i64,
                    LineKind::AntiDiag => (row + col) as i64,
                };
                line = Some(Line { kind, index, start: [start.0 as u16, start.1 as u16], len: total });
            }
        }
        if player == Player::X {
            self.xs[cell / 64] |= 1 << (cell % 64);
        }
        self.joined.push(joined);
        line
    }

    /// Takes back the last mark, at `(row, col)`.
    pub(crate) fn undo(&mut self, row: usize, col: usize) {
        let Some(joined) = self.joined.pop() else { return };
        let n = self.size;
        let cell = row * n + col;
        for (dir, kind) in LineKind::ALL.into_iter().enumerate() {
            let (dr, dc) = kind.step();
            let [back, ahead] = joined[dir];
            // The joined runs are apart again; each gets its length back at its ends.
            if back > 0 {
                let far = offset(row, col, -dr * back as isize, -dc * back as isize);
                let near = offset(row, col, -dr, -dc);
                self.len[far.0 * n + far.1][dir] = back;
                self.len[near.0 * n + near.1][dir] = back;
            }
            if ahead > 0 {
                let far = offset(row, col, dr * ahead as isize, dc * ahead as isize);
                let near = offset(row, col, dr, dc);
                self.len[far.0 * n + far.1][dir] = ahead;
                self.len[near.0 * n + near.1][dir] = ahead;
            }
            self.len[cell][dir] = 0;
        }
        self.xs[cell / 64] &= !(1 << (cell % 64));
    }

    /// The cell one step `(dr, dc)` from `(row, col)`, if it is on the board
    /// and holds `player`'s mark.
    fn neighbour(
        &self,
        player: Player,
        row: usize,
        col: usize,
        dr: isize,
        dc: isize,
        occupied: &[u64],
    ) -> Option<usize> {
        let r = row.checked_add_signed(dr).filter(|&r| r < self.size)?;
        let c = col.checked_add_signed(dc).filter(|&c| c < self.size)?;
        let cell = r * self.size + c;
        let bit = 1 << (cell % 64);
        let taken = occupied[cell / 64] & bit != 0;
        let is_x = self.xs[cell / 64] & bit != 0;
        (taken && is_x == (player == Player::X)).then_some(cell)
    }
}

/// `(row + dr, col + dc)`, for offsets known to stay on the board.
fn offset(row: usize, col: usize, dr: isize, dc: isize) -> (usize, usize) {
    (row.wrapping_add_signed(dr), col.wrapping_add_signed(dc))
}
