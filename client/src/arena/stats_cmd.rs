//! `ttt arena stats`: the statistics block of a match from its counts alone.

use super::args::StatsArgs;
use super::stats::{Pentanomial, Wdl, report};

/// Why `ttt arena stats` printed nothing.
#[derive(Debug, thiserror::Error)]
pub enum StatsCmdError {
    /// `--wdl` cannot be the games of those pairs.
    #[error(
        "--wdl {w},{d},{l} cannot be the games of --ptnml {ptnml}: a pair's two games give its \
         points, so wins = 2·WW + WD + WL, losses = 2·LL + LD + WL, draws = LD + WD + 2·DD"
    , w = .wdl.wins, d = .wdl.draws, l = .wdl.losses, ptnml = .ptnml.0.map(|c| c.to_string()).join(","))]
    Inconsistent {
        /// The pairs given.
        ptnml: Pentanomial,
        /// The games given.
        wdl: Wdl,
    },
}

/// Prints the block for the counts given (and, with `--sprt`, the LLR, and
/// "H0/H1 was accepted" once it reaches a bound).
pub fn run(args: &StatsArgs) -> Result<(), StatsCmdError> {
    let ptnml = args.ptnml;
    let wdl = match args.wdl {
        Some(wdl) if !ptnml.consistent_with(&wdl) => return Err(StatsCmdError::Inconsistent { ptnml, wdl }),
        Some(wdl) => wdl,
        None => ptnml.wdl_counting_even_pairs_as_draws(),
    };
    let sprt = args.sprt.sprt();
    print!("{}", report("PLAYER1 vs PLAYER2 (from counts)", &ptnml, &wdl, sprt.as_ref()));
    if let Some(decision) = sprt.and_then(|test| test.decision(&ptnml)) {
        println!("{decision}");
    }
    Ok(())
}
