//! The house bot's thinking for a room task: its strategy kept between moves
//! (the perfect player's tables), and the search under way on tokio's
//! blocking pool, never on a room's task or the runtime's threads.
//!
//! Searches run on a bounded pool ([`Searches`], all cores but one by
//! default), which players take turns at, fairly: the next place goes to
//! the waiting player who has had the least search time, and a search that
//! others wait for runs only its share of the time. Whoever opens many
//! house games on big boards gets a turn per game like anyone else, and a
//! player whose searches are short (3×3) goes ahead of those who have had
//! more. A move is due `--house-think-ms` after it was asked for, waiting
//! for a turn included: a search stops a little before that, and a move
//! that got no turn (or whose search ran late) is made without a search
//! (the room's quick move), so the house always moves in time however many
//! games want it. A search whose move nobody wants any more (its game
//! ended, was left, its room closed, the server stopped) is cancelled: the
//! strategy notices its flag at its next node.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use metrics::counter;
use tokio::sync::oneshot;
use tokio::task::JoinError;

use tictactoe_bots::{Stop, Strategy};
use tictactoe_protocol::{Game, HouseLevel};

use crate::core::account::AccountId;
use crate::core::ids::ConnId;

/// Who the house is thinking for, so that searches take turns per player:
/// an account (all of its connections together) or a guest's connection.
/// Never a guest's name, which anyone may take to share another's turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Asker {
    /// A signed-in player.
    Account(AccountId),
    /// A guest, by its connection.
    Conn(ConnId),
}

/// How many house searches may run at once, server-wide, and whose turn is
/// next: of the players waiting, the one who has had the least search time
/// (players who had the same take turns, round robin), each its oldest
/// search first. A player whose searches are short (3×3) is served before
/// one who fills every turn (100×100), however many games the latter opens.
#[derive(Debug, Clone)]
pub struct Searches(Arc<Pool>);

#[derive(Debug)]
struct Pool {
    turns: Mutex<Turns>,
}

/// The pool's state. An asker is in `ring` exactly when it has an entry in
/// `waiting`; entries whose search gave up waiting are skipped.
#[derive(Debug, Default)]
struct Turns {
    /// Places no search holds.
    free: usize,
    /// Askers with searches waiting, in order of their last turn.
    ring: VecDeque<Asker>,
    /// Each asker's waiting searches, oldest first.
    waiting: HashMap<Asker, VecDeque<oneshot::Sender<SearchPermit>>>,
    /// The search time each asker has had (counted from `floor`: less
    /// counts as `floor`).
    used: HashMap<Asker, Duration>,
    /// The time had by the asker served last: where a newcomer starts, so
    /// that nobody saves up turns by staying away.
    floor: Duration,
}

impl Turns {
    fn used(&self, asker: &Asker) -> Duration {
        self.used.get(asker).map_or(self.floor, |&u| u.max(self.floor))
    }

    /// The asker whose turn is next: least time had, the first in the ring
    /// of those who had the same. Taken out of the ring. A scan of those
    /// waiting (one per house game at most), once per turn: cheap beside a
    /// turn's search.
    fn next(&mut self) -> Option<Asker> {
        let (i, _) = self.ring.iter().enumerate().min_by_key(|&(i, a)| (self.used(a), i))?;
        let asker = self.ring.remove(i)?;
        self.floor = self.used(&asker);
        // Askers at the floor count as new: forgetting them bounds the table.
        if self.used.len() > 4 * self.ring.len() + 256 {
            let floor = self.floor;
            self.used.retain(|_, u| *u > floor);
        }
        Some(asker)
    }
}

/// A place in the pool, held by a running search; dropped, its time is
/// counted to its asker and it goes to the next asker in turn.
#[derive(Debug)]
struct SearchPermit {
    pool: Option<Arc<Pool>>,
    asker: Asker,
    since: Instant,
    /// Askers still waiting when it was had: the search gets a slice of
    /// the budget shared with them.
    others: usize,
}

impl Drop for SearchPermit {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            Pool::release(pool, self.asker, self.since.elapsed());
        }
    }
}

/// A place asked for: had at once, or to wait for.
enum PermitWait {
    Now(SearchPermit),
    Later(oneshot::Receiver<SearchPermit>),
}

