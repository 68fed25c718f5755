//! Connect-k in O(1) per move for win lengths up to [`MAX_WIN`]: each
//! player's marks as bits, one plane per direction, laid out so that the
//! cells of every row, column and diagonal are consecutive bits. The run
//! through a new mark is then the ones either side of its bit in one 64-bit
//! window around it, counted with `leading_zeros` and `trailing_zeros`.
//! Before the move every run is shorter than the win length (else the game
//! is over), so a window that sees [`SIDE`] cells each side sees all of it.
//!
//! Every line is followed by [`PAD`] zero bytes, so the window around a cell
//! near a line's end reads zeros, never a neighbouring line and never past the
//! vector. Undo clears four bits and needs no log.

use crate::line::{Line, LineKind};
use crate::player::Player;

/// How many cells the window sees either side of a new mark. An 8-byte load
/// starts on a byte boundary, so after shifting the mark's bit to position
/// `SIDE` at least 57 bits of the window are the line's: `SIDE` below, the
/// mark, and `SIDE` above.
const SIDE: usize = 28;

/// The longest win length this representation decides in one window.
pub(crate) const MAX_WIN: usize = SIDE + 1;

/// Zero bytes after every line (and so before every line but the first,
/// which the plane's start pads instead): enough for a window's reach.
const PAD: usize = 8;

/// Bit planes for a game whose win length is at most [`MAX_WIN`] and shorter
/// than its board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BitLines {
    win: u32,
    /// Bits per line: its cells rounded up to whole bytes, then [`PAD`] zero
    /// bytes.
    line_bits: usize,
    /// Per player, per direction (in [`LineKind::ALL`] order), where cell
    /// `(0, 0)`'s window starts were it on that plane's first line; for the
    /// diagonals, whose first line is the one through `(0, size - 1)`, as if
    /// the plane started `size - 1` lines earlier.
    base: [[usize; 4]; 2],
    bytes: Vec<u8>,
}

impl BitLines {
    /// Empty planes for a `size`×`size` board won by `win` (at most
    /// [`MAX_WIN`]) in a row.
    pub(crate) fn new(size: usize, win: usize) -> BitLines {
        let line_bits = (size.div_ceil(8) + PAD) * 8;
        let diagonals = 2 * size - 1;
        let lines = [size, size, diagonals, diagonals];
        let mut base = [[0; 4]; 2];
        let mut total = PAD * 8;
        for planes in &mut base {
            for (plane, count) in planes.iter_mut().zip(lines) {
                *plane = total - SIDE;
                total += count * line_bits;
            }
            planes[2] += (size - 1) * line_bits;
        }
        BitLines { win: win as u32, line_bits, base, bytes: vec![0; total / 8] }
    }

    /// For `(row, col)` in each of `me`'s four planes, the bit its window
    /// starts at: [`SIDE`] bits before the cell's. The lines are a row, a
    /// column, the diagonal `col - row` and the anti-diagonal `row + col`,
    /// and a line's cells are numbered from its top (its left for a row), so
    /// one step along the line is the next bit.
    fn windows(&self, me: usize, row: usize, col: usize) -> [usize; 4] {
        let [rows, cols, diags, antis] = self.base[me];
        let (r, c) = (row * self.line_bits, col * self.line_bits);
        [rows + r + col, cols + c + row, diags + c - r + row, antis + r + c + row]
    }

    /// The eight bytes holding the window that starts at bit `first`, and
    /// where in them it starts. Play and undo both read and write a mark's
    /// window as these same eight bytes, so a play right after an undo
    /// loads what the undo stored whole, with no store to forward piecewise.
    fn window(&mut self, first: usize) -> Option<(&mut [u8; 8], usize)> {
        let at = first / 8;
        let bytes = self.bytes.get_mut(at..at + 8)?.try_into().ok()?;
        Some((bytes, first % 8))
    }

    /// Records `player`'s mark at the empty cell `(row, col)`. Returns the
    /// first run (row, column, diagonal, anti-diagonal) of `win` or more
    /// through it.
    pub(crate) fn play(&mut self, player: Player, row: usize, col: usize) -> Option<Line> {
        let me = usize::from(player.number() - 1);
        // The most marks the move joins in any direction.
        let mut joined = 0;
        for first in self.windows(me, row, col) {
            if let Some((bytes, shift)) = self.window(first) {
                let window = u64::from_le_bytes(*bytes);
                let (back, ahead) = run(window, shift);
                *bytes = (window | 1 << (shift + SIDE)).to_le_bytes();
                joined = joined.max(back + ahead);
            }
        }
        if joined + 1 < self.win { None } else { self.line(me, row, col) }
    }

    /// The first run of `win` or more through `me`'s mark at `(row, col)`,
    /// once it is in.
    #[cold]
    fn line(&mut self, me: usize, row: usize, col: usize) -> Option<Line> {
        for (dir, first) in self.windows(me, row, col).into_iter().enumerate() {
            let (bytes, shift) = self.window(first)?;
            let (back, ahead) = run(u64::from_le_bytes(*bytes) & !(1 << (shift + SIDE)), shift);
            if back + 1 + ahead >= self.win {
                return Some(Line::through(
                    LineKind::ALL[dir],
                    row,
                    col,
                    back as usize,
                    (back + 1 + ahead) as u16,
                ));
            }
        }
        None
    }

    /// Takes back `player`'s mark at `(row, col)`.
    pub(crate) fn undo(&mut self, player: Player, row: usize, col: usize) {
        let me = usize::from(player.number() - 1);
        for first in self.windows(me, row, col) {
            if let Some((bytes, shift)) = self.window(first) {
                *bytes = (u64::from_le_bytes(*bytes) & !(1 << (shift + SIDE))).to_le_bytes();
            }
        }
    }
}

/// The lengths of the runs of ones just below and just above bit [`SIDE`]
/// of `window >> shift`, up to [`SIDE`] each.
fn run(window: u64, shift: usize) -> (u32, u32) {
    // Inverted, the runs end at the first one; a one planted past the
    // window's reach stops the count there.
    let gaps = !(window >> shift);
    let back = (gaps << (64 - SIDE) | 1 << (63 - SIDE)).leading_zeros();
    let ahead = (gaps >> (SIDE + 1) | 1 << SIDE).trailing_zeros();
    (back, ahead)
}
