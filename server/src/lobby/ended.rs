//! The lobby's memory of games that ended in rooms since closed: which
//! resume token (by its hash) belonged to which game, so that a player who
//! lost while away and comes back with its token is told the game's id
//! along with `invalid_token`. Bounded: the games of the last hour, and at
//! most [`KEPT_MAX`] tokens, whichever is fewer; in memory only (a restart
//! forgets them).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::core::account::{self, TokenHash};

/// How long a token of an ended game is remembered.
pub const KEPT_FOR: Duration = Duration::from_secs(3600);

/// Most tokens remembered (two a game): some 6 MB at most.
pub const KEPT_MAX: usize = 50_000;

/// Tokens of ended games and their games' ids, oldest first.
#[derive(Debug, Default)]
pub struct Ended {
    games: HashMap<TokenHash, Arc<str>>,
    order: VecDeque<(Instant, TokenHash)>,
}

impl Ended {
    /// Remembers `tokens` (hash and game id) as of `now`, forgetting what
    /// is past either bound.
    pub fn remember(&mut self, tokens: Vec<(TokenHash, Arc<str>)>, now: Instant) {
        for (hash, game) in tokens {
            if self.games.insert(hash, game).is_none() {
                self.order.push_back((now, hash));
            }
        }
        self.forget(now);
    }

    /// The id of the ended game `token` was a resume token of, if it is
    /// still remembered at `now`.
    pub fn game_of(&mut self, token: &str, now: Instant) -> Option<Arc<str>> {
        self.forget(now);
        self.games.get(&account::hash(token)).cloned()
    }

    fn forget(&mut self, now: Instant) {
        while let Some(&(at, hash)) = self.order.front() {
            let old = now.saturating_duration_since(at) > KEPT_FOR;
            if !old && self.order.len() <= KEPT_MAX {
                break;
            }
            self.order.pop_front();
            self.games.remove(&hash);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_remembered_for_an_hour_and_the_oldest_go_first_past_the_cap() {
        let t0 = Instant::now();
        let mut ended = Ended::default();
        ended.remember(vec![(account::hash("ROOMAAAAAAtoken1"), "g1".into())], t0);
        assert_eq!(ended.game_of("ROOMAAAAAAtoken1", t0).as_deref(), Some("g1"));
        assert_eq!(ended.game_of("ROOMAAAAAAtoken2", t0), None);
        let later = t0 + KEPT_FOR + Duration::from_secs(1);
        assert_eq!(ended.game_of("ROOMAAAAAAtoken1", later), None);
        let many =
            (0..=KEPT_MAX).map(|i| (account::hash(&format!("t{i}")), Arc::from(format!("g{i}")))).collect();
        ended.remember(many, later);
        assert_eq!(ended.game_of("t0", later), None, "the oldest is forgotten past the cap");
        assert_eq!(ended.game_of(&format!("t{KEPT_MAX}"), later).as_deref(), Some(&*format!("g{KEPT_MAX}")));
        assert_eq!(ended.games.len(), KEPT_MAX);
    }
}