impl Pool {
    fn turns(&self) -> std::sync::MutexGuard<'_, Turns> {
        // Nothing panics while holding the lock; a poisoned one is still consistent.
        self.turns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `asker`'s search held a place for `held`: it counts to the asker,
    /// and the place goes to the next asker in turn that still waits, else
    /// it stays free.
    fn release(pool: Arc<Pool>, asker: Asker, held: Duration) {
        let mut turns = pool.turns();
        let had = turns.used(&asker) + held;
        turns.used.insert(asker, had);
        while let Some(asker) = turns.next() {
            let Some(queue) = turns.waiting.get_mut(&asker) else { continue };
            while queue.front().is_some_and(oneshot::Sender::is_closed) {
                queue.pop_front();
            }
            let next = queue.pop_front();
            if queue.is_empty() {
                turns.waiting.remove(&asker);
            } else {
                // Its other searches wait for its next turn, behind everyone else.
                turns.ring.push_back(asker);
            }
            let Some(next) = next else { continue };
            let others = turns.ring.len();
            let slot = SearchPermit { pool: Some(pool.clone()), asker, since: Instant::now(), others };
            match next.send(slot) {
                Ok(()) => return,
                // It gave up just now: the place must not be released twice.
                Err(mut slot) => slot.pool = None,
            }
        }
        turns.free += 1;
    }
}

impl Searches {
    /// Room for `n` searches at once (at least one).
    pub fn new(n: usize) -> Searches {
        let turns = Turns { free: n.max(1), ..Turns::default() };
        Searches(Arc::new(Pool { turns: Mutex::new(turns) }))
    }

    /// All cores this process may run on but one (at least one), so that
    /// the async workers always have a core to answer players on.
    pub fn per_core() -> Searches {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Searches::new(cores.saturating_sub(1))
    }

    /// A place for a search of `asker`'s: at once if one is free (then
    /// nobody waits), else in `asker`'s turn.
    fn ask(&self, asker: Asker) -> PermitWait {
        let mut turns = self.0.turns();
        if turns.free > 0 {
            turns.free -= 1;
            let pool = Some(self.0.clone());
            return PermitWait::Now(SearchPermit { pool, asker, since: Instant::now(), others: 0 });
        }
        let (tx, rx) = oneshot::channel();
        let turns = &mut *turns;
        let queue = turns.waiting.entry(asker).or_insert_with(|| {
            turns.ring.push_back(asker);
            VecDeque::new()
        });
        // Searches that gave up are dropped here too, so that a queue holds
        // at most its asker's live searches.
        queue.retain(|tx| !tx.is_closed());
        queue.push_back(tx);
        PermitWait::Later(rx)
    }
}

/// How a search ended.
enum SearchEnd {
    /// It ran: the strategy back (its tables kept for the next move), and
    /// its choice (`None` if it failed).
    Ran(Box<dyn Strategy>, Option<(usize, usize)>),
    /// No place in the pool came in time.
    NoTurn,
    /// It ran past the move's due time; it is cancelled, its answer unwanted.
    Late,
    /// It panicked.
    Failed(JoinError),
}

/// A search under way.
type Search = Pin<Box<dyn Future<Output = SearchEnd> + Send>>;

/// A search asked for: the move it is for, and how to stop it.
struct Pending {
    level: HouseLevel,
    seq: usize,
    stop: Stop,
    search: Search,
}

/// One room's house: its strategy between moves and its search under way.
/// Dropped (its room closed), it cancels the search.
#[derive(Default)]
pub struct Thinker {
    strategy: Option<(HouseLevel, Box<dyn Strategy>)>,
    pending: Option<Pending>,
}

/// The time a search leaves itself before the move is due: for the
/// heuristic it falls back on when it does not finish, and for the answer
/// to reach the room.
fn reserve(budget: Duration) -> Duration {
    (budget / 10).min(Duration::from_millis(50))
}

/// How long a search runs when `others` askers wait for a place (`None`:
/// nobody waits, the whole budget): the budget shared among them all, so
/// that each gets a turn within one move's time, between 2 ms (a 3×3
/// search after the first move takes under 1 ms unoptimized) and 50 ms
/// (what a player served next may wait).
fn slice(budget: Duration, others: usize) -> Option<Duration> {
    let share = (budget - reserve(budget)) / u32::try_from(others + 1).unwrap_or(u32::MAX);
    let longest = (budget / 10).min(Duration::from_millis(50));
    (others > 0).then(|| share.clamp(Duration::from_millis(2).min(longest), longest))
}

