//! The leases' thread: says every second that this instance is alive, and
//! adopts the games of instances that are not (they died, or stopped and
//! let their games go). An adopted game is opened the way a restart opens
//! one: as of its last saved move, both players away with a fresh grace,
//! the turn clock paused (it was while no instance held the game).
//!
//! Beats have a thread and a connection of their own: neither the writer's
//! backlog, a busy runtime nor a long adoption delays one past the lease.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tracing::{error, info, warn};

use crate::room::{Room, Settings};
use crate::store::fence::{Check, Fence, Verdict};
use crate::store::{LEASE, Leases, Store};

/// How often this instance says it is alive and looks for games to adopt:
/// adoption comes within [`LEASE`](crate::store::LEASE) and this of a death.
pub const LOOK: Duration = Duration::from_millis(500);

/// What the leases' thread is told.
#[derive(Debug)]
pub enum Wake {
    /// An instance stopped: look for its games now.
    Look,
    /// This instance is stopping: adopt nothing more, but go on saying it
    /// is alive until its games are written.
    Stop,
    /// Everything is written: let this instance's games go, and end.
    Release,
    /// Not everything could be written: end without letting them go (they
    /// are adopted when the lease runs out, as of what is written).
    Abandon,
    /// A room asks, after a lapse of the lease, whether its game is still
    /// this instance's (see [`Fence`]).
    Check(Check),
}

/// What an adoption opens rooms with, and where it hands them.
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub struct Adopter {
    /// The lobby's inbox of each look's adopted rooms.
    pub lobby: mpsc::Sender<Vec<Room>>,
    /// The store, whose writer learns that it holds the adopted games.
    pub store: Store,
    pub settings: Settings,
}

/// Starts the leases' thread. Returns the way to wake it, and the thread.
/// `redis` is told when this instance lets its games go.
/// `fence` is kept up to date with each beat, and its checks answered.
pub fn start(
    leases: Leases,
    adopter: Adopter,
    redis: String,
    fence: Arc<Fence>,
) -> std::io::Result<(Sender<Wake>, std::thread::JoinHandle<()>)> {
    let beater = leases.twin().map_err(|e| std::io::Error::other(e.0))?;
    let (keep_beating, until) = std::sync::mpsc::channel::<()>();
    let beat_fence = fence.clone();
    let beating = std::thread::Builder::new()
        .name("ttt-beats".into())
        .spawn(move || beats(beater, until, &beat_fence))?;
    let pulse = Arc::downgrade(&fence);
    std::thread::Builder::new().name("ttt-pulse".into()).spawn(move || {
        // Until the server lets go of its fence.
        while let Some(fence) = pulse.upgrade() {
            fence.pulse(Instant::now());
            drop(fence);
            std::thread::sleep(crate::store::fence::PULSE);
        }
    })?;
    let (tx, rx) = std::sync::mpsc::channel();
    let checks = std::sync::Mutex::new(tx.clone());
    fence.answered_by(Box::new(move |check| {
        let Ok(to) = checks.lock() else { return Err(check) };
        match to.send(Wake::Check(check)) {
            Err(std::sync::mpsc::SendError(Wake::Check(check))) => Err(check),
            _ => Ok(()),
        }
    }));
    let thread = std::thread::Builder::new()
        .name("ttt-leases".into())
        .spawn(move || run(leases, adopter, &redis, rx, (keep_beating, beating), &fence))?;
    Ok((tx, thread))
}

/// Says every look that this instance is alive, until `until` is dropped,
/// and tells `fence` how long the lease surely runs.
fn beats(mut leases: Leases, until: Receiver<()>, fence: &Fence) {
    let mut beating = true;
    loop {
        let sent = Instant::now();
        match leases.beat() {
            Ok(()) => {
                if fence.renewed(sent) {
                    warn!(
                        "this instance's lease had run out (it was stalled or cut off): its rooms check their games before acting"
                    );
                }
                if !beating {
                    beating = true;
                    info!("this instance's lease is renewed again");
                }
            }
            Err(e) => {
                fence.failed();
                if beating {
                    beating = false;
                    error!("this instance cannot renew its lease (another may adopt its games): {e}");
                }
            }
        }
        if let Err(RecvTimeoutError::Disconnected) = until.recv_timeout(LOOK) {
            return;
        }
    }
}

/// How soon checks that wait for the lease are looked at again.
const CHECK_AGAIN: Duration = Duration::from_millis(20);

/// Answers the rooms' `checks` once the lease runs again (a beat after the
/// lapse reached the database): the games another instance adopted or
/// recorded meanwhile are lost, the rest held as of this generation. Left
/// waiting while the lease has not been renewed or the database does not answer.
fn answer(leases: &mut Leases, fence: &Fence, checks: &mut Vec<Check>) {
    checks.retain(|c| !c.answer.is_closed());
    if checks.is_empty() || !fence.valid(Instant::now()) {
        return;
    }
    let generation = fence.generation();
    let games: Vec<Arc<str>> = checks.iter().map(|c| c.game.clone()).collect();
    let lost = match leases.lost(&games) {
        Ok(lost) => lost,
        Err(e) => {
            warn!("cannot tell which games are still this instance's: {e}");
            return;
        }
    };
    if !lost.is_empty() {
        warn!(games = ?lost, "another instance adopted or ended these games while this one was away: they are let go");
    }
    for c in checks.drain(..) {
        let verdict = match lost.iter().any(|l| **l == *c.game) {
            true => Verdict::Lost,
            false => Verdict::Held(generation),
        };
        let _ = c.answer.send(verdict);
    }
}

