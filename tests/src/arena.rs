//! Arena tournaments played from outside the server: a bot ([`bot`]) is a
//! player as an independent client would be (its own account, every
//! pairing played with a `tictactoe_bots` strategy), told how to behave by
//! its [`Plan`] and keeping a [`Log`] of what it saw; [`check`] is what a
//! tournament is held to afterwards — its standings recomputed from its
//! games' records, its games the ones the bots saw end, each once, and how
//! long players waited to be paired.

pub mod bot;
pub mod check;

use std::ops::Range;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// Milliseconds since the epoch now, as the server's `ends_at` counts them.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Who a bot is and how it behaves.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Its account's name.
    pub name: String,
    /// `perfect`, `heuristic` or `random`.
    pub strategy: &'static str,
    /// Goes berserk in every game, before its first move.
    pub berserk: bool,
    /// Leaves (once free) at this Unix ms, and joins again this long after.
    pub pause: Option<(i64, Duration)>,
    /// From this Unix ms on, holds each move (1 s, or until just past the
    /// end), so that its game is still being played when the time is up.
    pub slow_from: Option<i64>,
    /// How long it takes over a move otherwise, in ms.
    pub think_ms: Range<i64>,
    /// Stops once out of its game after this Unix ms (else a moment after the end).
    pub quit_at: Option<i64>,
}

impl Plan {
    /// A bot called `name` playing `strategy` at a human pace, to the end.
    pub fn new(name: &str, strategy: &'static str) -> Plan {
        Plan {
            name: name.to_owned(),
            strategy,
            berserk: false,
            pause: None,
            slow_from: None,
            think_ms: 200..600,
            quit_at: None,
        }
    }
}

/// What a bot saw, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// It sent `tournament_join` (first, after its pause, or after a
    /// reconnect); `playing` when it was in a game then.
    Joined {
        /// In a game then (taken back with `resume`).
        playing: bool,
    },
    /// `game_started`.
    Started {
        /// Its `tournament`.
        tournament: Option<String>,
    },
    /// `game_over`, or an `invalid_token` naming a game that ended while it was away.
    Over {
        /// The record's id.
        game_id: String,
        /// How it ended.
        reason: String,
    },
    /// `room_closed`: free again.
    Closed {
        /// Why.
        reason: String,
    },
    /// The `state` answering its `resume` after a reconnect.
    Resumed,
    /// It sent `tournament_leave`.
    Left,
    /// Its connection went away.
    Dropped,
    /// An `error` frame.
    Refused(Value),
}

/// A bot's log: its name and each event with its time (Unix ms).
#[derive(Debug, Clone)]
pub struct Log {
    /// The account's name.
    pub name: String,
    /// What it saw, when.
    pub events: Vec<(i64, Event)>,
}
