//! Fischer time controls: each side starts with `initial_ms` and gains
//! `increment_ms` with each accepted move, as Lichess and engine testers
//! play. The ranges a server accepts, the one check of a requested clock
//! (whose refusal is `invalid_clock`), and the `minutes+seconds` spelling
//! people write ("3+2").

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A Fischer clock: time each side starts with, and time added per move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Fischer {
    /// Each side's time at the start, in ms.
    pub initial_ms: u64,
    /// Added to the mover's clock once a move is accepted, in ms.
    pub increment_ms: u64,
}

impl Fischer {
    /// The `initial_ms` a server accepts: a second to three hours.
    pub const INITIAL_MS: RangeInclusive<u64> = 1_000..=10_800_000;
    /// The `increment_ms` a server accepts: none to three minutes.
    pub const INCREMENT_MS: RangeInclusive<u64> = 0..=180_000;
    /// The time each side has for its first move, before its clock starts.
    pub const FIRST_MOVE_MS: u64 = 30_000;
    /// The most a move's time is reduced for the mover's network lag.
    pub const MAX_LAG_CREDIT_MS: u64 = 250;

    /// How long a bot may think about one move with `left_ms` on its clock
    /// and this increment: a twentieth of what is left and three quarters
    /// of the increment, as engines spend it, but never more than half of
    /// what is left past a 250 ms margin for the network, so that a bot
    /// that keeps to it never flags.
    pub fn move_budget(&self, left_ms: u64) -> std::time::Duration {
        let spend = left_ms / 20 + self.increment_ms * 3 / 4;
        let cap = left_ms.saturating_sub(Self::MAX_LAG_CREDIT_MS) / 2;
        std::time::Duration::from_millis(spend.min(cap))
    }

    /// The clock a client asked for, checked: the refusal (for an
    /// `invalid_clock` error) names the field at fault and its range.
    pub fn checked(initial_ms: Option<i64>, increment_ms: Option<i64>) -> Result<Fischer, String> {
        let within = |v: Option<i64>, range: &RangeInclusive<u64>| {
            v.and_then(|v| u64::try_from(v).ok()).filter(|v| range.contains(v))
        };
        let Some(initial_ms) = within(initial_ms, &Self::INITIAL_MS) else {
            return Err(Self::field_refusal("initial_ms"));
        };
        let Some(increment_ms) = within(increment_ms, &Self::INCREMENT_MS) else {
            return Err(Self::field_refusal("increment_ms"));
        };
        Ok(Fischer { initial_ms, increment_ms })
    }

    /// The refusal for a bad `clock.<field>` (or for a `clock` that is not
    /// an object, with `field` = `"clock"`).
    pub fn field_refusal(field: &str) -> String {
        let (i, n) = (&Self::INITIAL_MS, &Self::INCREMENT_MS);
        let whole = format!(
            "clock must be {{\"initial_ms\": N, \"increment_ms\": M}} with N from {} to {} and M from {} to {} \
             (or null for the per-move timer)",
            i.start(),
            i.end(),
            n.start(),
            n.end()
        );
        match field {
            "initial_ms" => {
                format!("clock.initial_ms must be an integer from {} to {} (ms); {whole}", i.start(), i.end())
            }
            "increment_ms" => {
                format!(
                    "clock.increment_ms must be an integer from {} to {} (ms); {whole}",
                    n.start(),
                    n.end()
                )
            }
            _ => whole,
        }
    }
}

/// `minutes+seconds`, as Lichess writes a time control: `3+2`, `0.5+0`, `10+0.1`.
impl fmt::Display for Fischer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}+{}", decimal(self.initial_ms, 60_000), decimal(self.increment_ms, 1_000))
    }
}

/// `ms / unit` with as few decimals as it needs (at most three).
fn decimal(ms: u64, unit: u64) -> String {
    let whole = ms / unit;
    let rest = ms % unit;
    if rest == 0 {
        return whole.to_string();
    }
    let fraction = format!("{:.3}", rest as f64 / unit as f64);
    format!("{whole}{}", fraction.trim_start_matches('0').trim_end_matches('0'))
}

