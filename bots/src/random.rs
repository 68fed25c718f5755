//! Any empty cell, uniformly at random.

use rand::seq::IndexedRandom;
use std::time::Duration;
use tictactoe_protocol::Game;

use crate::{Strategy, empty_cells};

/// Plays a uniformly random empty cell.
#[derive(Debug, Default)]
pub struct Random;

impl Strategy for Random {
    fn choose(&mut self, game: &Game, _think: Duration) -> Result<(usize, usize), String> {
        let cells = empty_cells(game);
        cells.choose(&mut rand::rng()).copied().ok_or_else(|| "no empty cell".to_owned())
    }
}
