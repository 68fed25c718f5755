//! Glicko-2 ratings, one pool per board (size and win length). Their owner
//! is the store's writer: it rates a game as it takes the game's record
//! (from the room's output), writes the new standings with the record, and
//! tells the room; players carry their shown ratings in their identity.

use rustc_hash::FxHashMap;
use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};

use tictactoe_protocol::EndReason;

use crate::core::account::AccountId;
use tictactoe_protocol::Rules;

/// An account's standing in one pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// Glicko-2's three numbers: what the next game is rated from.
    pub rating: Glicko2Rating,
    /// Rated games played in the pool. It only grows: of two standings, the
    /// newer has more games (what a write that must not go back checks).
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

/// Which standing: an account's, in the pool of these rules.
pub type StandingKey = (AccountId, Rules);

/// One player's standing before and after a rated game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rated {
    /// What the game was rated from: a writer that finds the database no
    /// longer holds it rates the game again.
    pub before: Standing,
    /// What the game left: the player's next game is rated from it.
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
        Some((size, win)) => Some(Rules { clock: None, size: size.parse().ok()?, win: win.parse().ok()? }),
        None => key.parse().ok().map(Rules::classic),
    }
}

/// Whether a game between these accounts (player 1 first) that ended for
/// `reason` is rated: two different accounts, ended by play.
pub fn rated_pair(players: [Option<AccountId>; 2], reason: EndReason) -> Option<[AccountId; 2]> {
    let by_play = !matches!(reason, EndReason::Shutdown | EndReason::Aborted);
    match players {
        [Some(a), Some(b)] if by_play && a != b => Some([a, b]),
        _ => None,
    }
}

/// Rates a game between players standing at `before` (player 1 first)
/// that `winner` (0 or 1, `None` for a draw) won: both players' before and
/// after.
pub fn rate(before: [Standing; 2], winner: Option<usize>) -> [Rated; 2] {
    let outcome = match winner {
        Some(0) => Outcomes::WIN,
        Some(_) => Outcomes::LOSS,
        None => Outcomes::DRAW,
    };
    let (one, two) = glicko2(&before[0].rating, &before[1].rating, &outcome, &Glicko2Config::new());
    let after = [
        Standing { rating: one, games: before[0].games + 1 },
        Standing { rating: two, games: before[1].games + 1 },
    ];
    [Rated { before: before[0], after: after[0] }, Rated { before: before[1], after: after[1] }]
}

/// The standings the store's writer has rated or read since the server
/// started: its own, never shared. A rated game's standings are newer here
/// than in the database until its record commits.
#[derive(Debug, Default)]
pub struct RatingBook {
    standings: FxHashMap<StandingKey, Standing>,
    /// Accounts whose every standing the book has: a pool it lacks for
    /// them is one they have not played (the default standing).
    whole: rustc_hash::FxHashSet<AccountId>,
}

impl RatingBook {
    /// An account's standing in the pool of `rules`, if the book knows it.
    pub fn get(&self, account: AccountId, rules: Rules) -> Option<Standing> {
        match self.standings.get(&(account, rules.pool())) {
            Some(s) => Some(*s),
            None => self.whole.contains(&account).then(Standing::default),
        }
    }

    /// Keeps an account's standing in a pool.
    pub fn put(&mut self, account: AccountId, rules: Rules, standing: Standing) {
        self.standings.insert((account, rules.pool()), standing);
    }

    /// Forgets what the book has of an account (a record of its was
    /// refused: the standing it rated from is not the database's): the next
    /// game reads it from the database.
    pub fn forget(&mut self, account: AccountId) {
        self.standings.retain(|(a, _), _| *a != account);
        self.whole.remove(&account);
    }

    /// Learns an account's standings as the database had them (every
    /// pool it has played): those the book has already are newer and stay.
    pub fn learn(&mut self, account: AccountId, standings: &[(Rules, Standing)]) {
        if !self.whole.insert(account) {
            return;
        }
        for &(rules, standing) in standings {
            self.standings.entry((account, rules.pool())).or_insert(standing);
        }
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
    fn a_win_moves_both_ratings_and_the_book_keeps_them() {
        let rules = Rules { clock: None, size: 15, win: 5 };
        let [a, b] = rate([Standing::default(); 2], Some(0));
        assert_eq!(a.before.shown(), 1500);
        assert!(a.after.rating.rating > 1500.0 && b.after.rating.rating < 1500.0);
        assert_eq!((a.after.games, b.after.games), (1, 1));
        let [draw, _] = rate([a.after, b.after], None);
        assert_eq!(draw.after.games, 2);
        let mut book = RatingBook::default();
        book.put(1, rules, a.after);
        assert_eq!(
            (book.get(1, rules), book.get(1, Rules::classic(3)), book.get(2, rules)),
            (Some(a.after), None, None)
        );
    }

    #[test]
    fn only_games_between_two_accounts_ended_by_play_are_rated() {
        assert_eq!(rated_pair([Some(1), Some(2)], EndReason::Line), Some([1, 2]));
        assert_eq!(rated_pair([Some(1), Some(2)], EndReason::Resign), Some([1, 2]));
        assert_eq!(rated_pair([Some(1), Some(1)], EndReason::Line), None);
        assert_eq!(rated_pair([Some(1), None], EndReason::Line), None);
        assert_eq!(rated_pair([Some(1), Some(2)], EndReason::Aborted), None);
        assert_eq!(rated_pair([Some(1), Some(2)], EndReason::Shutdown), None);
    }

    #[test]
    fn pool_keys() {
        assert_eq!(pool_key(Rules::classic(3)), "3");
        assert_eq!(pool_key(Rules { clock: None, size: 15, win: 5 }), "15/5");
        assert_eq!(parse_pool_key("15/5"), Some(Rules { clock: None, size: 15, win: 5 }));
        assert_eq!(parse_pool_key("7"), Some(Rules::classic(7)));
        assert_eq!(parse_pool_key("x"), None);
    }
}
