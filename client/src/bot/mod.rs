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

/// The strategy called `name` (`perfect`, `heuristic`, `random`), if there is one.
pub fn by_name(name: &str) -> Option<Box<dyn Strategy>> {
    match name {
        "perfect" => Some(Box::new(perfect::Perfect::default())),
        "heuristic" => Some(Box::new(heuristic::Heuristic)),
        "random" => Some(Box::new(random::Random)),
        _ => None,
    }
}

/// Who chooses a bot's moves: an in-process strategy, run on a blocking
/// thread, or an engine process, awaited with `--think-ms` as its limit.
/// Either way the client's task stays free to read the server (and answer
/// its pings) while a move is being chosen.
pub enum Mover {
    /// A strategy of this crate.
    Local(Box<dyn Strategy>),
    /// An external program (see [`engine`]).
    Engine(Box<engine::Engine>),
}

impl Mover {
    /// Chooses a move for `game`, giving the mover back with it; an error
    /// means the mover cannot go on.
    pub async fn choose(self, game: Game, think: Duration) -> Result<(Mover, (usize, usize)), String> {
        match self {
            Mover::Local(mut s) => {
                let chosen =
                    tokio::task::spawn_blocking(move || s.choose(&game, think).map(|cell| (s, cell)));
                let (s, cell) = chosen.await.map_err(|e| format!("the strategy failed: {e}"))??;
                Ok((Mover::Local(s), cell))
            }
            Mover::Engine(mut e) => {
                let cell = e.choose(&game, think).await?;
                Ok((Mover::Engine(e), cell))
            }
        }
    }

    /// Ends the session: an engine is told to quit.
    pub async fn quit(self) {
        if let Mover::Engine(e) = self {
            e.quit().await;
        }
    }
}

/// Every empty cell of `game`, row by row.
pub fn empty_cells(game: &Game) -> Vec<(usize, usize)> {
    let n = game.size();
    (0..n * n).map(|i| (i / n, i % n)).filter(|&(r, c)| !game.is_occupied(r, c)).collect()
}
