//! The command line of `ttt arena`: a match between two players (its flags
//! belong here, next to the players), or `ttt arena stats` from counts.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand};

use super::stats::{Model, Pentanomial, Sprt, Wdl};

/// `ttt arena PLAYER1 PLAYER2 …`, or `ttt arena stats …`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ArenaArgs {
    /// `stats`: the statistics from counts alone, no match.
    #[command(subcommand)]
    pub command: Option<ArenaCommand>,
    /// The two players: builtin:perfect|heuristic|random, engine:CMD,
    /// gomocup:CMD or bot:CMD.
    #[arg(value_name = "PLAYER")]
    pub players: Vec<String>,
    #[command(flatten)]
    pub sprt: SprtArgs,
}

/// What `ttt arena` does instead of playing a match.
#[derive(Subcommand)]
pub enum ArenaCommand {
    /// Print the statistics of a match kept elsewhere, from its pentanomial
    /// counts (as the arena prints them during a match).
    Stats(StatsArgs),
}

/// `ttt arena stats`.
#[derive(Args)]
pub struct StatsArgs {
    /// Game pairs by PLAYER1's points in the pair: two losses, a loss and a
    /// draw, a win and a loss or two draws, a win and a draw, two wins.
    #[arg(long, value_name = "LL,LD,WLDD,WD,WW", value_parser = ptnml_arg)]
    pub ptnml: Pentanomial,
    /// PLAYER1's wins, draws and losses per game, when known: they tell
    /// the WL pairs from the DD ones [default: every WL+DD pair two draws].
    #[arg(long, value_name = "W,D,L", value_parser = wdl_arg)]
    pub wdl: Option<Wdl>,
    #[command(flatten)]
    pub sprt: SprtArgs,
}

/// The SPRT flags, the same for a match and for `stats`.
#[derive(Args)]
pub struct SprtArgs {
    /// Test H0 "PLAYER1 is E0 Elo stronger" against H1 "E1 stronger" and
    /// stop when one is accepted (α = β = 0.05 unless given).
    #[arg(long = "sprt", value_name = "elo0=E0,elo1=E1[,alpha=A,beta=B]")]
    test: Option<Sprt>,
    /// The Elo of the SPRT's bounds: normalized (fastchess's and Fishtest's
    /// default) or logistic.
    #[arg(
        long,
        default_value = "normalized",
        value_parser = PossibleValuesParser::new(["normalized", "logistic"]).map(|m| m.parse::<Model>().unwrap_or_default())
    )]
    model: Model,
}

impl SprtArgs {
    /// The test asked for, in the model asked for.
    pub fn sprt(&self) -> Option<Sprt> {
        self.test.map(|test| Sprt { model: self.model, ..test })
    }
}

/// Comma-separated counts, exactly `N` of them.
fn counts<const N: usize>(text: &str) -> Result<[u64; N], String> {
    let numbers = text
        .split(',')
        .map(|part| part.trim().parse::<u64>().map_err(|_| format!("{part:?} is not a count")))
        .collect::<Result<Vec<u64>, String>>()?;
    numbers.try_into().map_err(|numbers: Vec<u64>| format!("{} counts where {N} are needed", numbers.len()))
}

/// `--ptnml LL,LD,WLDD,WD,WW`.
fn ptnml_arg(text: &str) -> Result<Pentanomial, String> {
    counts::<5>(text).map(Pentanomial)
}

/// `--wdl W,D,L`.
fn wdl_arg(text: &str) -> Result<Wdl, String> {
    let [wins, draws, losses] = counts::<3>(text)?;
    Ok(Wdl { wins, draws, losses })
}
