//! `ttt arena`: one bot against another, measured — game pairs from
//! balanced openings in organised rooms on a live server, counted as
//! pentanomial statistics, with a sequential probability ratio test.

mod match_args;
mod openings;
mod pair;
mod players;
mod progress;
mod results;
mod run;
mod server;

pub use match_args::MatchArgs;
pub use run::run;

/// Stand-in for the statistics module being written on its own branch
/// (`arena/stats.rs`); replaced by it when that branch is merged.
pub mod stats {
    use std::str::FromStr;

    /// Pair counts `[LL, LD, WL+DD, WD, WW]`.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Pentanomial(pub [u64; 5]);

    /// Game counts.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Wdl {
        pub wins: u64,
        pub draws: u64,
        pub losses: u64,
    }

    /// The Elo model of a test.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub enum Model {
        #[default]
        Normalized,
        Logistic,
    }

    impl FromStr for Model {
        type Err = String;
        fn from_str(s: &str) -> Result<Model, String> {
            match s {
                "normalized" => Ok(Model::Normalized),
                "logistic" => Ok(Model::Logistic),
                _ => Err(format!("{s:?}: normalized or logistic")),
            }
        }
    }

    /// What a test decided.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Decision {
        H0,
        H1,
    }

    /// A test's hypotheses and error rates.
    #[derive(Debug, Clone, Copy)]
    pub struct Sprt {
        pub elo0: f64,
        pub elo1: f64,
        pub alpha: f64,
        pub beta: f64,
        #[allow(dead_code)]
        pub model: Model,
    }

    impl FromStr for Sprt {
        type Err = String;
        fn from_str(s: &str) -> Result<Sprt, String> {
            let mut t = Sprt { elo0: 0.0, elo1: 10.0, alpha: 0.05, beta: 0.05, model: Model::Normalized };
            for part in s.split(',') {
                let (k, v) = part.split_once('=').ok_or("key=value")?;
                let v: f64 = v.trim().parse().map_err(|_| "a number")?;
                match k.trim() {
                    "elo0" => t.elo0 = v,
                    "elo1" => t.elo1 = v,
                    "alpha" => t.alpha = v,
                    "beta" => t.beta = v,
                    _ => return Err("elo0, elo1, alpha, beta".into()),
                }
            }
            Ok(t)
        }
    }

    impl Sprt {
        /// `ln(β/(1−α))`, `ln((1−β)/α)`.
        pub fn bounds(&self) -> (f64, f64) {
            ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
        }

        /// The log-likelihood ratio of the pair counts (a rough logistic one).
        pub fn llr(&self, p: &Pentanomial) -> f64 {
            let n: f64 = p.0.iter().sum::<u64>() as f64;
            if n == 0.0 {
                return 0.0;
            }
            let score = |i: usize| i as f64 / 4.0;
            let mean = (0..5).map(|i| p.0[i] as f64 * score(i)).sum::<f64>() / n;
            let var = ((0..5).map(|i| p.0[i] as f64 * (score(i) - mean).powi(2)).sum::<f64>() / n).max(1e-3);
            let s = |elo: f64| 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
            let (s0, s1) = (s(self.elo0), s(self.elo1));
            (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var / n)
        }

        /// H0 or H1 once the ratio crosses a bound.
        pub fn decision(&self, p: &Pentanomial) -> Option<Decision> {
            let (lower, upper) = self.bounds();
            let llr = self.llr(p);
            (llr >= upper).then_some(Decision::H1).or((llr <= lower).then_some(Decision::H0))
        }
    }

    /// The statistics block.
    pub fn report(title: &str, p: &Pentanomial, w: &Wdl, sprt: Option<&Sprt>) -> String {
        let games = w.wins + w.draws + w.losses;
        let mut out = format!(
            "Results of {title}:\nGames: {games}, Wins: {}, Losses: {}, Draws: {}\nPtnml(0-2): {:?}",
            w.wins, w.losses, w.draws, p.0
        );
        if let Some(t) = sprt {
            let (lower, upper) = t.bounds();
            out.push_str(&format!(
                "\nLLR: {:.2} ({lower:.2}, {upper:.2}) [{:.2}, {:.2}]",
                t.llr(p),
                t.elo0,
                t.elo1
            ));
        }
        out
    }
}
