//! How many lines each player can still complete, kept up to date as moves
//! are played, so that a clock running out can be judged in O(1): a player
//! who runs out of time draws instead of losing when the opponent can no
//! longer complete any line.
//!
//! A line is a whole row, column or long diagonal when a whole line wins
//! (`2n + 2` of them), and otherwise every run ("window") of `win`
//! consecutive cells in a row, column, diagonal or anti-diagonal. A line is
//! open to a player while it holds no mark of the opponent's.
//!
//! Each player has one bit per line: "holds a mark of mine". The windows of
//! one row (or column, or diagonal) are numbered by their first cell, so the
//! windows through a cell are a run of consecutive bits, at most `win` long
//! (exactly one for a whole line). A mark sets that run in each of the four
//! directions, and every bit it turns on is a line closed to the opponent:
//! a few word operations per direction, never a scan of the board.

use crate::game::{Game, SizeError};
use crate::player::Player;

/// The lines still open to each player of one game, for deciding whether a
/// player can still complete any line (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenLines {
    size: usize,
    win: usize,
    /// Windows per row, which is the most any line has: `size - win + 1`.
    /// Every line gets this many bits, so a window's bit is
    /// `line * span + first cell`; a diagonal shorter than that leaves its
    /// last bits unused.
    span: usize,
    /// Per direction (row, column, diagonal, anti-diagonal), the bit its
    /// first line starts at within a player's plane.
    base: [usize; 4],
    /// Bits in one player's plane, all four directions.
    plane: usize,
    /// `X`'s plane, then `O`'s: bit set where the line holds that player's
    /// mark.
    marked: Vec<u64>,
    /// Per player (`X`, `O`), the lines holding no mark of the opponent's.
    open: [usize; 2],
}

impl OpenLines {
    /// Every line open to both players on an empty `size`×`size` board won by
    /// `win` in a row. Takes exactly the rules [`Game::with_win`] takes (and
    /// refuses the rest with the same error). Memory is about
    /// `6 · size · (size - win + 1)` bits per player: 25 MB for both at the
    /// largest board with `win` 3, a few bytes when a whole line wins.
    pub fn new(size: usize, win: usize) -> Result<OpenLines, SizeError> {
        Game::check_rules(size, win)?;
        let span = size - win + 1;
        // Only the diagonals at most `size - win` off the long one hold a
        // window: `2 · span - 1` of them each way.
        let diagonals = 2 * span - 1;
        let lines = [size, size, diagonals, diagonals];
        let mut base = [0; 4];
        let mut plane = 0;
        for (first, count) in base.iter_mut().zip(lines) {
            *first = plane;
            plane += count * span;
        }
        // Rows and columns hold `span` windows each; the diagonals, from
        // 1 up to `span` on the long one and back down: `span²` in all.
        let total = 2 * size * span + 2 * span * span;
        Ok(OpenLines {
            size,
            win,
            span,
            base,
            plane,
            marked: vec![0; (2 * plane).div_ceil(64)],
            open: [total, total],
        })
    }

    /// Records `player`'s mark at `(row, col)`: every line through the cell
    /// that held no mark of `player`'s is no longer open to the opponent.
    /// O(1) when a whole line wins, O(`win` / 64) word operations otherwise.
    /// The engine plays each cell once; a cell off the board changes nothing.
    pub fn play(&mut self, player: Player, row: usize, col: usize) {
        let (n, span) = (self.size, self.span);
        if row >= n || col >= n {
            return;
        }
        let me = match player {
            Player::X => 0,
            Player::O => self.plane,
        };
        // Per direction, the first bit of the line through the cell, the
        // cell's place along the line and the line's length. Only the
        // diagonals at most `size - win` off the long ones have a line.
        let rows = self.close(me + self.base[0] + row * span, col, n);
        let cols = self.close(me + self.base[1] + col * span, row, n);
        let diagonal = (col + span - 1).checked_sub(row).filter(|&k| k < 2 * span - 1);
        let diagonal = diagonal
            .map_or(0, |k| self.close(me + self.base[2] + k * span, row.min(col), n - k.abs_diff(span - 1)));
        let anti = (row + col + span - 1).checked_sub(n - 1).filter(|&k| k < 2 * span - 1);
        let anti = anti.map_or(0, |k| {
            let at = row - k.saturating_sub(span - 1);
            self.close(me + self.base[3] + k * span, at, n - k.abs_diff(span - 1))
        });
        let closed = rows + cols + diagonal + anti;
        let theirs = &mut self.open[usize::from(player.other().number() - 1)];
        *theirs = theirs.saturating_sub(closed);
    }

