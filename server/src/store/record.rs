//! A finished game as the store keeps it.

use std::sync::Arc;

use tictactoe_protocol::{EndReason, Fischer, Line, Player};

use crate::core::account::Identity;
use crate::ratings::Rated;
use tictactoe_protocol::Rules;

/// Everything about one finished game: who played (player 1 first), the
/// rules, the moves, how it ended and, if rated, the ratings it moved.
#[derive(Debug, Clone, PartialEq)]
pub struct GameRecord {
    /// The id `game_over.game_id` carries.
    pub id: Arc<str>,
    /// Its room's code: the record ends that room's saved game.
    pub room: Arc<str>,
    /// The pool it is rated in.
    pub rules: Rules,
    /// Player 1 (`X`), then player 2.
    pub players: [Arc<Identity>; 2],
    /// In play order, as the API gives them.
    pub moves: Vec<[u16; 2]>,
    /// With a Fischer clock (`rules.clock`): the mover's time left after
    /// each move, in ms, like `moves`; empty without one.
    pub times: Vec<u64>,
    /// How many of `moves` are its room's opening (unrated when any).
    pub opening: usize,
    /// The organiser's name, for a game of an organised room (unrated).
    pub host: Option<Arc<str>>,
    /// `None` for a draw, or a game that ended without a winner (aborted, shut down).
    pub winner: Option<Player>,
    /// How it ended: a game ended by play is rated, one aborted or shut down is not.
    pub reason: EndReason,
    /// The winning run, for `line`.
    pub line: Option<Line>,
    /// Both players' ratings before and after, when the game was rated.
    pub ratings: Option<[Rated; 2]>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    /// The arena tournament it was played in, by id.
    pub tournament: Option<Arc<str>>,
    /// Which sides went berserk (a tournament game), player 1 first.
    pub berserk: [bool; 2],
    /// Wall-clock end, milliseconds since the Unix epoch.
    pub ended_at_ms: i64,
}

impl GameRecord {
    /// Its clock as the `clock` column holds it: JSON, or NULL without one.
    pub(crate) fn clock_text(&self) -> Option<String> {
        self.rules.clock.map(|c| serde_json::to_string(&c).unwrap_or_default())
    }

    /// The movers' times as the `times` column holds them: JSON, or NULL without a clock.
    pub(crate) fn times_text(&self) -> Option<String> {
        self.rules.clock.map(|_| serde_json::to_string(&self.times).unwrap_or_default())
    }
}

/// Both sides' time left after each move (`[player 1, player 2]`), from
/// the mover's after each: the other side's is what it had.
pub fn both_sides(clock: Fischer, times: &[u64]) -> Vec<[u64; 2]> {
    let mut left = [clock.initial_ms; 2];
    let each = |(i, &t): (usize, &u64)| {
        left[i % 2] = t;
        left
    };
    times.iter().enumerate().map(each).collect()
}

/// The characters of ids, in ASCII order (so that ids sort as their numbers do).
const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Characters of a game id's time: milliseconds since the Unix epoch in
/// base 62 (to the year 2081).
const TIME_CHARS: usize = 7;
/// Random characters after the time: 47 bits, drawn per game.
const RANDOM_CHARS: usize = 8;

/// Whether `id` is shaped like a game id: [`new_game_id`]'s 15 characters
/// of `[0-9A-Za-z]`, or the 8 random ones of servers before them.
pub fn is_game_id(id: &str) -> bool {
    (id.len() == TIME_CHARS + RANDOM_CHARS || id.len() == RANDOM_CHARS)
        && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A fresh game id for a game that starts at `unix_ms`: the time in 7
/// characters of `[0-9A-Za-z]`, then 8 random ones. Ids sort by when their
/// games started, so the store appends each to the end of its index rather
/// than anywhere in it; two games get the same id only if they start in the
/// same millisecond and draw the same 47 bits.
pub fn new_game_id(rng: &mut impl rand::Rng, unix_ms: i64) -> Arc<str> {
    let mut id = [0u8; TIME_CHARS + RANDOM_CHARS];
    let mut t = u64::try_from(unix_ms).unwrap_or(0);
    for c in id[..TIME_CHARS].iter_mut().rev() {
        *c = ALPHABET[(t % 62) as usize];
        t /= 62;
    }
    for c in &mut id[TIME_CHARS..] {
        *c = ALPHABET[rng.random_range(0..ALPHABET.len())];
    }
    id.iter().map(|&b| char::from(b)).collect::<String>().into()
}

/// An instance's name when none is given: 8 random characters of `[0-9A-Za-z]`.
pub fn new_instance_name(rng: &mut impl rand::Rng) -> Arc<str> {
    (0..RANDOM_CHARS)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect::<String>()
        .into()
}

/// Milliseconds since the Unix epoch of `t`.
pub fn unix_ms(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn game_ids_sort_by_start_and_are_shaped_like_ids() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let early = new_game_id(&mut rng, 1_764_000_000_000);
        let later = new_game_id(&mut rng, 1_764_000_000_001);
        let much_later = new_game_id(&mut rng, 3_000_000_000_000);
        assert!(early < later && later < much_later, "{early} {later} {much_later}");
        assert_eq!(early.len(), 15);
        assert!(is_game_id(&early));
        assert!(is_game_id("g7Kq2ZxA"), "an older server's id");
        assert!(!is_game_id("g7Kq2ZxA9"));
        assert!(!is_game_id("g7Kq2ZxA-_abcde"));
        // Two games in the same millisecond differ in their random part.
        assert_ne!(new_game_id(&mut rng, 5), new_game_id(&mut rng, 5));
    }
}
