//! How long `ttt bot` may take over a move. On the per-move timer it is
//! `--think-ms`; on a Fischer clock it is the clock's own budget (the one
//! the house bot spends, [`Fischer::move_budget`]), never so much that the
//! network could make the flag fall, and nothing at all when a move wins
//! at once.

use std::time::Duration;

use tictactoe_protocol::{Fischer, Game, Status};

/// Time to think per move without a clock (and without `--think-ms`).
pub const DEFAULT_THINK: Duration = Duration::from_millis(1000);

/// Kept back from the time left, for the move's trip to the server and the
/// client's own scheduling: more than the server's largest lag credit
/// ([`Fischer::MAX_LAG_CREDIT_MS`]), so the bot never relies on it.
pub const SAFETY_MS: u64 = 500;

/// A budget below this is not worth a search: the fast strategy answers.
pub const FAST_BELOW: Duration = Duration::from_millis(50);

/// The time one move may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// What the search should use.
    pub think: Duration,
    /// The most the move can take before the time runs out, less the safety
    /// margin: what an engine (which cannot be told the budget) is held to.
    pub limit: Duration,
    /// The game's Fischer clock, for a mover told the time control (a
    /// Gomocup brain's `timeout_match`); `None` on the per-move timer.
    pub clock: Option<Fischer>,
}

impl Budget {
    /// The same time to think and limit (the per-move timer's `--think-ms`).
    pub fn fixed(think: Duration) -> Budget {
        Budget { think, limit: think, clock: None }
    }

    /// Too little time to search: answer with the fast strategy.
    pub fn fast(&self) -> bool {
        self.think < FAST_BELOW
    }

    /// The budget for a move on `clock` with `left_ms` on the bot's clock:
    /// [`Fischer::move_budget`] (`left/20 + 3/4·increment`, at most half of
    /// what is left past the lag margin), and at most `left − SAFETY_MS`.
    /// For a side's first move, before its clock runs, `first_move_ms` is
    /// the time that move has left (the clock's 30 s) and bounds it instead.
    /// `cap` (`--think-ms`) bounds the thinking time further.
    pub fn fischer(
        clock: Fischer,
        left_ms: u64,
        first_move_ms: Option<u64>,
        cap: Option<Duration>,
    ) -> Budget {
        let limit = Duration::from_millis(first_move_ms.unwrap_or(left_ms).saturating_sub(SAFETY_MS));
        let think = clock.move_budget(left_ms).min(limit);
        Budget { think: cap.map_or(think, |cap| think.min(cap)), limit, clock: Some(clock) }
    }
}

/// A move that wins at once for the player to move, if there is one: played
/// without a search, so a won game is never lost on time.
pub fn winning_move(game: &Game) -> Option<(usize, usize)> {
    let mut game = game.clone();
    let n = game.size();
    for cell in (0..n * n).map(|i| (i / n, i % n)) {
        if game.is_occupied(cell.0, cell.1) {
            continue;
        }
        let won = matches!(game.play(cell.0, cell.1), Ok(Status::Won { .. }));
        game.undo();
        if won {
            return Some(cell);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// A clock with `increment_ms`; the initial time does not enter a budget.
    fn inc(increment_ms: u64) -> Fischer {
        Fischer { initial_ms: 180_000, increment_ms }
    }

    #[test]
    fn a_move_gets_a_twentieth_of_the_time_left_and_most_of_the_increment() {
        // 3+2 at the start: 180 s / 20 + 1.5 s.
        assert_eq!(Budget::fischer(inc(2_000), 180_000, None, None).think, MS(10_500));
        // 10+0.1 with 42 s left: 2.1 s + 75 ms.
        assert_eq!(Budget::fischer(inc(100), 42_000, None, None).think, MS(2_175));
        // 1+0 with 4 s left: 200 ms.
        let b = Budget::fischer(inc(0), 4_000, None, None);
        assert_eq!((b.think, b.limit), (MS(200), MS(3_500)));
        // --think-ms caps the thinking, not the limit.
        let capped = Budget::fischer(inc(2_000), 180_000, None, Some(MS(1_000)));
        assert_eq!((capped.think, capped.limit), (MS(1_000), MS(179_500)));
    }

    #[test]
    fn never_more_than_the_time_left_less_the_safety_margin() {
        // A big increment and little time: the increment is no use if the flag falls first.
        let b = Budget::fischer(inc(180_000), 1_000, None, None);
        assert_eq!((b.think, b.limit), (MS(375), MS(1_000 - SAFETY_MS)), "half of what is left past 250 ms");
        // Less than the margin left: nothing to think with, the fast strategy answers.
        let out = Budget::fischer(inc(2_000), SAFETY_MS - 1, None, None);
        assert_eq!((out.think, out.limit), (Duration::ZERO, Duration::ZERO));
        assert!(out.fast());
        assert!(!Budget::fischer(inc(0), 60_000, None, None).fast());
        for left in (0..20_000).step_by(997) {
            for n in [0, 100, 2_000, 180_000] {
                let b = Budget::fischer(inc(n), left, None, None);
                assert!(b.think <= b.limit && b.limit <= MS(left.saturating_sub(SAFETY_MS)), "{left} {n}");
            }
        }
    }

    #[test]
    fn the_first_move_is_bounded_by_its_own_thirty_seconds() {
        // 180+0: a twentieth of three hours would be 9 minutes; the first move has 30 s.
        let first = Budget::fischer(inc(0), 10_800_000, Some(Fischer::FIRST_MOVE_MS), None);
        assert_eq!((first.think, first.limit), (MS(29_500), MS(29_500)));
        // Of those 30 s, 2 are left: 1.5 s may be used.
        let late = Budget::fischer(inc(2_000), 180_000, Some(2_000), None);
        assert_eq!((late.think, late.limit), (MS(1_500), MS(1_500)));
    }

    #[test]
    fn a_winning_move_is_found_and_none_where_there_is_none() {
        let mut g = Game::new(3).expect("3x3");
        for (r, c) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            g.play(r, c).expect("legal");
        }
        assert_eq!(winning_move(&g), Some((0, 2)), "X completes the top row");
        let mut g = Game::with_win(15, 5).expect("15x15");
        assert_eq!(winning_move(&g), None);
        for (r, c) in [(7, 3), (0, 0), (7, 4), (0, 2), (7, 5), (0, 4), (7, 6), (0, 6)] {
            g.play(r, c).expect("legal");
        }
        assert!(matches!(winning_move(&g), Some((7, 2) | (7, 7))), "{:?}", winning_move(&g));
    }
}
