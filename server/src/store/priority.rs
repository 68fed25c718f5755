//! The writer's place on the CPU. The writer runs at idle priority (Linux's
//! `SCHED_IDLE`): it takes a core only while no connection has anything to
//! do, so that its commits — a few hundred microseconds of SQLite, the log's
//! pages and a sync, every few milliseconds — never stand between a move and
//! its `moved`. A server too busy to leave it any time would hold records
//! and moves past their window, so the runtime looks at the writer every
//! [`LOOK`]: once a commit is [`LATE`] past its due time, a commit under way
//! has taken that long, or jobs have waited that long without the writer
//! taking any, it is lifted to normal priority until it is on time again,
//! then goes back to idle.
//!
//! Leaving `SCHED_IDLE` takes `CAP_SYS_NICE` or an `RLIMIT_NICE` of 20 (root
//! has both): a process that could not lift its writer again keeps it at
//! normal priority all along, as it says at start.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use thread_priority::ThreadPriority;
use thread_priority::unix::{
    NormalThreadSchedulePolicy, ThreadId, ThreadSchedulePolicy, set_thread_priority_and_policy,
    thread_native_id,
};

use super::StoreStats;

/// How often the runtime looks whether the writer is starved.
pub const LOOK: Duration = Duration::from_millis(5);

/// How late a commit may be before its writer is lifted: with the writer's
/// own holds (5–20 ms for a record, 30 ms for a move) and a look's period,
/// well inside the 100 ms a crash may lose.
pub const LATE: Duration = Duration::from_millis(5);

/// `due` when nothing is held.
const NONE: u64 = u64::MAX;

/// What the writer says of itself, and its thread's policy.
#[derive(Debug)]
pub struct Priority {
    /// The origin of `due`.
    base: Instant,
    /// When the writer's held writes are due, microseconds after `base`.
    due: AtomicU64,
    /// Times the writer has taken jobs off its queue.
    rounds: AtomicU64,
    /// Times the writer was lifted to normal priority.
    pub lifts: AtomicU64,
    /// The writer's thread, if it runs at idle priority when it can, and
    /// whether it does now.
    writer: Mutex<Option<(ThreadId, bool)>>,
}

impl Default for Priority {
    fn default() -> Priority {
        Priority {
            base: Instant::now(),
            due: AtomicU64::new(NONE),
            rounds: AtomicU64::new(0),
            lifts: AtomicU64::new(0),
            writer: Mutex::new(None),
        }
    }
}

/// Sets thread `id`'s policy (its nice value stays 0); whether it could.
fn set(id: ThreadId, policy: NormalThreadSchedulePolicy) -> bool {
    let nice = ThreadPriority::Os(Default::default());
    set_thread_priority_and_policy(id, nice, ThreadSchedulePolicy::Normal(policy)).is_ok()
}

/// Whether this process may put a thread at idle priority and lift it again
/// (tried on a thread of its own, which ends with the answer).
fn may_lift() -> bool {
    std::thread::spawn(|| {
        let me = thread_native_id();
        set(me, NormalThreadSchedulePolicy::Idle) && set(me, NormalThreadSchedulePolicy::Other)
    })
    .join()
    .unwrap_or(false)
}

impl Priority {
    /// Called on the writer's thread as it starts: it goes to idle priority
    /// if it may be lifted again, and says which it is.
    pub(super) fn enter(&self) {
        if !may_lift() {
            tracing::info!(
                "the store's writer runs at normal priority: this process may not lift a thread \
                 from idle priority (CAP_SYS_NICE or `ulimit -e 20` lets it, and moves wait less \
                 behind commits)"
            );
            return;
        }
        let me = thread_native_id();
        let idle = set(me, NormalThreadSchedulePolicy::Idle);
        *self.lock() = Some((me, idle));
    }

