//! Both sides' Fischer clocks as the server last reported them, ticking
//! down locally from the instant that report arrived: no timer of its own,
//! the time to read them at is passed in.

use std::time::Instant;

use tictactoe_protocol::Player;

/// Each side's time left as of one server message (`clocks` and `running`
/// of `game_started`, `state`, `moved`, `game_over`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clocks {
    /// Each side's ms left when the message arrived; index 0 is player 1 (X).
    pub left: [u64; 2],
    /// Whose clock runs; `None` before each side has made its first move
    /// (each first move has its own time, the game's `clock_ms`) and once
    /// the game is over.
    pub running: Option<Player>,
    /// When the message arrived: the running clock counts down from here.
    pub at: Instant,
}

impl Clocks {
    /// The clocks of a message with `clocks` and `running`, arrived `at`.
    pub fn new(left: [u64; 2], running: Option<Player>, at: Instant) -> Clocks {
        Clocks { left, running, at }
    }

    /// `player`'s time left at `now`: the running clock less the time since
    /// the report (never below 0), the other as reported.
    pub fn left(&self, player: Player, now: Instant) -> u64 {
        let reported = self.left[usize::from(player.number() - 1)];
        if self.running != Some(player) {
            return reported;
        }
        let passed = u64::try_from(now.saturating_duration_since(self.at).as_millis()).unwrap_or(u64::MAX);
        reported.saturating_sub(passed)
    }

    /// The clocks as they stand at `now`, with none running: the game is
    /// over and no message said how they ended.
    pub fn stopped(&self, now: Instant) -> Clocks {
        Clocks { left: [self.left(Player::X, now), self.left(Player::O, now)], running: None, at: now }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_running_clock_ticks_down_from_the_report_and_stops_at_zero() {
        let t0 = Instant::now();
        let c = Clocks::new([180_000, 175_500], Some(Player::O), t0);
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!((c.left(Player::X, t0), c.left(Player::O, t0)), (180_000, 175_500));
        // Only O's clock runs.
        assert_eq!((c.left(Player::X, at(1_250)), c.left(Player::O, at(1_250))), (180_000, 174_250));
        assert_eq!(c.left(Player::O, at(175_500)), 0);
        assert_eq!(c.left(Player::O, at(500_000)), 0, "never below 0");
        // A time before the report (a clock read late) is not counted up.
        assert_eq!(c.left(Player::O, t0.checked_sub(Duration::from_secs(1)).unwrap_or(t0)), 175_500);
    }

    #[test]
    fn no_clock_runs_before_the_first_moves_and_a_stopped_clock_keeps_its_time() {
        let t0 = Instant::now();
        let first = Clocks::new([60_000, 60_000], None, t0);
        let later = t0 + Duration::from_secs(20);
        assert_eq!((first.left(Player::X, later), first.left(Player::O, later)), (60_000, 60_000));
        let c = Clocks::new([9_000, 42_000], Some(Player::X), t0);
        let stopped = c.stopped(t0 + Duration::from_millis(2_500));
        assert_eq!(stopped.left, [6_500, 42_000]);
        assert_eq!(stopped.running, None);
        assert_eq!(stopped.left(Player::X, later + Duration::from_secs(60)), 6_500);
    }
}
