//! `ttt tournament`'s subcommands and their flags, as clap reads them.

use clap::{Args, Subcommand};
use tictactoe_protocol::Fischer;

use crate::servers::ServerArg;

/// Arena tournaments: list them, create one, watch its standings, or join and play.
#[derive(Args)]
pub struct TournamentArgs {
    #[command(subcommand)]
    pub command: TournamentCommand,
}

/// The keys of `ttt tournament join`, for its `--help`.
pub const JOIN_KEYS: &str = "Keys (full screen), besides those of `ttt play`:
  b      go berserk in a game, before your first move: half your clock, no
         increment, one point more for a win with enough moves of your own
  p      pause: not paired again until j (your score stays)
  j      join again after a pause
  q      quit (mid-game it asks first: leaving resigns)
Between games the standings are shown; the next pairing starts by itself.
It ends when the tournament's time is up and your last game is over.";

/// What `ttt tournament` does.
#[derive(Subcommand)]
pub enum TournamentCommand {
    /// The tournaments starting, running and finished in the last day.
    List {
        #[command(flatten)]
        server: ServerArg,
        /// Print the server's list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Create a tournament (needs an account: `ttt register NAME`) and print its id.
    Create {
        #[command(flatten)]
        server: ServerArg,
        /// Its name, as lists show it (1 to 40 characters).
        name: String,
        /// Create it as this account [default: your account saved for this server].
        #[arg(long = "as", value_name = "ACCOUNT")]
        account: Option<String>,
        /// Board size.
        #[arg(long, default_value_t = 3)]
        size: usize,
        /// Marks in a row that win (default: the size).
        #[arg(long)]
        win: Option<usize>,
        /// Every game's Fischer clock, minutes+seconds (3+2; 0.5+0).
        #[arg(long, value_name = "MIN+SEC", value_parser = clock_arg)]
        clock: Fischer,
        /// How long it runs, in minutes (1 to 720; fractions allowed: 1.5).
        #[arg(long, value_parser = minutes_arg)]
        minutes: u64,
        /// How long until it starts, in seconds.
        #[arg(long, value_name = "SECONDS", default_value = "0", value_parser = seconds_arg)]
        starts_in: u64,
    },
    /// Follow a tournament's standings live until it finishes, then print them.
    Watch {
        #[command(flatten)]
        server: ServerArg,
        /// The tournament's id.
        id: String,
    },
    /// Join a tournament and play every pairing in the terminal until it ends.
    #[command(after_help = JOIN_KEYS)]
    Join {
        #[command(flatten)]
        server: ServerArg,
        /// The tournament's id.
        id: String,
        /// Your account's name [default: your account saved for this server].
        #[arg(long)]
        name: Option<String>,
    },
}

/// `--clock`'s value read as a Fischer clock, refused in words otherwise.
fn clock_arg(text: &str) -> Result<Fischer, String> {
    text.parse()
}

/// A number of `unit` ms (fractions allowed) as whole ms, refused in
/// words when it is not a number of them at least 0.
fn ms_of(text: &str, unit: f64, what: &str) -> Result<u64, String> {
    let refused = || format!("{text:?} is not a number of {what}");
    let v: f64 = text.trim().parse().map_err(|_| refused())?;
    if !v.is_finite() || v < 0.0 || v * unit > 1e15 {
        return Err(refused());
    }
    Ok((v * unit).round() as u64)
}

/// `--minutes` in ms.
fn minutes_arg(text: &str) -> Result<u64, String> {
    ms_of(text, 60_000.0, "minutes")
}

/// `--starts-in` in ms.
fn seconds_arg(text: &str) -> Result<u64, String> {
    ms_of(text, 1_000.0, "seconds")
}

#[cfg(test)]
mod tests;