    /// Marks the windows through the cell at `at` of the line of length
    /// `len` whose bits start at `line`: from `win - 1` cells back (or the
    /// line's start) to the cell itself (or the last start). Returns how
    /// many held no such mark before.
    #[inline]
    fn close(&mut self, line: usize, at: usize, len: usize) -> usize {
        let first = at.saturating_sub(self.win - 1);
        let last = at.min(len - self.win);
        set_bits(&mut self.marked, line + first, line + last + 1)
    }

    /// How many lines are still open to `player`: hold no mark of the
    /// opponent's.
    pub fn open_to(&self, player: Player) -> usize {
        self.open[usize::from(player.number() - 1)]
    }

    /// Whether `player` can still complete any line: whether one is open to
    /// them. A player whose time runs out draws when this is false for the
    /// opponent.
    pub fn can_complete(&self, player: Player) -> bool {
        self.open_to(player) > 0
    }
}

/// Sets bits `from..to` (not empty) of `words`, returning how many of them
/// were clear.
fn set_bits(words: &mut [u64], from: usize, to: usize) -> usize {
    // A whole line's one window per direction, and a connect-k cell at a
    // line's end: one bit, tested without counting ones (no `popcnt` in
    // the baseline x86-64 target).
    if to - from == 1 {
        return words.get_mut(from / 64).map_or(0, |word| {
            let bit = 1 << (from % 64);
            let clear = usize::from(*word & bit == 0);
            *word |= bit;
            clear
        });
    }
    let (first, last) = (from / 64, (to - 1) / 64);
    let low = u64::MAX << (from % 64);
    let high = u64::MAX >> (63 - (to - 1) % 64);
    // One word holds the range mostly.
    if first == last {
        return set_word(words, first, low & high);
    }
    let middle = (first + 1..last).map(|at| set_word(words, at, u64::MAX)).sum::<usize>();
    set_word(words, first, low) + middle + set_word(words, last, high)
}

/// Sets the `mask` bits of word `at`, returning how many were clear.
fn set_word(words: &mut [u64], at: usize, mask: u64) -> usize {
    words.get_mut(at).map_or(0, |word| {
        let clear = (mask & !*word).count_ones() as usize;
        *word |= mask;
        clear
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_bits_counts_only_the_bits_it_turns_on() {
        let mut words = vec![0u64; 3];
        assert_eq!(set_bits(&mut words, 60, 70), 10);
        assert_eq!(words, [0xF << 60, 0x3F, 0]);
        assert_eq!(set_bits(&mut words, 62, 130), 68 - 8);
        assert_eq!(words, [0xF << 60, u64::MAX, 0x3]);
        assert_eq!(set_bits(&mut words, 0, 192), 192 - 70);
        assert_eq!(set_bits(&mut words, 5, 6), 0);
        assert_eq!(set_bits(&mut words, 191, 192), 0);
    }

    #[test]
    fn an_empty_board_has_every_line_open_to_both() {
        // 2n + 2 whole lines; for 15/5, 15 · 11 windows per row and column
        // direction and 11 + 2 · (1 + … + 10) = 121 per diagonal direction.
        for (n, win, lines) in [(1, 1, 4), (2, 2, 6), (3, 3, 8), (4, 3, 4 * 2 + 4 * 2 + 4 + 4), (15, 5, 572)]
        {
            let open = OpenLines::new(n, win).expect("valid rules");
            assert_eq!((open.open_to(Player::X), open.open_to(Player::O)), (lines, lines), "{n}/{win}");
        }
    }

    #[test]
    fn the_rules_game_refuses_are_refused() {
        assert_eq!(OpenLines::new(0, 0), Err(SizeError::OutOfRange(0)));
        assert_eq!(OpenLines::new(Game::MAX_SIZE + 1, 3), Err(SizeError::OutOfRange(Game::MAX_SIZE + 1)));
        assert_eq!(OpenLines::new(5, 2), Err(SizeError::Win { win: 2, size: 5 }));
        assert_eq!(OpenLines::new(5, 6), Err(SizeError::Win { win: 6, size: 5 }));
    }

    #[test]
    fn a_cell_off_the_board_changes_nothing() {
        let mut open = OpenLines::new(3, 3).expect("valid rules");
        let fresh = open.clone();
        open.play(Player::X, 3, 0);
        open.play(Player::X, 0, usize::MAX);
        assert_eq!(open, fresh);
    }
}
