//! A finished game as the store keeps it.

use std::sync::Arc;

use tictactoe_protocol::{EndReason, Line, Player};

use crate::ratings::Rated;
use crate::rules::Rules;
use crate::session::account::Identity;

/// Everything about one finished game: who played (player 1 first), the
/// rules, the moves, how it ended and, if rated, the ratings it moved.
#[derive(Debug, Clone, PartialEq)]
pub struct GameRecord {
    /// The id `game_over.game_id` carries.
    pub id: Arc<str>,
    /// The room it was played in.
    pub room: Arc<str>,
    /// Board size and win length.
    pub rules: Rules,
    /// Player 1 (`X`), then player 2.
    pub players: [Arc<Identity>; 2],
    /// The moves in play order.
    pub moves: Vec<[u16; 2]>,
    /// The winner, if any.
    pub winner: Option<Player>,
    /// Why it ended.
    pub reason: EndReason,
    /// The winning run, for `line`.
    pub line: Option<Line>,
    /// Both players' ratings before and after, when the game was rated.
    pub ratings: Option<[Rated; 2]>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    /// Wall-clock end, milliseconds since the Unix epoch.
    pub ended_at_ms: i64,
}

/// A fresh game id: 8 characters of `[0-9A-Za-z]` (47 bits), as short as a
/// link should be; the store refuses a repeat.
pub fn new_game_id(rng: &mut impl rand::Rng) -> Arc<str> {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    (0..8).map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())])).collect::<String>().into()
}

/// Milliseconds since the Unix epoch of `t`.
pub fn unix_ms(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
