//! Whether this instance may still act on its games in a cluster. Another
//! instance adopts a game once its holder's lease ran out; a holder that
//! was stalled past its lease (SIGSTOP, a VM pause, a starved process)
//! wakes up with a stale copy. So a room acts on anything (a move, a
//! timeout, the house's move) only while the lease, as the last beat that
//! reached the database left it, still runs; and after each lapse every
//! room with a game in progress asks once, before it acts, whether its game
//! is still this instance's. A game another instance adopted, or ended, is
//! let go: the room closes with 1012 and says nothing of its own.
//!
//! A lapse while the beats merely fail (the database cannot be reached,
//! and so no instance can adopt) does not stop games: the store's faults
//! are handled as the store handles them. Only a lapse nobody was awake
//! for, or one that ends with a renewal, is checked.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::store::LEASE;

/// How much sooner than the database would let another instance adopt its
/// games this instance stops acting on them: clocks may run at slightly
/// different rates, and a room's decision takes a moment to leave.
const MARGIN: Duration = Duration::from_millis(750);

/// While the beats fail, how recent the last attempt must be for the
/// instance to count as awake (an attempt waits at most a few seconds for
/// its answer).
const AWAKE: Duration = Duration::from_secs(5);

/// The answer to a room's check after a lapse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The game is still this instance's, as of this generation.
    Held(u64),
    /// Another instance adopted or recorded it: the room lets it go.
    Lost,
}

/// A room's question after a lapse: is this game (its id) still ours?
#[derive(Debug)]
pub struct Check {
    /// The game's id.
    pub game: std::sync::Arc<str>,
    /// Where the verdict goes.
    pub answer: oneshot::Sender<Verdict>,
}

/// This instance's lease as the rooms see it: lock-free reads on the move path.
pub struct Fence {
    base: Instant,
    /// Milliseconds since `base` until which the lease surely runs.
    valid_until: AtomicU64,
    /// Bumped at each lapse that ended with a renewal: every room with a
    /// game in progress checks it once before acting again.
    generation: AtomicU64,
    /// The last beat failed (the database did not answer or refused).
    failing: AtomicBool,
    /// Milliseconds since `base` when the last beat was tried.
    tried: AtomicU64,
    /// Hands a check to the leases' thread, which answers it (gives it
    /// back if that thread is gone).
    leases: OnceLock<Answerer>,
}

/// How checks reach whoever answers them.
pub type Answerer = Box<dyn Fn(Check) -> Result<(), Check> + Send + Sync>;

impl std::fmt::Debug for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fence")
            .field("valid_until", &self.valid_until)
            .field("generation", &self.generation)
            .field("failing", &self.failing)
            .finish_non_exhaustive()
    }
}

impl Fence {
    /// A fence whose lease runs from `now` (the start took its epoch then).
    pub fn new(now: Instant) -> Fence {
        let f = Fence {
            base: now,
            valid_until: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            tried: AtomicU64::new(0),
            leases: OnceLock::new(),
        };
        f.valid_until.store(f.ms(now + LEASE - MARGIN), Ordering::Release);
        f
    }

    fn ms(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.base).as_millis()).unwrap_or(u64::MAX)
    }

    /// The present generation: a room that checked at it need not again.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Whether the lease surely runs at `now`.
    pub fn valid(&self, now: Instant) -> bool {
        self.ms(now) < self.valid_until.load(Ordering::Acquire)
    }

    /// Whether a room that last checked at generation `checked` may act at
    /// `now` without asking: no lapse since, and the lease runs (or the
    /// beats fail while this instance is awake: a database outage, not a stall).
    pub fn current(&self, checked: u64, now: Instant) -> bool {
        if checked != self.generation() {
            return false;
        }
        if self.valid(now) {
            return true;
        }
        self.failing.load(Ordering::Acquire)
            && self.ms(now).saturating_sub(self.tried.load(Ordering::Acquire)) < AWAKE.as_millis() as u64
    }

    /// The beats' thread is about to try a beat, at `now`.
    pub fn trying(&self, now: Instant) {
        self.tried.store(self.ms(now), Ordering::Release);
    }

    /// A beat sent at `sent` reached the database: the lease runs a
    /// [`LEASE`] from then. If it had lapsed meanwhile, a new generation
    /// begins. Returns whether it had.
    pub fn renewed(&self, sent: Instant) -> bool {
        let sent_ms = self.ms(sent);
        let lapsed = sent_ms >= self.valid_until.load(Ordering::Acquire);
        if lapsed {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        self.valid_until.fetch_max(self.ms(sent + LEASE - MARGIN), Ordering::AcqRel);
        self.failing.store(false, Ordering::Release);
        lapsed
    }

    /// A beat failed.
    pub fn failed(&self) {
        self.failing.store(true, Ordering::Release);
    }

    /// Hands the fence the way to the leases' thread, which answers
    /// [`Fence::check`].
    pub fn answered_by(&self, leases: Answerer) {
        let _ = self.leases.set(leases);
    }

    /// Asks whether `game` is still this instance's. Answered once the lease
    /// is renewed and the database was asked; `Lost` if nobody can answer
    /// (the instance stops).
    pub fn check(&self, game: std::sync::Arc<str>) -> oneshot::Receiver<Verdict> {
        let (answer, verdict) = oneshot::channel();
        let check = Check { game, answer };
        match self.leases.get() {
            Some(leases) => {
                if let Err(check) = leases(check) {
                    let _ = check.answer.send(Verdict::Lost);
                }
            }
            None => {
                // No leases' thread (not a cluster): nothing can adopt.
                let _ = check.answer.send(Verdict::Held(self.generation()));
            }
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_runs_from_each_beat_and_a_lapse_starts_a_generation() {
        let t0 = Instant::now();
        let f = Fence::new(t0);
        let end = t0 + LEASE - MARGIN;
        assert!(f.current(0, end - Duration::from_millis(1)));
        assert!(!f.current(0, end), "past the lease, less the margin");
        // Beats every half second keep it running.
        assert!(!f.renewed(t0 + Duration::from_millis(500)));
        assert!(f.current(0, end + Duration::from_millis(499)));
        // Stalled past the lease: nothing is current until a beat reaches the
        // database, and then the generation is new.
        let woke = t0 + Duration::from_secs(12);
        assert!(!f.current(0, woke));
        assert!(f.renewed(woke));
        assert_eq!(f.generation(), 1);
        assert!(!f.current(0, woke), "a room that checked before the lapse checks again");
        assert!(f.current(1, woke + Duration::from_secs(1)));
    }

    #[test]
    fn beats_that_fail_while_awake_do_not_stop_the_games_but_a_stall_does() {
        let t0 = Instant::now();
        let f = Fence::new(t0);
        let later = t0 + Duration::from_secs(6);
        f.trying(later - Duration::from_secs(1));
        f.failed();
        assert!(f.current(0, later), "the database is down, and this instance awake");
        assert!(!f.current(0, later + AWAKE), "no beat tried for longer than an attempt lasts: a stall");
        // The database back: the lapse is checked like a stall's.
        assert!(f.renewed(later + AWAKE));
        assert!(!f.current(0, later + AWAKE));
    }
}
