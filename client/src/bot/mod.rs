//! Move-choosing strategies for `ttt bot`, behind one trait: a new strategy is
//! one file implementing [`Strategy`] plus a line in [`by_name`].

pub mod engine;
pub mod heuristic;
pub mod perfect;
pub mod random;

use std::time::Duration;
use tictactoe_protocol::Game;

/// Chooses a move for the player to move in a game that is not over.
pub trait Strategy: Send {
    /// An empty cell `(row, col)`; may use up to `think` of time. An error
    /// means the strategy cannot go on (an engine died or kept answering nonsense).
    fn choose(&mut self, game: &Game, think: Duration) -> Result<(usize, usize), String>;
}

/// The strategy called `name` (`perfect`, `random`), if there is one.
pub fn by_name(name: &str) -> Option<Box<dyn Strategy>> {
    match name {
        "perfect" => Some(Box::new(perfect::Perfect::default())),
        "random" => Some(Box::new(random::Random)),
        _ => None,
    }
}

/// Every empty cell of `game`, row by row.
pub fn empty_cells(game: &Game) -> Vec<(usize, usize)> {
    let n = game.size();
    (0..n * n).map(|i| (i / n, i % n)).filter(|&(r, c)| !game.is_occupied(r, c)).collect()
}
