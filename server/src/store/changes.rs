//! A game in progress as the store keeps it, and the changes a room sends
//! the store as the game goes on: restarting is replaying a saved game's
//! moves into a fresh room.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::core::account::{Identity, TokenHash};
use tictactoe_protocol::Rules;

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
    /// With a Fischer clock (`rules.clock`): the mover's time left after
    /// each move, in ms, like `moves`; empty without one.
    pub times: Vec<u64>,
    /// How many of `moves` are its room's opening.
    pub opening: usize,
    /// What the player to move had left when the server stopped gracefully.
    pub clock_left: Option<Duration>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    /// The house's level, when it plays one of the seats.
    pub house: Option<tictactoe_protocol::HouseLevel>,
    /// The arena tournament it is played in, by id.
    pub tournament: Option<Arc<str>>,
    /// Which sides went berserk, player 1 first: that side's clock started
    /// from half its time, with no increment.
    pub berserk: [bool; 2],
}

/// One change to the saved games, sent by a room without waiting.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveWrite {
    /// A game started (its moves are empty).
    Start(Box<LiveGame>),
    /// A move was accepted in `room`'s game: the `seq`-th (1-based), at `at`.
    Move {
        /// The room's code, the key of its saved game.
        room: Arc<str>,
        /// The move's number: 1 for the first.
        seq: u32,
        /// `[row, col]`.
        cell: [u16; 2],
        /// With a Fischer clock: the mover's time left after it, in ms.
        left: Option<u64>,
        /// When the room accepted it: how long it took to be durable is measured from here.
        at: Instant,
    },
    /// A player of `room`'s tournament game went berserk (before its first
    /// move): saved in order with the moves, so that a restored game knows it.
    Berserk {
        /// The room's code, the key of its saved game.
        room: Arc<str>,
        /// Who.
        player: tictactoe_protocol::Player,
    },
    /// The server is stopping: what the player to move has left.
    Clock {
        /// The room's code, the key of its saved game.
        room: Arc<str>,
        /// The time left, if turns are timed.
        left: Option<Duration>,
    },
}

/// Moves as the stores keep them: each as two little-endian u16, row then col.
pub(crate) fn encode_cells(moves: &[[u16; 2]]) -> Vec<u8> {
    moves.iter().flat_map(|[r, c]| [r.to_le_bytes(), c.to_le_bytes()]).flatten().collect()
}

/// Moves read back from [`encode_cells`]'s bytes (a trailing part move is left out).
pub(crate) fn decode_cells(bytes: &[u8]) -> impl Iterator<Item = [u16; 2]> + '_ {
    bytes.chunks_exact(4).map(|b| [u16::from_le_bytes([b[0], b[1]]), u16::from_le_bytes([b[2], b[3]])])
}

/// The rules of a saved game's `size` and `win`, or why they are no board.
pub(crate) fn saved_rules(size: i64, win: i64) -> Result<Rules, String> {
    let (Ok(size), Ok(win)) = (usize::try_from(size), usize::try_from(win)) else {
        return Err(format!("size {size} or win {win} is not a board"));
    };
    tictactoe_protocol::Game::with_win(size, win)
        .map_err(|_| format!("size {size} and win {win} are not a board"))?;
    Ok(Rules { clock: None, size, win })
}

impl LiveGame {
    /// Why a saved game cannot be played on, if it cannot: a move off its board.
    pub(crate) fn unplayable(&self) -> Option<&'static str> {
        let size = self.rules.size;
        let off = self.moves.iter().any(|&[row, col]| usize::from(row) >= size || usize::from(col) >= size);
        off.then_some("a saved move is off the board")
    }
}
