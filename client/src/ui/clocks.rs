//! The clock line of a game on a Fischer clock: both players with their
//! time left, ticking down between the server's messages, the running one
//! highlighted and low time in the warning colour. Time is passed in, so
//! that what a clock shows at any moment can be checked without waiting.

use std::time::Instant;

use crossterm::style::Stylize;
use tictactoe_protocol::{Fischer, Player};

use super::palette::Tone;
use crate::view::View;

/// Low time, whatever the clock: under 10 s.
const LOW_MS: u64 = 10_000;

/// Characters of a player's label kept on the clock line, so that both
/// times fit on 80 columns whatever the names.
const LABEL_CHARS: usize = 24;

/// Time left as a clock shows it: `m:ss` (`h:mm:ss` from an hour), and
/// `0:09.4` with tenths under 10 s. Rounded down, as a clock that must not
/// claim time it has not got.
pub fn shown(ms: u64) -> String {
    if ms < LOW_MS {
        return format!("0:{:02}.{}", ms / 1000, ms % 1000 / 100);
    }
    let secs = ms / 1000;
    match secs / 3600 {
        0 => format!("{}:{:02}", secs / 60, secs % 60),
        hours => format!("{hours}:{:02}:{:02}", secs / 60 % 60, secs % 60),
    }
}

/// Time left under which a clock is low: 10 s, or a tenth of the initial
/// time when that is less (a 1+0 game is low from 6 s, a 0.5+0 one from 3 s).
pub fn low_below(clock: Fischer) -> u64 {
    LOW_MS.min(clock.initial_ms / 10)
}

/// One player's clock as the clock line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Face {
    /// The player's mark and name, then the time: `X (ann 1500) 2:58`.
    pub text: String,
    pub player: Player,
    /// This clock is the one running.
    pub running: bool,
    /// Its time is low.
    pub low: bool,
}

/// Both clocks at `now`, X first, once a game on a Fischer clock has them.
pub fn faces(view: &View, now: Instant) -> Option<[Face; 2]> {
    let (fischer, clocks) = (view.fischer?, view.clocks?);
    let face = |player: Player| {
        let left = clocks.left(player, now);
        let label: String = view.player(player).chars().take(LABEL_CHARS).collect();
        Face {
            text: format!("{label} {}", shown(left)),
            player,
            running: clocks.running == Some(player),
            low: left < low_below(fischer),
        }
    };
    Some([face(Player::X), face(Player::O)])
}

/// The clock line at `now`, if the game has a Fischer clock. With
/// `colour`, the running clock is reversed in its player's colour and a
/// low one is red; without, the running clock is in brackets and a low one
/// says `LOW`.
pub fn clock_line(view: &View, now: Instant, colour: bool) -> Option<String> {
    let faces = faces(view, now)?;
    let one = |f: &Face| match colour {
        true => {
            let tone = if f.low { Tone::Warn } else { Tone::of(f.player) };
            let mut styled = format!(" {} ", f.text).bold();
            if let Some(c) = tone.colour() {
                styled = styled.with(c);
            }
            if f.running {
                styled = styled.reverse();
            }
            styled.to_string()
        }
        false => {
            let low = if f.low { " LOW" } else { "" };
            if f.running { format!("[{}{low}]", f.text) } else { format!(" {}{low} ", f.text) }
        }
    };
    Some(format!("{}  {}", one(&faces[0]), one(&faces[1])))
}

/// Whether the clock of `player` is low at `now` (for the bell).
pub fn low(view: &View, player: Player, now: Instant) -> bool {
    faces(view, now).is_some_and(|f| f[usize::from(player.number() - 1)].low)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::view::Clocks;

    #[test]
    fn minutes_and_seconds_with_tenths_under_ten_seconds() {
        for (ms, want) in [
            (180_000, "3:00"),
            (179_999, "2:59"),
            (61_000, "1:01"),
            (10_000, "0:10"),
            (9_999, "0:09.9"),
            (9_400, "0:09.4"),
            (450, "0:00.4"),
            (0, "0:00.0"),
            (3_600_000, "1:00:00"),
            (10_800_000, "3:00:00"),
            (3_725_000, "1:02:05"),
        ] {
            assert_eq!(shown(ms), want, "{ms} ms");
        }
    }

    #[test]
    fn low_time_is_ten_seconds_or_a_tenth_of_a_short_clock() {
        let clock = |initial_ms| Fischer { initial_ms, increment_ms: 0 };
        assert_eq!(low_below(clock(180_000)), 10_000);
        assert_eq!(low_below(clock(100_000)), 10_000);
        assert_eq!(low_below(clock(60_000)), 6_000);
        assert_eq!(low_below(clock(30_000)), 3_000);
    }

    /// A 3+2 game between ann (X) and bob (O), X's clock running with
    /// `x` ms left and O's at `o`, reported at `t0`.
    fn game(x: u64, o: u64, t0: Instant) -> View {
        let mut v = View::new(3, 3);
        v.names = vec!["ann".into(), "bob".into()];
        v.fischer = Some(Fischer { initial_ms: 180_000, increment_ms: 2_000 });
        v.clocks = Some(Clocks::new([x, o], Some(Player::X), t0));
        v
    }

    #[test]
    fn the_running_clock_ticks_down_is_highlighted_and_goes_low() {
        let t0 = Instant::now();
        let v = game(12_000, 95_000, t0);
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(clock_line(&v, t0, false).as_deref(), Some("[X (ann) 0:12]   O (bob) 1:35 "));
        assert_eq!(clock_line(&v, at(1_500), false).as_deref(), Some("[X (ann) 0:10]   O (bob) 1:35 "));
        assert_eq!(clock_line(&v, at(2_600), false).as_deref(), Some("[X (ann) 0:09.4 LOW]   O (bob) 1:35 "));
        assert!(
            !low(&v, Player::X, at(1_999)) && low(&v, Player::X, at(2_001)) && !low(&v, Player::O, at(2_001))
        );
        // Run out: 0:00.0, never below.
        assert_eq!(
            clock_line(&v, at(60_000), false).as_deref(),
            Some("[X (ann) 0:00.0 LOW]   O (bob) 1:35 ")
        );
        // In colour: escape codes, the running one reversed (SGR 7), the other not.
        let coloured = clock_line(&v, t0, true).expect("a clock line");
        let (x, o) = coloured.split_once("  ").expect("two clocks");
        assert!(x.contains("\u{1b}[7m") && !o.contains("\u{1b}[7m"), "{coloured:?}");
    }

    #[test]
    fn no_clock_line_without_a_fischer_clock_and_both_initial_before_the_first_moves() {
        let t0 = Instant::now();
        let mut v = game(180_000, 180_000, t0);
        v.clocks = Some(Clocks::new([180_000, 180_000], None, t0));
        let later = t0 + Duration::from_secs(25);
        assert_eq!(clock_line(&v, later, false).as_deref(), Some(" X (ann) 3:00    O (bob) 3:00 "));
        v.fischer = None;
        assert_eq!(clock_line(&v, later, false), None);
    }
}
