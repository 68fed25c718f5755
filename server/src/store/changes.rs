//! A game in progress as the store keeps it, and the changes a room sends
//! the store as the game goes on: restarting is replaying a saved game's
//! moves into a fresh room.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::rules::Rules;
use crate::session::account::{Identity, TokenHash};

/// A game in progress as the store keeps it, enough to open its room again.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveGame {
    /// The id its record will have.
    pub id: Arc<str>,
    /// The room's code (resume tokens start with it).
    pub room: Arc<str>,
    /// Board size and win length.
    pub rules: Rules,
    /// Time per move, if turns are timed.
    pub turn_timeout: Option<Duration>,
    /// Player 1 (`X`), then player 2.
    pub players: [Arc<Identity>; 2],
    /// The hashes of the seats' resume tokens, like `players`.
    pub tokens: [TokenHash; 2],
    /// The moves accepted, in order.
    pub moves: Vec<[u16; 2]>,
    /// What the player to move had left when the server stopped gracefully.
    pub clock_left: Option<Duration>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    /// The house's level, when it plays one of the seats.
    pub house: Option<tictactoe_protocol::HouseLevel>,
}

/// One change to the saved games, sent by a room without waiting.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveWrite {
    /// A game started (its moves are empty).
    Start(Box<LiveGame>),
    /// A move was accepted in `room`'s game: the `seq`-th (1-based), at `at`.
    Move {
        /// The room.
        room: Arc<str>,
        /// The move's number: 1 for the first.
        seq: u32,
        /// `[row, col]`.
        cell: [u16; 2],
        /// When the room accepted it: how long it took to be durable is measured from here.
        at: Instant,
    },
    /// The server is stopping: what the player to move has left.
    Clock {
        /// The room.
        room: Arc<str>,
        /// The time left, if turns are timed.
        left: Option<Duration>,
    },
}
