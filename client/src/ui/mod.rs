//! Human play in a terminal: the board renderer, cell input, and the two
//! front ends (full-screen when on a terminal, plain lines otherwise).

pub mod board;
pub mod clocks;
pub mod input;
pub mod lines;
pub mod palette;
pub mod screen;

use crate::net::SendError;
use crate::session::SessionError;

/// Why a game played (or watched) by a person ended in failure.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The session failed: no connection, a refusal, the connection gone.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The terminal cannot be used full-screen.
    #[error(transparent)]
    Terminal(#[from] screen::TerminalError),
    /// Stdin ended while a game was in progress.
    #[error("the input ended mid-game, so the game was left (a resignation)")]
    InputEnded,
}

impl From<SendError> for PlayError {
    fn from(e: SendError) -> PlayError {
        PlayError::Session(e.into())
    }
}
