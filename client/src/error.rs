//! What `ttt` can end with: each error says in one line what went wrong
//! and, where it can, what to do. Each command's own errors live in its
//! module; this gathers them for `main`, at the top of the client's order
//! (it imports the commands, and no module imports it).

use crate::arena::stats_cmd::StatsCmdError;
use crate::bot::engine::EngineError;
use crate::bot_cmd::BotError;
use crate::judge_cmd::JudgeCmdError;
use crate::records_cmd::RecordsError;
use crate::say::BadWin;
use crate::session::SessionError;
use crate::tls::CaError;
use crate::ui::PlayError;

/// Why a `ttt` command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The CA of `--ca-cert` cannot be used.
    #[error(transparent)]
    Ca(#[from] CaError),
    /// The win length does not fit the board.
    #[error(transparent)]
    Rules(#[from] BadWin),
    /// `ttt who` failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A game played or watched (`ttt play`, `challenge`, `watch`) failed.
    #[error(transparent)]
    Play(#[from] PlayError),
    /// `ttt bot` ended before its games were played.
    #[error(transparent)]
    Bot(#[from] BotError),
    /// A move list got no verdict.
    #[error(transparent)]
    Judge(#[from] JudgeCmdError),
    /// The engine of `--engine` cannot start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// `--strategy` names none.
    #[error("unknown strategy {0}")]
    UnknownStrategy(String),
    /// `ttt challenge` named the player themselves.
    #[error("you are {name}: challenge someone else ({ttt} who lists who is online)")]
    ChallengingYourself {
        /// The player's name, as the refusal quotes it.
        name: String,
        /// This program as it was started, for the command to type.
        ttt: String,
    },
    /// `ttt arena stats` was given counts that do not fit together.
    #[error(transparent)]
    ArenaStats(#[from] StatsCmdError),
    /// `ttt arena PLAYER1 PLAYER2`: the match runner is not in this build.
    #[error(
        "playing an arena match is not built yet; `ttt arena stats --ptnml …` prints the statistics from counts"
    )]
    ArenaMatchNotBuilt,
    /// An account or records command failed, in its own words.
    #[error(transparent)]
    Records(#[from] RecordsError),
}
