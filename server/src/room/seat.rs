//! A seat of a room and its resume token. The token starts with the room's
//! code, so that the lobby can route a `resume` to the room that holds the
//! seat without a table of tokens; the rest is 128 random bits.

use std::sync::Arc;
use std::time::Instant;

use rand::Rng;

use super::output::ConnId;

/// A seated player.
#[derive(Debug)]
pub struct Seat {
    /// The player's connection (its last one, while away).
    pub conn: ConnId,
    /// Display name.
    pub name: Arc<str>,
    /// What `resume` takes to reclaim the seat.
    pub token: Arc<str>,
    /// Set while the player's connection is gone: when the seat is forfeited.
    pub away_until: Option<Instant>,
}

impl Seat {
    /// A present player in a seat of room `code`, with a fresh token.
    pub fn new(code: &str, conn: ConnId, name: Arc<str>) -> Seat {
        Seat { conn, name, token: new_token(code), away_until: None }
    }

    /// Whether the player's connection is here.
    pub fn present(&self) -> bool {
        self.away_until.is_none()
    }
}

/// The refusal for a token that holds no seat.
pub const INVALID_TOKEN: &str =
    "this resume token is not valid (wrong, or its game is over); start a new game";

/// A fresh token for a seat of room `code`: the code, then 128 random bits as
/// 32 hex digits.
pub fn new_token(code: &str) -> Arc<str> {
    let bits: u128 = rand::rng().random();
    format!("{code}{bits:032x}").into()
}

/// The code of the room a token belongs to, if it is long enough to have one.
pub fn token_room(token: &str, code_len: usize) -> Option<&str> {
    token.get(..code_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_room_and_differs_each_time() {
        let a = new_token("ROOM123456");
        assert_eq!(a.len(), 10 + 32);
        assert_eq!(token_room(&a, 10), Some("ROOM123456"));
        assert_ne!(a, new_token("ROOM123456"));
        assert_eq!(token_room("short", 10), None);
    }
}
