//! Rating finished games' records, for every backend: the writer rates a
//! record as it takes it (from its book, else the database's standing),
//! and a commit asks what standings its records were rated from and leave,
//! and rates them again where another writer moved those meanwhile. The
//! Glicko-2 arithmetic and the book are `crate::ratings`'; the backends
//! only read and write the rows.

use rustc_hash::FxHashMap;
use tictactoe_protocol::Player;

use crate::ratings::{self, Rated, RatingBook, Standing, StandingKey};
use crate::store::backend::Backend;
use crate::store::record::GameRecord;

/// Which of two players won, as [`ratings::rate`] counts them.
fn winner_index(record: &GameRecord) -> Option<usize> {
    record.winner.map(|w| usize::from(w != Player::X))
}

/// Rates a finished game if it is rated: from the book's standings, or the
/// database's for an account the book has not seen; the book keeps the new
/// ones, which the commit writes with the record. A standing that cannot be
/// read leaves the game unrated (and says so): rating from a made-up
/// standing would overwrite the real one.
pub(super) fn rate(db: &mut impl Backend, book: &mut RatingBook, record: &mut GameRecord) {
    let players = [record.players[0].account, record.players[1].account];
    // An organiser's games and games from an opening are not rated.
    if record.opening > 0 || record.host.is_some() {
        return;
    }
    let Some(accounts) = ratings::rated_pair(players, record.reason) else { return };
    let mut before = [Standing::default(); 2];
    for (standing, &account) in before.iter_mut().zip(&accounts) {
        *standing = match book.get(account, record.rules) {
            Some(known) => known,
            None => match db.standing(account, record.rules.pool()) {
                Ok(stored) => stored.unwrap_or_default(),
                Err(e) => {
                    tracing::error!(game = %record.id, "game not rated: a standing could not be read: {e}");
                    return;
                }
            },
        };
    }
    let rated = ratings::rate(before, winner_index(record));
    for (account, r) in accounts.iter().zip(&rated) {
        book.put(*account, record.rules, r.after);
    }
    record.ratings = Some(rated);
}

/// Each standing a rated record moves, in the records' order: its key,
/// and the standing before and after the game.
fn moved(records: &[GameRecord]) -> impl Iterator<Item = (StandingKey, Rated)> + '_ {
    records.iter().flat_map(|g| {
        let rated = g.ratings.iter().flatten().copied();
        g.players.iter().zip(rated).filter_map(move |(who, r)| Some(((who.account?, g.rules.pool()), r)))
    })
}

/// Per key, the first of `standings` (`first`) or the one of most games.
fn one_per_key(
    standings: impl Iterator<Item = (StandingKey, Standing)>,
    first: bool,
) -> Vec<(StandingKey, Standing)> {
    let mut kept: FxHashMap<StandingKey, Standing> = FxHashMap::default();
    for (key, s) in standings {
        let k = kept.entry(key).or_insert(s);
        if !first && s.games > k.games {
            *k = s;
        }
    }
    let mut keys: Vec<_> = kept.into_iter().collect();
    keys.sort_by_key(|(k, _)| *k);
    keys
}

/// The standings `records` move, each with the one its first game here was
/// rated from (what the database must still hold for the ratings to
/// stand), ordered by account and pool: writers that rate the same
/// accounts lock their rows in one order, so they never deadlock.
pub(super) fn rated_from(records: &[GameRecord]) -> Vec<(StandingKey, Standing)> {
    one_per_key(moved(records).map(|(key, r)| (key, r.before)), true)
}

/// The standings `records` leave, one per account and pool (the latest),
/// ordered by account and pool.
pub(super) fn latest(records: &[GameRecord]) -> Vec<(StandingKey, Standing)> {
    one_per_key(moved(records).map(|(key, r)| (key, r.after)), false)
}

