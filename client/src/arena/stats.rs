//! The statistics of a match between two players, counted per game pair
//! from PLAYER1's view, computed and printed as fastchess does: the
//! pentanomial score, logistic Elo and normalized Elo with 95% intervals,
//! LOS, the pair-based draw ratio and pairs ratio, and the generalized SPRT
//! of Fishtest (normalized or logistic model) with its bounds. No I/O: the
//! arena and `ttt arena stats` print what [`report`] returns.

mod llr;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

/// Pentanomial counts of game pairs from PLAYER1's view, by the pair's
/// points: `[LL, LD, WL+DD, WD, WW]` (0, ½, 1, 1½ and 2 points).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pentanomial(pub [u64; 5]);

/// Wins, draws and losses per game, from PLAYER1's view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wdl {
    /// Games PLAYER1 won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games PLAYER1 lost.
    pub losses: u64,
}

impl Pentanomial {
    /// How many pairs are counted.
    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The per-game counts the pairs imply when every pair in the WL+DD
    /// bucket is two draws (counts alone cannot tell WL from DD).
    pub fn wdl_counting_even_pairs_as_draws(&self) -> Wdl {
        let [ll, ld, even, wd, ww] = self.0;
        Wdl { wins: 2 * ww + wd, draws: ld + 2 * even + wd, losses: 2 * ll + ld }
    }

    /// Whether `wdl` can be the games of these pairs: two per pair, the
    /// draws those of LD, WD and DD pairs, the wins and losses the rest.
    pub fn consistent_with(&self, wdl: &Wdl) -> bool {
        let [ll, ld, even, wd, ww] = self.0;
        let Some(doubled_dd) = wdl.draws.checked_sub(ld + wd) else { return false };
        let wl = even.saturating_sub(doubled_dd / 2);
        doubled_dd % 2 == 0
            && doubled_dd / 2 <= even
            && wdl.wins == 2 * ww + wd + wl
            && wdl.losses == 2 * ll + ld + wl
    }

    /// How the WL+DD bucket splits, `(WL, DD)`, given the per-game draws
    /// (each LD or WD pair holds one draw, each DD pair two).
    fn even_split(&self, wdl: &Wdl) -> (u64, u64) {
        let [_, ld, even, wd, _] = self.0;
        let dd = (wdl.draws.saturating_sub(ld + wd) / 2).min(even);
        (even - dd, dd)
    }

    /// The score, Elo and nElo estimates fastchess prints for these counts
    /// (IEEE arithmetic throughout: no pairs, or a clean sweep, give NaN or
    /// infinite values, printed as fastchess prints them).
    pub fn estimates(&self) -> Estimates {
        let pairs = self.pairs() as f64;
        let share = self.0.map(|c| c as f64 / pairs);
        let score: f64 = (0..5).map(|i| share[i] * llr::SCORES[i]).sum();
        let variance: f64 = (0..5).map(|i| share[i] * (llr::SCORES[i] - score).powi(2)).sum();
        let per_pair = variance / pairs;
        let half_width = CI95_Z * per_pair.sqrt();
        let (upper, lower) = (score + half_width, score - half_width);
        let nelo = |s: f64| (s - 0.5) / (2.0 * variance).sqrt() * NELO_PER_T;
        Estimates {
            score,
            elo: logistic_elo(score),
            elo_error: (logistic_elo(upper) - logistic_elo(lower)) / 2.0,
            nelo: nelo(score),
            nelo_error: (nelo(upper) - nelo(lower)) / 2.0,
            los: (1.0 - erf(-(score - 0.5) / (2.0 * per_pair).sqrt())) / 2.0,
        }
    }
}

impl Wdl {
    /// How many games are counted.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
}

/// The two-sided 95% quantile of the normal distribution.
const CI95_Z: f64 = 1.959963984540054;