impl Thinker {
    /// Starts choosing move `seq` of `game` at `level` for `asker`, due
    /// `budget` from now, waiting for a turn in `searches` included. A
    /// search still under way is cancelled.
    pub fn start(
        &mut self,
        seq: usize,
        game: Box<Game>,
        level: HouseLevel,
        asker: Asker,
        budget: Duration,
        searches: &Searches,
    ) {
        self.cancel();
        let strategy = match self.strategy.take() {
            Some((l, s)) if l == level => Some(s),
            _ => tictactoe_bots::by_name(level.name()),
        };
        let Some(mut strategy) = strategy else { return };
        let due = Instant::now() + budget;
        let stop = Stop::at(due - reserve(budget));
        let ask = searches.ask(asker);
        let held = stop.clone();
        let search = async move {
            let slot = match ask {
                PermitWait::Now(slot) => slot,
                PermitWait::Later(turn) => {
                    let until = tokio::time::Instant::from_std(stop.deadline());
                    match tokio::time::timeout_at(until, turn).await {
                        Ok(Ok(slot)) => slot,
                        // Dropping `turn` gives up the place in the queue.
                        _ => return SearchEnd::NoTurn,
                    }
                }
            };
            let cancel = stop.clone();
            let stop = match slice(budget, slot.others) {
                Some(slice) => stop.by(Instant::now() + slice),
                None => stop,
            };
            let run = tokio::task::spawn_blocking(move || {
                // The place goes with the search: held until it returns,
                // even if the room stops waiting for it.
                let _slot = slot;
                let cell = strategy.choose_until(&game, &stop).ok();
                (strategy, cell)
            });
            match tokio::time::timeout_at(tokio::time::Instant::from_std(due), run).await {
                Ok(Ok((strategy, cell))) => SearchEnd::Ran(strategy, cell),
                Ok(Err(e)) => SearchEnd::Failed(e),
                Err(_) => {
                    cancel.cancel();
                    SearchEnd::Late
                }
            }
        };
        self.pending = Some(Pending { level, seq, stop: held, search: Box::pin(search) });
    }

    /// The move number of the search under way, if any.
    pub fn asked(&self) -> Option<usize> {
        self.pending.as_ref().map(|p| p.seq)
    }

    /// Stops the search under way, if any: its move is no longer wanted.
    pub fn cancel(&mut self) {
        if let Some(pending) = self.pending.take() {
            pending.stop.cancel();
        }
    }

    /// Waits for the search under way (forever when there is none); its
    /// result goes to [`Thinker::finished`].
    pub async fn wait(&mut self) -> Thought {
        match self.pending.as_mut() {
            Some(pending) => Thought((&mut pending.search).await),
            None => std::future::pending().await,
        }
    }

    /// The search under way finished: the move number and the choice
    /// (`None` when there is none: no turn or no answer in time, or the
    /// strategy failed; the room then makes a quick move).
    pub fn finished(&mut self, thought: Thought) -> Option<(usize, Option<(usize, usize)>)> {
        let Pending { level, seq, .. } = self.pending.take()?;
        let (how, cell) = match thought.0 {
            SearchEnd::Ran(strategy, cell) => {
                self.strategy = Some((level, strategy));
                ("done", cell)
            }
            SearchEnd::NoTurn => ("no_turn", None),
            SearchEnd::Late => ("late", None),
            SearchEnd::Failed(e) => {
                tracing::error!("the house's search failed: {e}");
                ("failed", None)
            }
        };
        counter!("ttt_house_moves_total", "search" => how).increment(1);
        Some((seq, cell))
    }
}

impl Drop for Thinker {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// What a search came to, for [`Thinker::finished`].
pub struct Thought(SearchEnd);

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10×10 board: the exact search never finishes, so it takes its whole budget.
    fn big() -> Box<Game> {
        let mut game = Game::new(10).expect("10x10");
        let _ = game.play(4, 4);
        Box::new(game)
    }

    const A: Asker = Asker::Conn(ConnId::new(0, 1));
    const B: Asker = Asker::Conn(ConnId::new(0, 2));

    fn had(ask: PermitWait) -> SearchPermit {
        match ask {
            PermitWait::Now(slot) => slot,
            PermitWait::Later(_) => panic!("no place free"),
        }
    }

    fn waits(ask: PermitWait) -> oneshot::Receiver<SearchPermit> {
        match ask {
            PermitWait::Now(_) => panic!("a place was free"),
            PermitWait::Later(rx) => rx,
        }
    }

    #[test]
    fn the_next_turn_is_the_least_served_askers_and_equals_take_turns() {
        let mut turns = Turns::default();
        let c = Asker::Account(7);
        turns.ring.extend([A, B, c]);
        turns.used.insert(A, Duration::from_millis(30));
        turns.used.insert(B, Duration::from_millis(10));
        // C is new: it starts at the floor (0 here), so it goes first; then B.
        assert_eq!(turns.next(), Some(c));
        assert_eq!(turns.next(), Some(B));
        assert_eq!(turns.floor, Duration::from_millis(10));
        // A newcomer now starts at B's 10 ms: no turns saved up by staying away.
        turns.ring.extend([Asker::Conn(ConnId::new(0, 9)), A]);
        assert_eq!(turns.used(&Asker::Conn(ConnId::new(0, 9))), Duration::from_millis(10));
        // Equals take turns in ring order.
        turns.ring.clear();
        turns.used.clear();
        turns.ring.extend([B, A]);
        assert_eq!((turns.next(), turns.next(), turns.next()), (Some(B), Some(A), None));
    }

