//! The two players, their numbers and marks on the wire, and how a game
//! came out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One of the two seats, and its mark. `X` is player 1 and always moves
/// first. On the wire a player is its number, 1 or 2 (a `mark` field says
/// `"X"` or `"O"` through [`mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Player {
    /// Player 1, moves first.
    X,
    /// Player 2.
    O,
}

impl Player {
    /// The protocol's number for this player: 1 for `X`, 2 for `O`.
    pub fn number(self) -> u8 {
        match self {
            Player::X => 1,
            Player::O => 2,
        }
    }

    /// The player with protocol number 1 or 2; `None` for anything else.
    pub fn from_number(n: u8) -> Option<Player> {
        match n {
            1 => Some(Player::X),
            2 => Some(Player::O),
            _ => None,
        }
    }

    /// The other seat.
    pub fn other(self) -> Player {
        match self {
            Player::X => Player::O,
            Player::O => Player::X,
        }
    }

    /// The mark drawn for this player: `'X'` or `'O'`.
    pub fn mark(self) -> char {
        match self {
            Player::X => 'X',
            Player::O => 'O',
        }
    }

    /// The player who makes move `index` (0-based) of a game.
    pub fn for_move(index: usize) -> Player {
        if index % 2 == 0 { Player::X } else { Player::O }
    }

    pub(crate) fn delta(self) -> i32 {
        match self {
            Player::X => 1,
            Player::O => -1,
        }
    }
}

impl Serialize for Player {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.number())
    }
}

impl<'de> Deserialize<'de> for Player {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Player, D::Error> {
        let n = u8::deserialize(d)?;
        Player::from_number(n).ok_or_else(|| serde::de::Error::custom(format!("player {n} is not 1 or 2")))
    }
}

impl JsonSchema for Player {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Player".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "enum": [1, 2]})
    }
}

/// A player as its mark, `"X"` or `"O"`: `#[serde(with = "mark")]`.
pub mod mark {
    use super::Player;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `"X"` or `"O"`.
    pub fn serialize<S: Serializer>(p: &Player, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if *p == Player::X { "X" } else { "O" })
    }

    /// Reads `"X"` or `"O"`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Player, D::Error> {
        match <&str>::deserialize(d)? {
            "X" => Ok(Player::X),
            "O" => Ok(Player::O),
            other => Err(serde::de::Error::custom(format!("mark {other:?} is not X or O"))),
        }
    }

    /// The schema of a mark.
    pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "enum": ["X", "O"]})
    }
}

/// An optional mark, `"X"` or `"O"`: `#[serde(serialize_with =
/// "opt_mark::serialize")]` on an `Option<Player>` that is skipped when `None`.
pub mod opt_mark {
    use super::Player;
    use serde::Serializer;

    /// Writes `"X"`, `"O"` or null.
    pub fn serialize<S: Serializer>(p: &Option<Player>, s: S) -> Result<S::Ok, S::Error> {
        match p {
            Some(p) => super::mark::serialize(p, s),
            None => s.serialize_none(),
        }
    }

    /// The schema of an optional mark.
    pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"enum": ["X", "O", null]})
    }
}

/// A game's winner as the classic number, 0 for none, 1 or 2:
/// `#[serde(with = "winner")]` on an `Option<Player>`.
pub mod winner {
    use super::Player;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes 0, 1 or 2.
    pub fn serialize<S: Serializer>(w: &Option<Player>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(w.map_or(0, Player::number))
    }

    /// Reads 0, 1 or 2.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Player>, D::Error> {
        match u8::deserialize(d)? {
            0 => Ok(None),
            n => Player::from_number(n)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom(format!("winner {n} is not 0, 1 or 2"))),
        }
    }

    /// The schema of a winner.
    pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "enum": [0, 1, 2]})
    }
}

/// How a finished game came out, for the players: the shape of shakmaty's
/// `Outcome`. A game can also end with no outcome at all (a shutdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `winner` won (by a line, or because the other resigned, timed out or left).
    Decisive {
        /// Who won.
        winner: Player,
    },
    /// Nobody won: the board filled up.
    Draw,
}

impl Outcome {
    /// The winner, if there is one.
    pub fn winner(self) -> Option<Player> {
        match self {
            Outcome::Decisive { winner } => Some(winner),
            Outcome::Draw => None,
        }
    }
}
