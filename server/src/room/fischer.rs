//! The two clocks of a game on a Fischer time control: the mover's runs,
//! and an accepted move adds the increment. Time comes in as `now`; the
//! flag's instant goes out as a deadline (the room has no timer of its own).
//!
//! Each side's first move is timed by the room's turn clock (30 s) instead:
//! these clocks start once both sides have moved.

use std::time::{Duration, Instant};

use tictactoe_protocol::Fischer;

/// Both sides' clocks, indexed by player (0 = player 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clocks {
    terms: Fischer,
    /// Each side's time left as of the start of its current turn (or as
    /// the clocks stopped).
    left: [Duration; 2],
    /// Whose clock runs, and since when.
    running: Option<(usize, Instant)>,
    /// Sides that went berserk: no increment for them.
    berserk: [bool; 2],
}

/// The clock of the side to move ran out at this instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub Instant);

impl Clocks {
    /// Both sides at `initial_ms`, neither running.
    pub fn new(terms: Fischer) -> Clocks {
        let initial = Duration::from_millis(terms.initial_ms);
        Clocks { terms, left: [initial; 2], running: None, berserk: [false; 2] }
    }

    /// The clocks of a saved game: each side's time as saved, neither running.
    pub fn saved(terms: Fischer, left: [Duration; 2]) -> Clocks {
        Clocks { terms, left, running: None, berserk: [false; 2] }
    }

    /// `side` goes berserk (a tournament game, before its first move): its
    /// time is halved and it gains no increment for the rest of the game. A
    /// saved game's clocks, berserk already, keep what they had.
    pub fn berserk(&mut self, side: usize) {
        let half = Duration::from_millis(self.terms.initial_ms / 2);
        self.left[side] = self.left[side].min(half);
        self.berserk[side] = true;
    }

    /// `side`'s clock runs from `now` (the other's stops where it is).
    pub fn start(&mut self, side: usize, now: Instant) {
        self.stop(now);
        self.running = Some((side, now));
    }

    /// No clock runs from `now`; each keeps what it had then.
    pub fn stop(&mut self, now: Instant) {
        self.left = self.at(now);
        self.running = None;
    }

    /// Whose clock runs.
    pub fn running(&self) -> Option<usize> {
        self.running.map(|(side, _)| side)
    }

    /// When the running clock reaches zero.
    pub fn deadline(&self) -> Option<Instant> {
        self.running.map(|(side, since)| since + self.left[side])
    }

    /// Each side's time left at `now`.
    pub fn at(&self, now: Instant) -> [Duration; 2] {
        let mut left = self.left;
        if let Some((side, since)) = self.running {
            left[side] = left[side].saturating_sub(now.saturating_duration_since(since));
        }
        left
    }

    /// The side whose clock runs moved at `now`: its time is what it had
    /// less the time since its turn began, less up to `credit` for its
    /// network lag, plus the increment; the other side's clock starts.
    /// Past the flag (measured without the credit) the move is too late.
    /// Returns the mover's time left.
    pub fn moved(&mut self, now: Instant, credit: Duration) -> Result<Duration, Flag> {
        let Some((side, since)) = self.running else {
            return Ok(Duration::ZERO);
        };
        let deadline = since + self.left[side];
        if now >= deadline {
            return Err(Flag(deadline));
        }
        let credit = credit.min(Duration::from_millis(Fischer::MAX_LAG_CREDIT_MS));
        let spent = now.saturating_duration_since(since).saturating_sub(credit);
        let increment = if self.berserk[side] { 0 } else { self.terms.increment_ms };
        let left = self.left[side].saturating_sub(spent) + Duration::from_millis(increment);
        self.left[side] = left;
        self.running = Some((1 - side, now));
        Ok(left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_movers_clock_runs_and_an_accepted_move_adds_the_increment() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut c = Clocks::new(Fischer { initial_ms: 10_000, increment_ms: 2_000 });
        assert_eq!((c.running(), c.deadline(), c.at(t0 + ms(5_000))), (None, None, [ms(10_000); 2]));
        c.start(0, t0);
        assert_eq!(c.deadline(), Some(t0 + ms(10_000)));
        assert_eq!(c.at(t0 + ms(3_000)), [ms(7_000), ms(10_000)]);
        // 3 s spent, 100 ms of it lag: 10 - 2.9 + 2.
        assert_eq!(c.moved(t0 + ms(3_000), ms(100)), Ok(ms(9_100)));
        assert_eq!((c.running(), c.deadline()), (Some(1), Some(t0 + ms(13_000))));
        // A lag credit is at most 250 ms.
        assert_eq!(c.moved(t0 + ms(4_000), ms(5_000)), Ok(ms(11_250)));
        assert_eq!(c.at(t0 + ms(4_000)), [ms(9_100), ms(11_250)]);
        // Past the flag, no credit saves a move.
        assert_eq!(c.moved(t0 + ms(13_100), ms(250)), Err(Flag(t0 + ms(13_100))));
        assert_eq!(c.moved(t0 + ms(13_200), ms(250)), Err(Flag(t0 + ms(13_100))));
        c.stop(t0 + ms(20_000));
        assert_eq!((c.running(), c.at(t0 + ms(99_000))), (None, [ms(0), ms(11_250)]));
    }

    #[test]
    fn a_berserk_side_has_half_its_time_and_no_increment() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut c = Clocks::new(Fischer { initial_ms: 10_000, increment_ms: 2_000 });
        c.berserk(1);
        assert_eq!(c.at(t0), [ms(10_000), ms(5_000)]);
        c.start(0, t0);
        assert_eq!(c.moved(t0 + ms(1_000), Duration::ZERO), Ok(ms(11_000)));
        assert_eq!(c.moved(t0 + ms(2_000), Duration::ZERO), Ok(ms(4_000)), "no increment");
        c.berserk(1);
        assert_eq!(c.at(t0 + ms(2_000))[1], ms(4_000), "berserk again takes nothing more");
    }

    #[test]
    fn saved_clocks_start_from_what_was_saved() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut c = Clocks::saved(Fischer { initial_ms: 60_000, increment_ms: 0 }, [s(12), s(40)]);
        c.start(1, t0);
        assert_eq!(c.deadline(), Some(t0 + s(40)));
        assert_eq!(c.at(t0 + s(1)), [s(12), s(39)]);
    }
}
