//! The turn clock of one room: running with a deadline, or paused with the
//! time that was left (while a player is away), or off.

use std::time::{Duration, Instant};

/// The time the player to move has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnClock {
    /// Time per move; `None` = no timer.
    timeout: Option<Duration>,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No game in progress, or no timer.
    Stopped,
    /// The player to move runs out of time at this instant.
    Running(Instant),
    /// Paused with this much left.
    Paused(Duration),
}

impl TurnClock {
    /// A stopped clock with `timeout` per move.
    pub fn new(timeout: Option<Duration>) -> TurnClock {
        TurnClock { timeout, state: State::Stopped }
    }

    /// A full turn for the player to move, starting now or, with `paused`,
    /// waiting for the absent player to come back.
    pub fn restart(&mut self, now: Instant, paused: bool) {
        self.state = match self.timeout {
            None => State::Stopped,
            Some(t) if paused => State::Paused(t),
            Some(t) => State::Running(now + t),
        };
    }

    /// No turn is being timed (the game is over).
    pub fn stop(&mut self) {
        self.state = State::Stopped;
    }

    /// Keeps the time that is left until [`TurnClock::resume`].
    pub fn pause(&mut self, now: Instant) {
        if let State::Running(deadline) = self.state {
            self.state = State::Paused(deadline.saturating_duration_since(now));
        }
    }

    /// Paused with `left` (at most a full turn), if turns are timed.
    pub fn hold(&mut self, left: Duration) {
        if let Some(t) = self.timeout {
            self.state = State::Paused(left.min(t));
        }
    }

    /// Runs again with the time that was left.
    pub fn resume(&mut self, now: Instant) {
        if let State::Paused(left) = self.state {
            self.state = State::Running(now + left);
        }
    }

    /// When the player to move runs out of time, while the clock runs.
    pub fn deadline(&self) -> Option<Instant> {
        match self.state {
            State::Running(d) => Some(d),
            _ => None,
        }
    }

    /// The time the player to move has at `now`, if a turn is timed.
    pub fn left(&self, now: Instant) -> Option<Duration> {
        match self.state {
            State::Stopped => None,
            State::Running(d) => Some(d.saturating_duration_since(now)),
            State::Paused(left) => Some(left),
        }
    }

    /// The full time per move, if there is a timer.
    pub fn per_move(&self) -> Option<Duration> {
        self.timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_pauses_and_resumes_with_what_was_left() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut c = TurnClock::new(Some(s(10)));
        assert_eq!(c.left(t0), None);
        c.restart(t0, false);
        assert_eq!((c.deadline(), c.left(t0 + s(4))), (Some(t0 + s(10)), Some(s(6))));
        c.pause(t0 + s(4));
        assert_eq!((c.deadline(), c.left(t0 + s(100))), (None, Some(s(6))));
        c.resume(t0 + s(20));
        assert_eq!(c.deadline(), Some(t0 + s(26)));
        c.restart(t0 + s(30), true);
        assert_eq!((c.deadline(), c.left(t0 + s(99))), (None, Some(s(10))));
        c.stop();
        assert_eq!(c.left(t0), None);
        let mut off = TurnClock::new(None);
        off.restart(t0, false);
        assert_eq!((off.deadline(), off.left(t0)), (None, None));
    }
}
