//! Move-choosing strategies behind one trait, shared by `ttt bot` and the
//! server's house bot (one implementation): a new strategy is one file
//! implementing [`Strategy`] plus a line in [`by_name`]. Pure computation:
//! no I/O, no async; callers run a search on a thread where blocking is fine.

pub mod heuristic;
pub mod perfect;
pub mod random;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tictactoe_protocol::Game;

/// Chooses a move for the player to move in a game that is not over.
pub trait Strategy: Send {
    /// An empty cell `(row, col)`; may use up to `think` of time. An error
    /// means the strategy cannot go on (an engine died or kept answering nonsense).
    fn choose(&mut self, game: &Game, think: Duration) -> Result<(usize, usize), String>;

    /// [`Strategy::choose`] until `stop`: its deadline, or earlier if its
    /// flag is raised (nobody wants the move any more), when the strategy
    /// gives up at once with an error. A strategy that searches overrides
    /// this, so that a search nobody waits for stops using a core; one that
    /// answers at once need not.
    fn choose_until(&mut self, game: &Game, stop: &Stop) -> Result<(usize, usize), String> {
        if stop.cancelled() {
            return Err(CANCELLED.to_owned());
        }
        self.choose(game, stop.left())
    }
}

/// The error of a choice given up because its [`Stop`] was cancelled.
pub const CANCELLED: &str = "cancelled: the move is no longer wanted";

/// When a search must end: at its deadline with the best it has, or as
/// soon as it notices [`Stop::cancel`] with nothing. Clones share the flag,
/// so whoever asked for the move keeps one to cancel the search with.
#[derive(Debug, Clone)]
pub struct Stop {
    deadline: Instant,
    cancelled: Arc<AtomicBool>,
}

impl Stop {
    /// A stop at `deadline`, not cancelled.
    pub fn at(deadline: Instant) -> Stop {
        Stop { deadline, cancelled: Arc::new(AtomicBool::new(false)) }
    }

    /// The search is to end now, its answer unwanted.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`Stop::cancel`] was called.
    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Whether the search must end: cancelled or past the deadline.
    pub fn reached(&self) -> bool {
        self.cancelled() || Instant::now() >= self.deadline
    }

    /// Time left until the deadline (zero once past it).
    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The deadline.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The same stop (one flag: cancelling either cancels both), by
    /// `deadline` if that is sooner.
    pub fn by(&self, deadline: Instant) -> Stop {
        Stop { deadline: self.deadline.min(deadline), cancelled: self.cancelled.clone() }
    }
}

/// The names [`by_name`] knows, strongest last.
pub const NAMES: [&str; 3] = ["random", "heuristic", "perfect"];

/// The strategy called `name` (`perfect`, `heuristic`, `random`), if there is one.
pub fn by_name(name: &str) -> Option<Box<dyn Strategy>> {
    match name {
        "perfect" => Some(Box::new(perfect::Perfect::default())),
        "heuristic" => Some(Box::new(heuristic::Heuristic)),
        "random" => Some(Box::new(random::Random)),
        _ => None,
    }
}

/// Every empty cell of `game`, row by row.
pub fn empty_cells(game: &Game) -> Vec<(usize, usize)> {
    let n = game.size();
    (0..n * n).map(|i| (i / n, i % n)).filter(|&(r, c)| !game.is_occupied(r, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_a_strategy_that_plays_an_empty_cell() {
        let mut game = Game::new(3).expect("3x3");
        game.play(1, 1).expect("centre");
        for name in NAMES {
            let mut s = by_name(name).expect(name);
            let (r, c) = s.choose(&game, Duration::from_millis(100)).expect("a move");
            assert!(!game.is_occupied(r, c), "{name} chose a taken cell");
        }
        assert!(by_name("clairvoyant").is_none());
    }
}
