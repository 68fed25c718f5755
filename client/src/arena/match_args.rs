//! `ttt arena`'s flags for playing a match (besides the players and the
//! SPRT, which `ttt arena stats` shares: see [`super::args`]).

use std::path::PathBuf;

use clap::Args;
use tictactoe_protocol::Fischer;

/// How PLAYER1 and PLAYER2 play: where, on what board, from which openings, how many pairs.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// The server to play on (ws://HOST:PORT); without it, a private
    /// ttt-server is started on a free loopback port and stopped at the end.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Board size.
    #[arg(long, default_value_t = 3)]
    pub size: usize,
    /// Marks in a row that win (default: the size).
    #[arg(long)]
    pub win: Option<usize>,
    /// A Fischer clock, in SECONDS+SECONDS as fastchess writes it (10+0.1:
    /// ten seconds each, a tenth added per move); without it, the server's
    /// per-move timer.
    #[arg(long, value_name = "INITIAL+INCREMENT", value_parser = seconds_clock)]
    pub clock: Option<Fischer>,
    /// Openings in Gomocup's format, one a line (x,y offsets from the
    /// centre), used in order, cycling.
    #[arg(long, value_name = "FILE", conflicts_with = "random_openings")]
    pub openings: Option<PathBuf>,
    /// Random openings of this many moves that complete no line.
    #[arg(long, value_name = "PLIES")]
    pub random_openings: Option<usize>,
    /// The random openings' seed (printed at the start; give it to repeat a run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Game pairs to play at most (fewer when the SPRT decides first).
    #[arg(long, default_value_t = 100)]
    pub pairs: u64,
    /// Game pairs played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Write one JSON line per game here.
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,
}

/// `--clock` read as seconds+seconds (the arena's, unlike `ttt play`'s minutes).
fn seconds_clock(text: &str) -> Result<Fischer, String> {
    let bad = || format!("{text:?} is not a time control: write seconds+seconds, as in 10+0.1");
    let (initial, increment) = text.trim().split_once('+').ok_or_else(bad)?;
    let ms = |s: &str| -> Result<i64, String> {
        let v: f64 = s.trim().parse().map_err(|_| bad())?;
        if !v.is_finite() || v < 0.0 {
            return Err(bad());
        }
        Ok((v.min(1e9) * 1000.0).round() as i64)
    };
    Fischer::checked(Some(ms(initial)?), Some(ms(increment)?))
        .map_err(|_| format!("{text:?}: the initial time is 1 to 10800 seconds and the increment 0 to 180"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_is_in_seconds() {
        let c = seconds_clock("10+0.1").unwrap();
        assert_eq!((c.initial_ms, c.increment_ms), (10_000, 100));
        assert_eq!(seconds_clock(" 5 + 0.05").unwrap().increment_ms, 50);
        assert!(seconds_clock("0.5+0").unwrap_err().contains("1 to 10800 seconds"));
        assert!(seconds_clock("10").unwrap_err().contains("seconds+seconds"));
    }
}