/// The beats' thread, and what keeps it going.
type Beats = (Sender<()>, std::thread::JoinHandle<()>);

fn run(mut leases: Leases, adopter: Adopter, redis: &str, wake: Receiver<Wake>, beats: Beats, fence: &Fence) {
    // Dropped at the stop: the store's writer ends once every handle on it is gone.
    let mut adopter = Some(adopter);
    // Since when the database has answered every look: see `adopt`.
    let mut steady = None;
    // Stopped before the games are let go: a beat after would say it holds them again.
    let stop_beating = move || {
        let (keep, thread) = beats;
        drop(keep);
        let _ = thread.join();
    };
    // Rooms' checks after a lapse, answered once the lease runs again.
    let mut checks: Vec<Check> = Vec::new();
    loop {
        if let Some(adopter) = &adopter {
            // Every look is told, adopted rooms or none: resumes wait for it.
            let rooms = adopt(&mut leases, adopter, &mut steady);
            if adopter.lobby.blocking_send(rooms).is_err() {
                warn!("adopted games could not be opened: the server is stopping");
            }
        }
        let next = Instant::now() + LOOK;
        loop {
            answer(&mut leases, fence, &mut checks);
            // Checks wait for a beat: looked at again soon.
            let until = match checks.is_empty() {
                true => next,
                false => next.min(Instant::now() + CHECK_AGAIN),
            };
            match wake.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(Wake::Check(check)) => checks.push(check),
                Err(RecvTimeoutError::Timeout) if Instant::now() < next => {}
                Ok(Wake::Look) if adopter.is_some() => break,
                Ok(Wake::Look) => {}
                Ok(Wake::Stop) => adopter = None,
                Ok(Wake::Release) | Err(RecvTimeoutError::Disconnected) => {
                    stop_beating();
                    release(&mut leases, redis);
                    return;
                }
                Ok(Wake::Abandon) => {
                    stop_beating();
                    return;
                }
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
    }
}

/// The leases' thread of a stopping instance.
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub struct Leaving {
    pub wake: Sender<Wake>,
    pub thread: std::thread::JoinHandle<()>,
}

impl Leaving {
    /// Lets this instance's games go if everything is `written` (else
    /// leaves them to its lease), and waits for the thread to end. Blocks:
    /// call it off the runtime.
    pub fn leave(self, written: bool) {
        let _ = self.wake.send(if written { Wake::Release } else { Wake::Abandon });
        let _ = self.thread.join();
    }
}

/// Adopts what there is to adopt: the rooms to open. Only once the
/// database has answered this instance's looks for longer than a lease and
/// two looks (`steady`): after an outage of the database every instance's
/// lease looks run out, and each must have had the time to renew its own
/// before another takes its games for a dead one's.
fn adopt(leases: &mut Leases, adopter: &Adopter, steady: &mut Option<Instant>) -> Vec<Room> {
    let started = Instant::now();
    let dead = match leases.dead() {
        Ok(dead) => dead,
        Err(e) => {
            if steady.take().is_some() {
                warn!("looking for games to adopt failed: {e}");
            }
            return Vec::new();
        }
    };
    let since = *steady.get_or_insert(started);
    if dead.is_empty() || started.duration_since(since) < LEASE + 2 * LOOK {
        return Vec::new();
    }
    let adopted = match leases.adopt(dead) {
        Ok(Some(adopted)) => adopted,
        Ok(None) => return Vec::new(),
        Err(e) => {
            warn!("looking for games to adopt failed: {e}");
            return Vec::new();
        }
    };
    let standings: HashMap<_, _> =
        adopted.restored.standings.iter().map(|(a, r, s)| ((*a, *r), *s)).collect();
    let saved = adopted.restored.games.len();
    let rooms = crate::restore(adopted.restored.games, &standings, &adopter.settings);
    adopter.store.adopted(rooms.iter().map(|r| r.code().clone()).collect(), adopted.restored.standings);
    let took = started.elapsed();
    ::metrics::counter!("ttt_adoptions_total").increment(1);
    ::metrics::counter!("ttt_games_adopted_total").increment(rooms.len() as u64);
    ::metrics::histogram!("ttt_adoption_seconds").record(took.as_secs_f64());
    info!(
        games = rooms.len(),
        of = saved,
        from = ?adopted.from,
        took_ms = took.as_millis() as u64,
        "adopted the games of instances that are gone"
    );
    rooms
}

/// Lets this instance's games go, and says so on the bus.
fn release(leases: &mut Leases, redis: &str) {
    match leases.release() {
        Ok(()) => {
            info!("this instance's games are let go: another instance adopts them");
            crate::cluster::bus::announce_release(redis, leases.owner());
        }
        Err(e) => {
            warn!("could not let this instance's games go (another adopts them when its lease ends): {e}")
        }
    }
}
