//! The house bot's thinking for a room task: its strategy kept between moves
//! (the perfect player's tables), and the search under way on tokio's
//! blocking pool, never on a room's task or the runtime's threads. Searches
//! take turns on a few cores ([`Searches`]); the deadline is set when the
//! move is asked for, so waiting for a turn eats into the search, and the
//! house still moves in time when many games want a move at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio::task::JoinError;

use tictactoe_bots::Strategy;
use tictactoe_protocol::{Game, HouseLevel};

/// What a search gives back: the strategy (its tables kept for the next
/// move) and the choice, if there was one.
type Thought = (Box<dyn Strategy>, Option<(usize, usize)>);

/// A search under way.
type Search = Pin<Box<dyn Future<Output = Result<Thought, JoinError>> + Send>>;

/// How many house searches may run at once, server-wide: all cores but one,
/// so that the async workers always have a core to answer players on.
#[derive(Debug, Clone)]
pub struct Searches(Arc<Semaphore>);

impl Searches {
    /// Room for `n` searches at once (at least one).
    pub fn new(n: usize) -> Searches {
        Searches(Arc::new(Semaphore::new(n.max(1))))
    }

    /// All cores this process may run on but one.
    pub fn per_core() -> Searches {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Searches::new(cores.saturating_sub(1))
    }
}

/// One room's house: its strategy between moves and its search under way.
#[derive(Default)]
pub struct Thinker {
    strategy: Option<(HouseLevel, Box<dyn Strategy>)>,
    pending: Option<(HouseLevel, usize, Search)>,
}

impl Thinker {
    /// Starts choosing move `seq` of `game` at `level`, to be done `budget`
    /// from now, when `searches` has room.
    pub fn start(
        &mut self,
        seq: usize,
        game: Box<Game>,
        level: HouseLevel,
        budget: Duration,
        searches: &Searches,
    ) {
        let strategy = match self.strategy.take() {
            Some((l, s)) if l == level => Some(s),
            _ => tictactoe_bots::by_name(level.name()),
        };
        let Some(mut strategy) = strategy else { return };
        let deadline = Instant::now() + budget;
        let turns = searches.0.clone();
        let search = async move {
            // The permit goes with the search: held until it returns, even
            // if the room stops waiting for it.
            let permit = turns.acquire_owned().await;
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                let left = deadline.saturating_duration_since(Instant::now());
                let cell = strategy.choose(&game, left).ok();
                (strategy, cell)
            })
            .await
        };
        self.pending = Some((level, seq, Box::pin(search)));
    }

    /// Whether a search is under way.
    pub fn thinking(&self) -> bool {
        self.pending.is_some()
    }

    /// Waits for the search under way (forever when there is none).
    pub async fn wait(&mut self) -> Result<Thought, JoinError> {
        match self.pending.as_mut() {
            Some((_, _, search)) => search.await,
            None => std::future::pending().await,
        }
    }

    /// The search under way finished: the move number and the choice
    /// (`None` when the strategy failed or panicked).
    pub fn finished(
        &mut self,
        joined: Result<Thought, JoinError>,
    ) -> Option<(usize, Option<(usize, usize)>)> {
        let (level, seq, _) = self.pending.take()?;
        match joined {
            Ok((strategy, cell)) => {
                self.strategy = Some((level, strategy));
                Some((seq, cell))
            }
            Err(e) => {
                tracing::error!("the house's search failed: {e}");
                Some((seq, None))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10×10 board: the exact search never finishes, so it takes its whole budget.
    fn big() -> Box<Game> {
        let mut game = Game::new(10).expect("10x10");
        let _ = game.play(4, 4);
        Box::new(game)
    }

    #[tokio::test]
    async fn searches_take_turns_and_waiting_counts_against_the_budget() {
        let searches = Searches::new(1);
        let budget = Duration::from_millis(200);
        let (mut a, mut b) = (Thinker::default(), Thinker::default());
        let begun = Instant::now();
        a.start(2, big(), HouseLevel::Perfect, budget, &searches);
        b.start(2, big(), HouseLevel::Perfect, budget, &searches);
        let (ra, rb) = tokio::join!(a.wait(), b.wait());
        let waited = begun.elapsed();
        for (thinker, joined) in [(&mut a, ra), (&mut b, rb)] {
            let (seq, cell) = thinker.finished(joined).expect("a search was under way");
            assert_eq!(seq, 2);
            let (r, c) = cell.expect("a move");
            assert!(r < 10 && c < 10 && (r, c) != (4, 4));
            assert!(!thinker.thinking());
        }
        // One after the other, yet both within the budget they were given
        // when asked (and a little for the heuristic): the second did not
        // get a fresh budget after waiting for the first.
        assert!(waited >= budget, "{waited:?}");
        assert!(waited < budget * 2, "the second search started its budget afresh: {waited:?}");
    }
}