/// Normalized Elo per unit of t-value: 800 / ln 10.
const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// The estimates of a match's strength difference, from PLAYER1's view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimates {
    /// Mean points per game, 0..=1.
    pub score: f64,
    /// Logistic Elo difference.
    pub elo: f64,
    /// Half the width of its 95% interval.
    pub elo_error: f64,
    /// Normalized Elo difference (van den Bergh).
    pub nelo: f64,
    /// Half the width of its 95% interval.
    pub nelo_error: f64,
    /// Likelihood of superiority: the chance PLAYER1 is the stronger, 0..=1.
    pub los: f64,
}

/// The logistic Elo difference that expects `score` (fastchess's formula).
fn logistic_elo(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The expected score of a logistic Elo difference.
fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The error function, to full double precision: by its series
/// 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)), whose terms are all
/// positive (no cancellation); beyond |x| = 6 it is ±1 to the last bit.
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a >= 6.0 {
        return 1f64.copysign(x);
    }
    let (mut term, mut sum) = (a, a);
    for n in 1..400 {
        term *= 2.0 * a * a / f64::from(2 * n + 1);
        sum += term;
        if term <= sum * 1e-17 {
            break;
        }
    }
    (2.0 / std::f64::consts::PI.sqrt() * (-a * a).exp() * sum).copysign(x)
}

/// Which Elo the SPRT's bounds are in and how the LLR is computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Model {
    /// Normalized Elo (Fishtest's and fastchess's default): bounds on the
    /// t-value, whatever the draw rate.
    #[default]
    Normalized,
    /// Logistic Elo: bounds on the expected score.
    Logistic,
}

impl FromStr for Model {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "normalized" => Ok(Model::Normalized),
            "logistic" => Ok(Model::Logistic),
            _ => Err(format!("unknown model {text:?}: normalized or logistic")),
        }
    }
}

/// A sequential probability ratio test of H0 "PLAYER1 is `elo0` stronger"
/// against H1 "`elo1` stronger", with error rates α (accepting H1 wrongly)
/// and β (accepting H0 wrongly).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sprt {
    /// The Elo difference of H0.
    pub elo0: f64,
    /// The Elo difference of H1 (more than `elo0`).
    pub elo1: f64,
    /// The false positive rate, 0 < α < 1.
    pub alpha: f64,
    /// The false negative rate, 0 < β < 1, α + β < 1.
    pub beta: f64,
    /// Which Elo `elo0` and `elo1` are in.
    pub model: Model,
}

/// Which hypothesis the test accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// PLAYER1 is not `elo1` stronger: the LLR fell to the lower bound.
    H0,
    /// PLAYER1 is `elo1` stronger: the LLR rose to the upper bound.
    H1,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decision::H0 => "H0 was accepted",
            Decision::H1 => "H1 was accepted",
        })
    }
}

impl FromStr for Sprt {
    type Err = String;

    /// Reads `elo0=E0,elo1=E1[,alpha=A,beta=B]` (α = β = 0.05 unless given),
    /// in the normalized model; refuses in words what fastchess refuses.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut values: [Option<f64>; 4] = [None; 4];
        for part in text.split(',') {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!("{part:?} is not KEY=VALUE (write elo0=0,elo1=10[,alpha=0.05,beta=0.05])")
            })?;
            let slot = match key.trim() {
                "elo0" => 0,
                "elo1" => 1,
                "alpha" => 2,
                "beta" => 3,
                other => return Err(format!("unknown SPRT parameter {other:?}: elo0, elo1, alpha or beta")),
            };
            let number: f64 = value.trim().parse().map_err(|_| format!("{key}={value}: not a number"))?;
            if !number.is_finite() || values[slot].replace(number).is_some() {
                return Err(format!("{key}={value}: give each parameter once, as a finite number"));
            }
        }
        let [Some(elo0), Some(elo1), alpha, beta] = values else {
            return Err("the SPRT needs elo0 and elo1 (elo0=0,elo1=10)".to_owned());
        };
        let (alpha, beta) = (alpha.unwrap_or(0.05), beta.unwrap_or(0.05));
        if elo0 >= elo1 {
            return Err(format!("elo0 ({elo0}) must be less than elo1 ({elo1})"));
        }
        if !(alpha > 0.0 && alpha < 1.0 && beta > 0.0 && beta < 1.0 && alpha + beta < 1.0) {
            return Err(format!(
                "alpha ({alpha}) and beta ({beta}) must be between 0 and 1, their sum below 1"
            ));
        }
        Ok(Sprt { elo0, elo1, alpha, beta, model: Model::Normalized })
    }
}

