//! Who chooses `ttt bot`'s moves: a strategy of the shared `tictactoe-bots`
//! crate, an external engine, or a Gomocup brain.

pub mod budget;
pub mod engine;
pub mod gomocup;
pub mod process;

use tictactoe_protocol::Game;

pub use budget::Budget;
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
    /// The Gomocup brain lost this game (it failed or refused the board);
    /// it is given back to play the next.
    #[error(transparent)]
    Forfeit(#[from] gomocup::Forfeit),
}

/// Who chooses a bot's moves: an in-process strategy, run on a blocking
/// thread, or an engine process, awaited with the budget's limit. Either
/// way the client's task stays free to read the server (and answer its
/// pings) while a move is being chosen.
pub enum Mover {
    /// A strategy of this crate.
    Local(Box<dyn Strategy>),
    /// An external program (see [`engine`]).
    Engine(Box<engine::Engine>),
    /// A Gomocup brain (see [`gomocup`]).
    Gomocup(Box<gomocup::Brain>),
}

impl Mover {
    /// Chooses a move for `game` (game number `serial` of the run) within
    /// `budget`, giving the mover back with it; an error means the mover
    /// cannot go on, except [`MoverError::Forfeit`]: that game is lost. A
    /// move that wins at once is played without asking the mover, and a
    /// strategy with too little time to search answers with the instant
    /// heuristic.
    pub async fn choose(
        self,
        game: Game,
        budget: Budget,
        serial: u64,
    ) -> Result<(Mover, (usize, usize)), MoverError> {
        match self {
            Mover::Local(mut s) => {
                let chosen = tokio::task::spawn_blocking(move || {
                    let cell = match budget::winning_move(&game) {
                        Some(cell) => Ok(cell),
                        None if budget.fast() => Ok(tictactoe_bots::heuristic::choose(&game)),
                        None => s.choose(&game, budget.think),
                    };
                    cell.map(|cell| (s, cell))
                });
                let (s, cell) = chosen.await.map_err(MoverError::Failed)?.map_err(MoverError::Strategy)?;
                Ok((Mover::Local(s), cell))
            }
            Mover::Engine(mut e) => {
                let cell = match budget::winning_move(&game) {
                    Some(cell) => cell,
                    None => e.choose(&game, budget.limit).await?,
                };
                Ok((Mover::Engine(e), cell))
            }
            Mover::Gomocup(brain) => match budget::winning_move(&game) {
                Some(cell) => Ok((Mover::Gomocup(brain), cell)),
                None => {
                    let (brain, cell) = brain.choose(&game, budget, serial).await?;
                    Ok((Mover::Gomocup(brain), cell))
                }
            },
        }
    }

    /// Ends the session: an engine is told to quit, a brain to `END`.
    pub async fn quit(self) {
        match self {
            Mover::Engine(e) => e.quit().await,
            Mover::Gomocup(brain) => brain.quit().await,
            Mover::Local(_) => {}
        }
    }
}
