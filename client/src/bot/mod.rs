//! Who chooses `ttt bot`'s moves: a strategy of the shared `tictactoe-bots`
//! crate, or an external engine.

pub mod engine;

use std::time::Duration;
use tictactoe_protocol::Game;

pub use tictactoe_bots::{Strategy, by_name};

/// Why a mover cannot choose a move.
#[derive(Debug, thiserror::Error)]
pub enum MoverError {
    /// The strategy's thread failed (it panicked).
    #[error("the strategy failed: {0}")]
    Failed(tokio::task::JoinError),
    /// The strategy gave up, in its own words.
    #[error("{0}")]
    Strategy(String),
    /// The engine cannot go on.
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
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
    pub async fn choose(self, game: Game, think: Duration) -> Result<(Mover, (usize, usize)), MoverError> {
        match self {
            Mover::Local(mut s) => {
                let chosen =
                    tokio::task::spawn_blocking(move || s.choose(&game, think).map(|cell| (s, cell)));
                let (s, cell) = chosen.await.map_err(MoverError::Failed)?.map_err(MoverError::Strategy)?;
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