impl Sprt {
    /// The LLR bounds (lower, upper): ln(β/(1−α)), ln((1−β)/α).
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The generalized log-likelihood ratio of H1 against H0 for these
    /// pairs (NaN when the hypotheses cannot be fitted: absurd bounds).
    pub fn llr(&self, p: &Pentanomial) -> f64 {
        match self.model {
            Model::Normalized => {
                // A pair's score has √2 times the deviation of a game's.
                let t = |nelo: f64| std::f64::consts::SQRT_2 * nelo / NELO_PER_T;
                llr::normalized(&p.0, t(self.elo0), t(self.elo1))
            }
            Model::Logistic => llr::logistic(&p.0, logistic_score(self.elo0), logistic_score(self.elo1)),
        }
    }

    /// The hypothesis accepted once the LLR reaches a bound; None while the
    /// test goes on.
    pub fn decision(&self, p: &Pentanomial) -> Option<Decision> {
        let llr = self.llr(p);
        let (lower, upper) = self.bounds();
        if llr >= upper {
            Some(Decision::H1)
        } else if llr <= lower {
            Some(Decision::H0)
        } else {
            None
        }
    }
}

/// A number as fastchess's `{:.N}` prints it: "inf", "-inf", and "-nan"
/// for the NaN of 0/0 or ∞−∞ (x86-64 makes that NaN negative, and fastchess
/// prints its sign: "Elo: inf +/- -nan" after a clean sweep).
fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() { "-nan".to_owned() } else { format!("{x:.decimals$}") }
}

/// The block fastchess prints for a match, each line ending in a newline:
/// "Results of {title}:", Elo and nElo, LOS and the ratios, the games, the
/// pentanomial counts and, with an SPRT, the LLR with its bounds and Elo
/// bounds. `wdl` are the games behind `p` (it tells WL pairs from DD ones).
pub fn report(title: &str, p: &Pentanomial, wdl: &Wdl, sprt: Option<&Sprt>) -> String {
    let e = p.estimates();
    let [ll, ld, even, wd, ww] = p.0;
    let (wl, dd) = p.even_split(wdl);
    let games = wdl.games();
    let points = wdl.wins as f64 + 0.5 * wdl.draws as f64;
    let mut block = format!(
        "Results of {title}:\n\
         Elo: {} +/- {}, nElo: {} +/- {}\n\
         LOS: {} %, DrawRatio: {} %, PairsRatio: {}\n\
         Games: {games}, Wins: {}, Losses: {}, Draws: {}, Points: {:.1} ({} %)\n\
         Ptnml(0-2): [{ll}, {ld}, {even}, {wd}, {ww}], WL/DD Ratio: {}\n",
        fixed(e.elo, 2),
        fixed(e.elo_error, 2),
        fixed(e.nelo, 2),
        fixed(e.nelo_error, 2),
        fixed(e.los * 100.0, 2),
        fixed(even as f64 / p.pairs() as f64 * 100.0, 2),
        fixed((ww + wd) as f64 / (ld + ll) as f64, 2),
        wdl.wins,
        wdl.losses,
        wdl.draws,
        points,
        fixed(points / games as f64 * 100.0, 2),
        fixed(wl as f64 / dd as f64, 2),
    );
    if let Some(sprt) = sprt {
        let (lower, upper) = sprt.bounds();
        block += &format!(
            "LLR: {} ({lower:.2}, {upper:.2}) [{:.2}, {:.2}]\n",
            fixed(sprt.llr(p), 2),
            sprt.elo0,
            sprt.elo1
        );
    }
    block
}
