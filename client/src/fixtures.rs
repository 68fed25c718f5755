//! Messages the client's unit tests feed its state machines.

use std::sync::Arc;
use std::time::Duration;

use tictactoe_protocol::{Limits, Player, PlayerInfo, ServerMessage};

/// A server's limits with a reconnect grace of `grace`.
pub fn limits(grace: Duration) -> Limits {
    Limits {
        min_size: 3,
        max_size: 10,
        turn_timeout_ms: 0,
        reconnect_grace_ms: grace.as_millis() as u64,
        max_message_bytes: 4096,
        max_messages_per_second: 0,
        ping_interval_ms: 10_000,
        handshake_timeout_ms: 5_000,
    }
}

/// `game_started` of a 3×3 game in room `R` between ann (X, you) and bob.
pub fn game_started(token: &str) -> ServerMessage {
    ServerMessage::GameStarted {
        room: Arc::from("R"),
        size: 3,
        win: 3,
        you: Player::X,
        mark: Player::X,
        players: vec![PlayerInfo::guest("ann"), PlayerInfo::guest("bob")],
        turn: Player::X,
        resume_token: Arc::from(token),
        turn_timeout_ms: 0,
    }
}

/// `challenged`: ann (a guest) challenges you to a `size`×`size` game, as
/// challenge `c1`.
pub fn challenged(size: usize) -> ServerMessage {
    ServerMessage::Challenged {
        challenge: Arc::from("c1"),
        from: PlayerInfo::guest("ann"),
        size,
        win: size,
        expires_ms: 30_000,
    }
}