    /// Called on the writer's thread as it ends: nobody may touch it after.
    pub(super) fn leave(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(ThreadId, bool)>> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The writer has taken its jobs (and committed, if it was time): what
    /// it holds now is due at `due`. A lifted writer that is not late any
    /// more goes back to idle priority.
    pub(super) fn round(&self, due: Option<Instant>) {
        let at = due.map_or(NONE, |d| self.micros(d));
        self.due.store(at, Ordering::Relaxed);
        self.rounds.fetch_add(1, Ordering::Relaxed);
        let late = due.is_some_and(|d| d + LATE <= Instant::now());
        let mut writer = self.lock();
        if let Some((me, idle @ false)) = writer.as_mut()
            && !late
        {
            *idle = set(*me, NormalThreadSchedulePolicy::Idle);
        }
    }

    /// Lifts the writer to normal priority, if it is idle.
    fn lift(&self) {
        let mut writer = self.lock();
        if let Some((id, idle @ true)) = writer.as_mut()
            && set(*id, NormalThreadSchedulePolicy::Other)
        {
            *idle = false;
            self.lifts.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether the writer runs at idle priority now.
    pub fn idle(&self) -> bool {
        matches!(*self.lock(), Some((_, true)))
    }

    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_micros()).unwrap_or(NONE - 1)
    }

    /// Looks at the writer every [`LOOK`] until `stop` completes, lifting it
    /// when it is starved (a writer that runs at normal priority is never
    /// idle, and never lifted); lifts it for good at the end (a stop's last
    /// writes must not wait for an idle core).
    pub async fn watch(&self, stats: &StoreStats, stop: impl std::future::Future<Output = ()>) {
        let mut every = tokio::time::interval(LOOK);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut starved = Starved::default();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = every.tick() => {
                    let now = self.micros(Instant::now());
                    let rounds = self.rounds.load(Ordering::Relaxed);
                    let waiting = stats.queued.load(Ordering::Relaxed) > 0;
                    let slow = stats.busy_for().is_some_and(|t| t >= LATE);
                    if (slow || starved.late(now, self.due.load(Ordering::Relaxed), rounds, waiting)) && self.idle() {
                        self.lift();
                    }
                }
            }
        }
        self.lift();
    }
}

/// What the looks remember between them: whether jobs wait that the writer
/// has not taken, and since when.
#[derive(Debug, Default)]
struct Starved {
    rounds: u64,
    /// When jobs were first seen waiting with no round of the writer since.
    since: Option<u64>,
}

impl Starved {
    /// At `now` (µs), with what is held due at `due`, the writer's `rounds`
    /// so far and whether jobs wait: whether the writer is late.
    fn late(&mut self, now: u64, due: u64, rounds: u64, waiting: bool) -> bool {
        if rounds != self.rounds || !waiting {
            self.rounds = rounds;
            self.since = None;
        } else if self.since.is_none() {
            self.since = Some(now);
        }
        let late = LATE.as_micros() as u64;
        let held_late = due != NONE && now >= due.saturating_add(late);
        let jobs_late = self.since.is_some_and(|since| now >= since + late);
        held_late || jobs_late
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1000;

    #[test]
    fn a_writer_is_late_once_its_commit_is_overdue_or_its_jobs_wait_untaken() {
        let mut s = Starved::default();
        // Held writes due at 10 ms: on time until 15 ms.
        assert!(!s.late(12 * MS, 10 * MS, 1, false));
        assert!(s.late(15 * MS, 10 * MS, 1, false));
        // Nothing held, jobs waiting: the writer takes them in time.
        let mut s = Starved::default();
        assert!(!s.late(20 * MS, NONE, 1, true));
        assert!(!s.late(24 * MS, NONE, 2, true), "it took some");
        assert!(!s.late(26 * MS, NONE, 2, true), "no round since: waiting from here");
        assert!(!s.late(30 * MS, NONE, 2, true));
        assert!(s.late(31 * MS, NONE, 2, true), "5 ms with no round");
        assert!(!s.late(32 * MS, NONE, 3, true), "a round: not late any more");
        assert!(!s.late(40 * MS, NONE, 3, false), "nothing waits");
        assert!(!s.late(50 * MS, NONE, 3, true));
    }

    #[test]
    fn an_idle_writer_is_lifted_when_late_and_goes_back_once_it_is_not() {
        let p = std::sync::Arc::new(Priority::default());
        let (done, end) = std::sync::mpsc::channel::<()>();
        let (entered, wait) = std::sync::mpsc::channel();
        let writer = {
            let p = p.clone();
            std::thread::spawn(move || {
                p.enter();
                entered.send(()).expect("test");
                let _ = end.recv();
                p.leave();
            })
        };
        wait.recv().expect("entered");
        if may_lift() {
            assert!(p.idle());
            p.lift();
            assert!(!p.idle());
            p.round(Some(Instant::now() - LATE - LATE));
            assert!(!p.idle(), "still late: it stays lifted");
            p.round(None);
            assert!(p.idle(), "nothing due: idle again");
        } else {
            assert!(!p.idle(), "a writer that could not be lifted stays at normal priority");
        }
        done.send(()).expect("writer");
        writer.join().expect("writer");
        p.lift();
        assert!(!p.idle(), "a writer that left is not touched");
    }
}
