//! The commands that tasks send each other: to a room's inbox, to the
//! lobby's ([`Ask`]: what a connection says to the lobby, the same on every
//! hop), and to a connection's outbound queue ([`Outbound`]). It names the
//! tasks' inputs without depending on the tasks.

mod ask;
mod outbound;

pub use ask::{Ask, Organise, Where, player_not_found};
pub(crate) use outbound::frame_text;
pub use outbound::{ConnHandle, Outbound, RemoteRoom, RoomLink, encode};

use std::sync::Arc;

use tictactoe_protocol::RequestId;

use crate::core::account::Identity;
use crate::core::ids::ConnId;
use crate::core::presence::Whereabouts;
use tictactoe_protocol::Rules;

/// What a room's inbox receives.
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum RoomCmd<C = ConnHandle> {
    /// Take the free seat of a private room.
    Join {
        /// The joining connection.
        conn: C,
        /// Who is asking: display name and account.
        name: Arc<Identity>,
        id: Option<RequestId>,
    },
    /// Watch the room.
    Spectate {
        /// The watching connection.
        conn: C,
        id: Option<RequestId>,
    },
    /// Reclaim a seat with its token.
    Resume {
        /// The new connection.
        conn: C,
        token: String,
        id: Option<RequestId>,
    },
    /// A request from a connection in the room.
    Request {
        /// The sender.
        conn: ConnId,
        request: Request,
        id: Option<RequestId>,
    },
    /// The connection is gone.
    Disconnected {
        /// The gone connection.
        conn: ConnId,
    },
    /// Another instance holds the room's game now (it adopted it while this
    /// one was cut off): its connections go there, the room closes.
    Lost,
}

/// What the lobby's inbox receives.
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum LobbyCmd<C = ConnHandle> {
    /// What a connection (here, or a ghost of one elsewhere) asks or tells.
    Ask {
        /// The connection, for the answer.
        conn: C,
        /// What it says.
        ask: Ask,
    },
    /// A connection said who it is: it is listed by `who` and may be
    /// challenged by name.
    Online {
        /// Its handle.
        conn: C,
        /// Its name and account.
        who: Arc<Identity>,
        /// Where it is, as it keeps it up to date.
        presence: Arc<dyn Whereabouts>,
    },
    /// In a cluster: a `resume` whose room no instance runs (yet) waits for
    /// this instance's next looks for games to adopt.
    Park {
        /// The connection.
        conn: C,
        token: String,
        /// Echoed in the answer, for the client to match it.
        id: Option<RequestId>,
        /// Looks it has waited already.
        looks: u8,
    },
    /// In a cluster: the matchmaker paired this instance's waiting player
    /// with one waiting on `host`; it moves there if it still waits.
    Paired {
        /// The waiting connection.
        conn: ConnId,
        rules: Rules,
        /// The instance it is paired on.
        host: Arc<str>,
    },
    /// A tournament paired this instance's player with another: the
    /// player is drafted if free, and they meet.
    TournamentPaired(TournamentPairing),
    /// A room's task ended.
    RoomClosed {
        /// Its code.
        room: Arc<str>,
        /// The resume tokens' hashes of its games that ended, each with
        /// the game's id: a later `resume` with one is told which game.
        ended: Vec<(crate::core::account::TokenHash, Arc<str>)>,
    },
}

/// A tournament's pairing of a player of one instance (`conn`) with
/// `opponent` (on `at`, else on the same instance), as the cluster's
/// leader sends it and that instance's lobby takes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TournamentPairing {
    /// The tournament's id.
    pub tournament: Arc<str>,
    /// Its games' terms.
    pub rules: Rules,
    /// The player, by its number on its instance.
    pub conn: u64,
    /// The opponent, by its number on its instance.
    pub opponent: u64,
    /// The opponent's instance, when another.
    pub at: Option<Arc<str>>,
    /// When the tournament's time is up (Unix ms): no game starts after.
    pub ends_at: i64,
}

/// What the lobby's state machine holds for a connection: it only needs its
/// id; what reaches the connection is the shell's business.
pub trait Peer: Clone + std::fmt::Debug {
    /// The connection's id.
    fn id(&self) -> ConnId;

    /// Whether the connection is known to be gone already (its `Cancel` or
    /// `Offline` may still be on the way).
    fn is_closed(&self) -> bool {
        false
    }

    /// Whether another instance holds the connection's socket (it reached
    /// this one over the bus).
    fn relayed(&self) -> bool {
        self.id().instance() != crate::core::ids::ALONE
    }
}

impl Peer for ConnHandle {
    fn id(&self) -> ConnId {
        self.id
    }

    fn is_closed(&self) -> bool {
        ConnHandle::is_closed(self)
    }
}

/// A player's request to the room it is in, forwarded by their connection.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Request {
    /// Place a mark at `(row, col)`.
    Move {
        /// 0-based row as sent (may be negative or too large).
        row: i64,
        /// 0-based column as sent.
        col: i64,
        /// The mover's network lag as its connection last measured it
        /// (a WebSocket ping's round trip): a Fischer clock credits it.
        #[serde(default)]
        lag_ms: u32,
    },
    /// Concede the game.
    Resign,
    /// Ask for a new game with the seats swapped.
    Rematch,
    /// Leave the room (resigning a game in progress).
    Leave,
    /// Send me the room's `state` (seated players and spectators alike).
    Sync,
    /// Go berserk in a tournament game, before my first move.
    Berserk,
}
