//! Glicko-2 ratings, one pool per board (size and win length), kept in
//! memory for every account seen since the server started — loaded from the
//! store when an account signs in, written back with each rated game's
//! record. Rooms read it when a game starts and update it when a rated game
//! ends: a short lock twice a game, never per move, never a disk.

use std::sync::Mutex;

use rustc_hash::FxHashMap;
use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};

use crate::rules::Rules;
use crate::session::account::AccountId;

/// An account's standing in one pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// Rating, deviation and volatility.
    pub rating: Glicko2Rating,
    /// Rated games played in the pool.
    pub games: u32,
}

impl Default for Standing {
    /// Where a new account starts: 1500, deviation 350, volatility 0.06.
    fn default() -> Self {
        Standing { rating: Glicko2Rating::new(), games: 0 }
    }
}

impl Standing {
    /// The rating as players see it: rounded to an integer.
    pub fn shown(&self) -> i64 {
        self.rating.rating.round() as i64
    }
}

/// One player's standing before and after a rated game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rated {
    /// Before the game.
    pub before: Standing,
    /// After it.
    pub after: Standing,
}

/// The pool's key as the API names it: `"<size>"` for the classic rule,
/// `"<size>/<win>"` for connect-k.
pub fn pool_key(rules: Rules) -> String {
    if rules.win == rules.size { rules.size.to_string() } else { format!("{}/{}", rules.size, rules.win) }
}

/// The rules a pool key names, if it is one.
pub fn parse_pool_key(key: &str) -> Option<Rules> {
    match key.split_once('/') {
        Some((size, win)) => Some(Rules { size: size.parse().ok()?, win: win.parse().ok()? }),
        None => key.parse().ok().map(Rules::classic),
    }
}

/// Every known account's standing in every pool it has played.
#[derive(Debug, Default)]
pub struct RatingBook {
    standings: Mutex<FxHashMap<(AccountId, Rules), Standing>>,
}

impl RatingBook {
    fn map(&self) -> std::sync::MutexGuard<'_, FxHashMap<(AccountId, Rules), Standing>> {
        // A panic elsewhere while holding the lock leaves plain numbers behind.
        self.standings.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds an account's stored standings, keeping any this server already
    /// holds (they are newer than the store's until written).
    pub fn load(&self, account: AccountId, pools: impl IntoIterator<Item = (Rules, Standing)>) {
        let mut map = self.map();
        for (rules, standing) in pools {
            map.entry((account, rules)).or_insert(standing);
        }
    }

    /// An account's standing in the pool of `rules` (a new one if none).
    pub fn standing(&self, account: AccountId, rules: Rules) -> Standing {
        self.map().get(&(account, rules)).copied().unwrap_or_default()
    }

    /// Rates a game between `players` (player 1 first) that `winner` (0 or
    /// 1, `None` for a draw) won, records the new standings and returns both
    /// players' before and after.
    pub fn rate(&self, players: [AccountId; 2], rules: Rules, winner: Option<usize>) -> [Rated; 2] {
        let outcome = match winner {
            Some(0) => Outcomes::WIN,
            Some(_) => Outcomes::LOSS,
            None => Outcomes::DRAW,
        };
        let mut map = self.map();
        let before = players.map(|a| map.get(&(a, rules)).copied().unwrap_or_default());
        let (one, two) = glicko2(&before[0].rating, &before[1].rating, &outcome, &Glicko2Config::new());
        let after = [
            Standing { rating: one, games: before[0].games + 1 },
            Standing { rating: two, games: before[1].games + 1 },
        ];
        for i in 0..2 {
            map.insert((players[i], rules), after[i]);
        }
        [Rated { before: before[0], after: after[0] }, Rated { before: before[1], after: after[1] }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillratings::glicko2::glicko2_rating_period;

    /// The worked example of Glickman's "Example of the Glicko-2 system".
    #[test]
    fn glickmans_worked_example() {
        let player = Glicko2Rating { rating: 1500.0, deviation: 200.0, volatility: 0.06 };
        let opp = |rating, deviation| Glicko2Rating { rating, deviation, volatility: 0.06 };
        let results = [
            (opp(1400.0, 30.0), Outcomes::WIN),
            (opp(1550.0, 100.0), Outcomes::LOSS),
            (opp(1700.0, 300.0), Outcomes::LOSS),
        ];
        let after = glicko2_rating_period(&player, &results, &Glicko2Config::new());
        assert!((after.rating - 1464.06).abs() < 0.01, "{}", after.rating);
        assert!((after.deviation - 151.52).abs() < 0.01, "{}", after.deviation);
        assert!((after.volatility - 0.05999).abs() < 0.0001, "{}", after.volatility);
    }

    #[test]
    fn a_win_moves_both_ratings_and_is_remembered() {
        let book = RatingBook::default();
        let rules = Rules { size: 15, win: 5 };
        let [a, b] = book.rate([1, 2], rules, Some(0));
        assert_eq!(a.before.shown(), 1500);
        assert!(a.after.rating.rating > 1500.0 && b.after.rating.rating < 1500.0);
        assert_eq!(book.standing(1, rules), a.after);
        assert_eq!(book.standing(1, Rules::classic(3)), Standing::default());
        // Loading what the store had keeps the newer standing.
        book.load(1, [(rules, Standing::default())]);
        assert_eq!(book.standing(1, rules).games, 1);
        let [draw_a, _] = book.rate([1, 2], rules, None);
        assert_eq!(draw_a.after.games, 2);
    }

    #[test]
    fn pool_keys() {
        assert_eq!(pool_key(Rules::classic(3)), "3");
        assert_eq!(pool_key(Rules { size: 15, win: 5 }), "15/5");
        assert_eq!(parse_pool_key("15/5"), Some(Rules { size: 15, win: 5 }));
        assert_eq!(parse_pool_key("7"), Some(Rules::classic(7)));
        assert_eq!(parse_pool_key("x"), None);
    }
}