    #[test]
    fn a_slice_shares_the_budget_among_those_waiting() {
        let ms = Duration::from_millis;
        assert_eq!(slice(ms(500), 0), None);
        assert_eq!(slice(ms(500), 1), Some(ms(50)));
        assert_eq!(slice(ms(500), 20), Some(ms(450) / 21));
        assert_eq!(slice(ms(500), 10_000), Some(ms(2)));
        assert_eq!(slice(ms(10), 3), Some(ms(1)));
        assert_eq!(slice(Duration::ZERO, 3), Some(Duration::ZERO));
    }

    #[test]
    fn a_place_goes_to_whoever_had_least_and_skips_searches_that_gave_up() {
        let searches = Searches::new(1);
        let running = had(searches.ask(A));
        // A asks three times more, then B once; A's second gives up.
        let mut a: Vec<_> = (0..3).map(|_| waits(searches.ask(A))).collect();
        let mut b = waits(searches.ask(B));
        drop(a.remove(1));
        // A's first search held the place 30 ms: B, who had none, is next.
        std::thread::sleep(Duration::from_millis(30));
        drop(running);
        let held = b.try_recv().expect("B's turn");
        assert_eq!(held.others, 1, "A waited: B's search gets a slice");
        assert!(a.iter_mut().all(|rx| rx.try_recv().is_err()));
        // Then A's, oldest first, the one that gave up skipped.
        drop(held);
        let held = a[0].try_recv().expect("A's first waiting search");
        drop(held);
        let held = a[1].try_recv().expect("A's last search");
        assert_eq!(held.others, 0, "nobody else waited");
        drop(held);
        // Nobody waits: the place is free again, and only one.
        let again = had(searches.ask(B));
        drop(waits(searches.ask(A)));
        drop(again);
        drop(had(searches.ask(A)));
    }

    #[tokio::test]
    async fn a_move_without_a_turn_is_due_in_time_and_a_cancelled_search_frees_its_place() {
        let searches = Searches::new(1);
        let budget = Duration::from_millis(300);
        let (mut a, mut b) = (Thinker::default(), Thinker::default());
        a.start(2, big(), HouseLevel::Perfect, A, Duration::from_secs(60), &searches);
        b.start(2, big(), HouseLevel::Perfect, B, budget, &searches);
        // A's search holds the only place for a minute: B gets no turn, and
        // no move: its budget ran out (nothing else ends a wait without one).
        let thought = b.wait().await;
        assert_eq!(b.finished(thought), Some((2, None)));
        // A's game ends: its search stops, and the place is B's again soon
        // enough for B to search within its budget (else B gets no move).
        a.cancel();
        assert_eq!(a.asked(), None);
        b.start(4, big(), HouseLevel::Perfect, B, budget, &searches);
        let thought = b.wait().await;
        let (seq, cell) = b.finished(thought).expect("a search was under way");
        let (r, c) = cell.expect("a searched move");
        assert_eq!(seq, 4);
        assert!(r < 10 && c < 10 && (r, c) != (4, 4));
    }

    #[tokio::test]
    async fn searches_take_turns_and_waiting_counts_against_the_budget() {
        let searches = Searches::new(1);
        let (long, short) = (Duration::from_millis(300), Duration::from_millis(150));
        let (mut a, mut b) = (Thinker::default(), Thinker::default());
        let begun = Instant::now();
        a.start(2, big(), HouseLevel::Perfect, A, long, &searches);
        b.start(2, big(), HouseLevel::Perfect, B, short, &searches);
        let ((ra, took_a), (rb, took_b)) = tokio::join!(async { (a.wait().await, begun.elapsed()) }, async {
            (b.wait().await, begun.elapsed())
        });
        let (_, cell) = a.finished(ra).expect("a search was under way");
        let (r, c) = cell.expect("the first search's move");
        assert!(r < 10 && c < 10 && (r, c) != (4, 4));
        assert!(took_a < long + Duration::from_millis(150), "{took_a:?}");
        // The second had no turn before its move was due: no move of its
        // own (the room makes a quick one), and no fresh budget after waiting.
        assert_eq!(b.finished(rb), Some((2, None)));
        assert!(took_b < short + Duration::from_millis(100), "{took_b:?}");
        assert!(a.asked().is_none() && b.asked().is_none());
    }
}
