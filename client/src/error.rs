//! What `ttt` can end with: each error says in one line what went wrong
//! and, where it can, what to do.

use crate::bot::MoverError;
use crate::bot::engine::EngineError;
use crate::bot_cmd::Tally;
use crate::judge_cmd::JudgeCmdError;
use crate::net::{CaError, ConnectError, SendError};
use crate::say::BadWin;
use crate::session::OpenError;

/// Why a `ttt` command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No connection to the server.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The session could not start.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The CA of `--ca-cert` cannot be used.
    #[error(transparent)]
    Ca(#[from] CaError),
    /// A request could not be sent: the connection is gone.
    #[error(transparent)]
    Send(#[from] SendError),
    /// The connection ended for good.
    #[error(transparent)]
    Closed(crate::net::Gone),
    /// The server refused what the session is for, in a person's words.
    #[error("{0}")]
    Refused(String),
    /// The win length does not fit the board.
    #[error(transparent)]
    Rules(#[from] BadWin),
    /// A move list got no verdict.
    #[error(transparent)]
    Judge(#[from] JudgeCmdError),
    /// The engine of `--engine` cannot start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The terminal cannot be used full-screen.
    #[error(transparent)]
    Terminal(#[from] crate::ui::screen::TerminalError),
    /// `--strategy` names none.
    #[error("unknown strategy {0}")]
    UnknownStrategy(String),
    /// `ttt challenge` named the player themselves.
    #[error("you are {name}: challenge someone else ({ttt} who lists who is online)")]
    ChallengingYourself {
        /// The player's name.
        name: String,
        /// This program, as it was started.
        ttt: String,
    },
    /// Stdin ended while a game was in progress.
    #[error("the input ended mid-game, so the game was left (a resignation)")]
    InputEnded,
    /// The bot's mover cannot go on.
    #[error("the strategy gave up: {0}")]
    StrategyGaveUp(MoverError),
    /// A bot's rematch went unanswered in a private room.
    #[error("the opponent did not answer the rematch after {games} games; {tally}")]
    RematchUnanswered {
        /// Games played.
        games: u32,
        /// Their results.
        tally: Tally,
    },
    /// A bot's opponent left its private room.
    #[error("the opponent left the private room after {games} games; {tally}")]
    OpponentLeft {
        /// Games played.
        games: u32,
        /// Their results.
        tally: Tally,
    },
    /// A bot's challenge ended unplayed.
    #[error("{why}; {tally}")]
    ChallengeOver {
        /// The challenge's end, in a person's words.
        why: String,
        /// The results so far.
        tally: Tally,
    },
    /// An account or records command failed, in its own words.
    #[error(transparent)]
    Records(#[from] crate::records_cmd::RecordsError),
}
