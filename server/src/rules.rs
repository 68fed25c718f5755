//! The rules of a game: board size and win length, which rooms, queues,
//! ratings and records all key on.

/// The rules of a room's games: the board's size and how many in a row win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rules {
    /// The board's side length.
    pub size: usize,
    /// Marks in a row that win: `min(3, size)..=size`.
    pub win: usize,
}

impl Rules {
    /// The classic rule on a `size` board: a whole line wins.
    pub fn classic(size: usize) -> Rules {
        Rules { size, win: size }
    }
}