/// Reads `minutes+seconds` (`3+2`, `0.5+0`, `½+0`, `10+0.1`): the form
/// `--clock` takes. The result is checked against the server's ranges.
impl FromStr for Fischer {
    type Err = String;

    fn from_str(text: &str) -> Result<Fischer, String> {
        let bad = || format!("{text:?} is not a time control: write minutes+seconds, as in 3+2 or 0.5+0");
        let (minutes, seconds) = text.trim().split_once('+').ok_or_else(bad)?;
        let number = |s: &str| -> Option<f64> {
            let s = s.trim();
            let v = match s {
                "½" => 0.5,
                "¼" => 0.25,
                "¾" => 0.75,
                _ => s.parse::<f64>().ok()?,
            };
            (v.is_finite() && v >= 0.0).then_some(v)
        };
        let (Some(m), Some(s)) = (number(minutes), number(seconds)) else {
            return Err(bad());
        };
        let to_ms = |v: f64| i64::try_from((v.min(1e12)).round() as u64).ok();
        Fischer::checked(to_ms(m * 60_000.0), to_ms(s * 1_000.0)).map_err(|_| {
            format!("{text:?}: the base is 1/60 to 180 minutes and the increment 0 to 180 seconds")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked_and_refusals_name_the_field() {
        assert_eq!(
            Fischer::checked(Some(180_000), Some(2_000)),
            Ok(Fischer { initial_ms: 180_000, increment_ms: 2_000 })
        );
        assert!(Fischer::checked(Some(1_000), Some(0)).is_ok());
        assert!(Fischer::checked(Some(10_800_000), Some(180_000)).is_ok());
        for (i, n, field) in [
            (None, Some(0), "clock.initial_ms"),
            (Some(999), Some(0), "clock.initial_ms"),
            (Some(10_800_001), Some(0), "clock.initial_ms"),
            (Some(-1), Some(0), "clock.initial_ms"),
            (Some(60_000), None, "clock.increment_ms"),
            (Some(60_000), Some(-1), "clock.increment_ms"),
            (Some(60_000), Some(180_001), "clock.increment_ms"),
        ] {
            let why = Fischer::checked(i, n).unwrap_err();
            assert!(why.starts_with(field), "{why}");
        }
    }

    #[test]
    fn a_move_budget_spends_a_share_and_never_the_last_of_the_time() {
        let f = |i, n| Fischer { initial_ms: i, increment_ms: n };
        let ms = std::time::Duration::from_millis;
        assert_eq!(f(180_000, 2_000).move_budget(180_000), ms(9_000 + 1_500));
        assert_eq!(f(60_000, 0).move_budget(60_000), ms(3_000));
        // Low on time: half of what is left past the margin.
        assert_eq!(f(60_000, 2_000).move_budget(1_250), ms(500));
        assert_eq!(f(60_000, 2_000).move_budget(200), ms(0));
    }

    #[test]
    fn minutes_plus_seconds_read_and_write_as_lichess_does() {
        let f = |i, n| Fischer { initial_ms: i, increment_ms: n };
        for (text, want) in [
            ("3+2", f(180_000, 2_000)),
            ("1+0", f(60_000, 0)),
            ("0.5+0", f(30_000, 0)),
            ("½+0", f(30_000, 0)),
            ("10+0.1", f(600_000, 100)),
            (" 5 + 3 ", f(300_000, 3_000)),
        ] {
            assert_eq!(text.parse::<Fischer>(), Ok(want), "{text}");
        }
        assert_eq!(f(180_000, 2_000).to_string(), "3+2");
        assert_eq!(f(30_000, 0).to_string(), "0.5+0");
        assert_eq!(f(600_000, 100).to_string(), "10+0.1");
        assert_eq!(f(90_000, 1_500).to_string(), "1.5+1.5");
        for bad in ["3", "+", "a+2", "-1+0", "181+0", "3+181", "0+0", "inf+0", "NaN+1"] {
            assert!(bad.parse::<Fischer>().is_err(), "{bad}");
        }
    }
}
