//! The progress line while a match runs (pairs done, games in flight, the
//! current LLR): on a terminal one line rewritten in place, otherwise a
//! line every few pairs, on stderr so stdout keeps the statistics.

use std::io::{IsTerminal, Write};

use super::results::Tally;
use super::stats::Sprt;

/// Without a terminal, a progress line every this many pairs.
const EVERY: u64 = 5;

/// Where the progress line goes.
pub struct Progress {
    tty: bool,
    /// Pairs counted when a line was last printed (without a terminal).
    shown: u64,
    /// Whether a line is on screen to be cleared (on a terminal).
    drawn: bool,
}

impl Progress {
    /// Progress on stderr, rewritten in place when stderr is a terminal.
    pub fn new() -> Progress {
        Progress { tty: std::io::stderr().is_terminal(), shown: 0, drawn: false }
    }

    /// Shows where the match is.
    pub fn show(&mut self, tally: &Tally, of: u64, in_flight: usize, sprt: Option<&Sprt>) {
        let line = line(tally, of, in_flight, sprt);
        let mut err = std::io::stderr();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
            self.drawn = true;
        } else if tally.ptnml.pairs() >= self.shown + EVERY {
            self.shown = tally.ptnml.pairs();
            let _ = writeln!(err, "{line}");
        }
    }

    /// Clears the line before other output.
    pub fn clear(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}

/// The progress line's text.
fn line(tally: &Tally, of: u64, in_flight: usize, sprt: Option<&Sprt>) -> String {
    let mut line = format!("Pairs: {}/{of}, games in flight: {in_flight}", tally.ptnml.pairs());
    if let Some(test) = sprt {
        let (lower, upper) = test.bounds();
        line.push_str(&format!(", LLR: {:.2} ({lower:.2}, {upper:.2})", test.llr(&tally.ptnml)));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_pairs_games_in_flight_and_the_llr() {
        let mut tally = Tally::default();
        tally.ptnml.0 = [0, 0, 3, 0, 0];
        let sprt: Sprt = "elo0=0,elo1=10".parse().unwrap();
        let text = line(&tally, 100, 2, Some(&sprt));
        assert!(text.starts_with("Pairs: 3/100, games in flight: 2, LLR: "), "{text}");
        assert!(text.ends_with("(-2.94, 2.94)"), "{text}");
        assert_eq!(line(&tally, 10, 0, None), "Pairs: 3/10, games in flight: 0");
    }
}