/// `records` rated again from `stored` (the database's standings, locked)
/// when another writer moved any of them since this one's book read them;
/// `None` when the database holds what the writer rated from.
pub(super) fn rated_again(
    records: &[GameRecord],
    stored: &FxHashMap<StandingKey, Standing>,
) -> Option<Vec<GameRecord>> {
    let first = rated_from(records);
    if first.iter().all(|(k, from)| stored.get(k).is_some_and(|s| s.games == from.games)) {
        return None;
    }
    tracing::warn!(
        "standings moved by another writer since this one read them: the batch's games are rated again"
    );
    Some(rerate(records, stored.clone()))
}

/// `records` rated again, in order, from `stored`.
fn rerate(records: &[GameRecord], mut stored: FxHashMap<StandingKey, Standing>) -> Vec<GameRecord> {
    let mut out = records.to_vec();
    for g in &mut out {
        let (Some(_), [Some(x), Some(o)]) = (&g.ratings, [g.players[0].account, g.players[1].account]) else {
            continue;
        };
        let keys = [x, o].map(|a| (a, g.rules.pool()));
        let before = keys.map(|k| stored.get(&k).copied().unwrap_or_default());
        let rated = ratings::rate(before, winner_index(g));
        for (k, r) in keys.iter().zip(&rated) {
            stored.insert(*k, r.after);
        }
        g.ratings = Some(rated);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tictactoe_protocol::Rules;

    /// A finished game between accounts 1 and 2 that X won, rated from `before`.
    fn won(id: &str, before: [Standing; 2]) -> GameRecord {
        use crate::core::account::Identity;
        let who = |account: i64| {
            std::sync::Arc::new(Identity {
                name: "p".into(),
                account: Some(account),
                bot: false,
                ratings: Box::default(),
            })
        };
        GameRecord {
            berserk: [false; 2],
            tournament: None,
            host: None,
            opening: 0,
            times: Vec::new(),
            id: id.into(),
            room: "R".into(),
            rules: Rules { clock: None, size: 3, win: 3 },
            players: [who(1), who(2)],
            moves: Vec::new(),
            winner: Some(Player::X),
            reason: tictactoe_protocol::EndReason::Resign,
            line: None,
            ratings: Some(ratings::rate(before, Some(0))),
            started_at_ms: 0,
            ended_at_ms: 0,
        }
    }

    #[test]
    fn games_rated_from_a_stale_book_are_rated_again_in_order_from_the_database() {
        let start = Standing::default();
        let pool = Rules::classic(3);
        // This writer rated two games of accounts 1 and 2 from the start;
        // meanwhile another writer rated one of theirs (1 won).
        let elsewhere = ratings::rate([start, start], Some(0));
        let first = won("A", [start, start]);
        let second =
            won("B", [first.ratings.expect("rated")[0].after, first.ratings.expect("rated")[1].after]);
        let stored = FxHashMap::from_iter([((1, pool), elsewhere[0].after), ((2, pool), elsewhere[1].after)]);
        let records = rated_again(&[first.clone(), second], &stored).expect("the database moved");
        let [a, b] = [&records[0], &records[1]].map(|g| g.ratings.expect("still rated"));
        assert_eq!(a[0].before, elsewhere[0].after, "the first game starts where the database stands");
        assert_eq!((b[0].before, b[1].before), (a[0].after, a[1].after), "the second from the first");
        assert_eq!(b[0].after.games, 3);
        assert_eq!(latest(&records), vec![((1, pool), b[0].after), ((2, pool), b[1].after)]);
        // What the writer rated from is what the check compares against.
        let keys = rated_from(&records);
        assert_eq!(
            keys.iter().map(|(k, s)| (*k, s.games)).collect::<Vec<_>>(),
            [((1, pool), 1), ((2, pool), 1)]
        );
        // A database that holds what the writer rated from: nothing to do.
        let unmoved = FxHashMap::from_iter([((1, pool), start), ((2, pool), start)]);
        assert_eq!(rated_again(&[first], &unmoved), None);
    }
}
