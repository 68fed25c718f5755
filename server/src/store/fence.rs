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

/// How often the pulse says the process runs.
pub const PULSE: Duration = Duration::from_millis(100);

/// A pulse this late says the process did not run meanwhile (it was
/// stopped, paused or starved): a stall, not a database outage.
const STALL: Duration = Duration::from_secs(1);

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
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub struct Check {
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
    /// Milliseconds since `base` of the last pulse (see [`Fence::pulse`]).
    pulsed: AtomicU64,
    /// The process stalled since the lease was last renewed.
    stalled: AtomicBool,
    /// Milliseconds since `base` of the pulse that found the last stall:
    /// only a beat sent after it vouches for the time since.
    stalled_at: AtomicU64,
    /// Told each generation: rooms that wait for nothing check their game
    /// too after a lapse, not only when something reaches them.
    lapses: tokio::sync::watch::Sender<u64>,
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
            pulsed: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
            stalled_at: AtomicU64::new(0),
            lapses: tokio::sync::watch::Sender::new(0),
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
    /// beats fail while the process has run throughout: a database outage,
    /// which stops every instance's adoptions too, not a stall).
    pub fn current(&self, checked: u64, now: Instant) -> bool {
        // The lease is read before the generation: a renewal after a lapse
        // bumps the generation before it extends the lease, so a room that
        // sees the extended lease sees the new generation too, and asks.
        let valid = self.valid(now);
        if checked != self.generation() {
            return false;
        }
        if valid {
            return true;
        }
        self.failing.load(Ordering::Acquire)
            && !self.stalled.load(Ordering::Acquire)
            && self.ms(now).saturating_sub(self.pulsed.load(Ordering::Acquire)) < STALL.as_millis() as u64
    }

    /// The process runs at `now` (a thread of its own says so every
    /// [`PULSE`]): a pulse much later than the last one marks a stall,
    /// which only a renewal of the lease clears.
    pub fn pulse(&self, now: Instant) {
        let now = self.ms(now);
        let last = self.pulsed.swap(now, Ordering::AcqRel);
        if now.saturating_sub(last) >= STALL.as_millis() as u64 {
            self.stalled_at.store(now, Ordering::Release);
            self.stalled.store(true, Ordering::Release);
        }
    }

    /// Told the generation after each lapse that ended with a renewal.
    pub fn lapses(&self) -> tokio::sync::watch::Receiver<u64> {
        self.lapses.subscribe()
    }

    /// A beat sent at `sent` reached the database: the lease runs a
    /// [`LEASE`] from then. If it had lapsed meanwhile, a new generation
    /// begins. Returns whether it had. A stall is cleared only by a beat
    /// sent after it was noticed.
    pub fn renewed(&self, sent: Instant) -> bool {
        let sent_ms = self.ms(sent);
        let lapsed = sent_ms >= self.valid_until.load(Ordering::Acquire);
        // The new generation first (see `current`): extended before it, the
        // lease would let a room that checked before the lapse act on a
        // game another instance adopted meanwhile, in the moment between.
        let generation = if lapsed { Some(self.generation.fetch_add(1, Ordering::AcqRel) + 1) } else { None };
        self.valid_until.fetch_max(self.ms(sent + LEASE - MARGIN), Ordering::AcqRel);
        self.failing.store(false, Ordering::Release);
        // A beat sent before the stall was noticed (its answer read only
        // after the process woke) says nothing of the time stalled.
        if sent_ms >= self.stalled_at.load(Ordering::Acquire) {
            self.stalled.store(false, Ordering::Release);
        }
        if let Some(generation) = generation {
            self.lapses.send_replace(generation);
        }
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
        let mut now = t0;
        // The database stops answering; the process runs on, pulse by pulse.
        while now < t0 + Duration::from_secs(6) {
            f.pulse(now);
            now += PULSE;
        }
        f.failed();
        f.pulse(now);
        assert!(f.current(0, now), "the database is down, and this instance awake");
        // Then the process is stopped for 9 s: on waking, a room that runs
        // before the pulse does sees it stale, and after it, the stall.
        let woke = now + Duration::from_secs(9);
        assert!(!f.current(0, woke));
        f.pulse(woke);
        assert!(!f.current(0, woke), "a stall is not an outage, even while beats fail");
        f.failed();
        f.pulse(woke + PULSE);
        assert!(!f.current(0, woke + PULSE), "only a renewal clears it");
        // The database back: the lapse is checked like a stall's, and told.
        let mut lapses = f.lapses();
        assert!(f.renewed(woke + PULSE));
        assert!(lapses.has_changed().expect("open"));
        assert_eq!(*lapses.borrow_and_update(), 1);
        assert!(!f.current(0, woke + PULSE));
        assert!(f.current(1, woke + PULSE));
    }

    #[test]
    fn a_beat_sent_before_a_stall_and_answered_after_it_does_not_clear_it() {
        let t0 = Instant::now();
        let f = Fence::new(t0);
        let mut now = t0;
        while now < t0 + Duration::from_secs(2) {
            f.pulse(now);
            now += PULSE;
        }
        // A beat goes out, and the process is stopped before its answer is read.
        let sent = now;
        let woke = now + Duration::from_secs(6);
        f.pulse(woke);
        // Its answer, read on waking: the lease it gave ran out while stopped.
        assert!(!f.renewed(sent), "no lapse as that beat saw it");
        assert!(!f.current(0, woke));
        // The next beat fails (another instance took the games and the
        // database cut this one off): that is no outage seen awake.
        f.failed();
        f.pulse(woke + PULSE);
        assert!(!f.current(0, woke + PULSE), "the stall stands until a beat sent after it");
        assert!(f.renewed(woke + PULSE));
        assert!(f.current(1, woke + PULSE));
    }
}
