//! What a connection says to the lobby, in one type for every hop: a
//! session hands it to its lobby, the lobby hands one it cannot answer here
//! to the bus, and the bus ships it as it is to the instance that can, whose
//! ghost of the connection hands it to its own lobby.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tictactoe_protocol::{ErrorCode, HouseLevel, Player, RequestId, Rules};

use crate::core::account::Identity;

/// A request the lobby answers (or word it acts on) from one connection;
/// carried as [`super::LobbyCmd::Ask`] beside the connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum Ask {
    /// `quick_match`: wait for a game with these rules (`queued` is sent at once).
    QuickMatch {
        /// Who waits: its name and ratings show to the opponent.
        who: Arc<Identity>,
        /// Board size and win length, already validated.
        rules: Rules,
        /// Play the house at this level if nobody is paired within this long.
        house: Option<(Duration, HouseLevel)>,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// A `quick_match` entry that moved to the instance the matchmaker paired
    /// it on (or back from one that could not take it): it waits here, its
    /// `queued` sent already.
    Requeue {
        who: Arc<Identity>,
        rules: Rules,
        /// Play the house if nobody is paired within this long.
        house: Option<(Duration, HouseLevel)>,
    },
    /// Leave the queue for these rules.
    Cancel { rules: Rules },
    /// `create_room`.
    CreateRoom {
        /// The creator, seated first.
        who: Arc<Identity>,
        /// Board size and win length, already validated.
        rules: Rules,
        /// The creator's mark in the first game; random when `None`.
        mark: Option<Player>,
        /// An organised room's set-up; `None` for a plain private room.
        organise: Option<Box<Organise>>,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `join_room`.
    JoinRoom {
        /// The joiner, seated in the free seat.
        who: Arc<Identity>,
        /// The code as typed (normalized where it is looked up).
        room: String,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `spectate`.
    Spectate {
        /// The code as typed.
        room: String,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `resume`: the token names its room.
    Resume {
        token: String,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `who`.
    Who {
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `challenge` a player by name (the challenger is listed).
    Challenge {
        /// The challenger, as the challenged player's instance lists its ghost.
        who: Arc<Identity>,
        /// The challenger's address, for the limits kept per address.
        ip: std::net::IpAddr,
        name: String,
        /// Board size and win length, already validated.
        rules: Rules,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `accept` a challenge received: its game starts.
    Accept {
        /// The accepter, seated in the challenge's game.
        who: Arc<Identity>,
        challenge: String,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `decline` a challenge received (or withdraw one sent).
    Decline {
        challenge: String,
        /// Why, for the challenger.
        reason: Option<String>,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// `play_house`.
    PlayHouse {
        /// The player, seated against the house.
        who: Arc<Identity>,
        /// Board size and win length, already validated.
        rules: Rules,
        /// How strong the house plays.
        level: HouseLevel,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
    },
    /// The connection left idle with open challenges: those it sent end
    /// (it can no longer be drafted), and with `all` (its game started)
    /// those it received too.
    Engaged {
        /// A game started: every challenge of it ends.
        all: bool,
    },
    /// The connection's player has a new rating in a pool: `who` and a
    /// challenge show it.
    Rated {
        /// The pool.
        rules: Rules,
        shown: i64,
    },
    /// The connection closed: it is no longer listed, and its challenges end.
    Offline,
    /// A tournament paired the connection (drafted already by its
    /// instance) with `opponent`: their game opens where the opponent is
    /// (`at`, another instance; `None`: here), if the opponent is still free.
    TournamentMeet {
        /// The asking player, seated in the game.
        who: Arc<Identity>,
        /// The tournament's id.
        tournament: Arc<str>,
        /// Its games' terms.
        rules: Rules,
        /// The opponent's connection, by its number on its own instance.
        opponent: u64,
        /// The instance the opponent is on, when not this one.
        at: Option<Arc<str>>,
        /// When the tournament's time is up (Unix ms): no game starts after.
        ends_at: i64,
    },
}

/// Which instance answers an ask sent elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// The one that runs the room the ask names (`join_room`, `spectate`,
    /// `resume`): the bus looks it up. A `resume` nobody runs comes back
    /// as [`super::LobbyCmd::Park`] with `looks`, the looks for games to adopt it
    /// has waited already.
    Find {
        /// Looks waited already.
        looks: u8,
    },
    /// This one: the challenged player's, a challenge's, or the one the
    /// matchmaker paired a waiting player on.
    At(Arc<str>),
    /// Those the connection went to already (its queue there, its
    /// challenges there): the bus knows which.
    Followed,
}

/// The refusal of a challenge to a name nobody online has.
pub fn player_not_found(name: &str) -> (ErrorCode, String) {
    let shown: String = name.chars().take(40).collect();
    (
        ErrorCode::PlayerNotFound,
        format!("nobody called {shown:?} is online right now; a `who` request lists who is"),
    )
}

/// What an organiser sets a room up with (`create_room` with `host`,
/// `players`, `opening`, `games`), already checked.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Organise {
    /// The creator watches and does not play.
    pub host: bool,
    /// The names the seats are reserved for, X then O.
    pub players: Option<[Arc<str>; 2]>,
    /// Moves played at the start of every game of the room.
    pub opening: Vec<[u16; 2]>,
    /// The room closes after this many games.
    pub games: Option<u32>,
}
