//! Rooms reached across instances. A room lives on one instance; a player
//! whose socket another instance holds reaches it through the bus:
//!
//! - on the player's instance, the connection's [`RoomLink`] is a
//!   [`BusLink`]: its requests go out as [`Wire::Request`], its end as
//!   [`Wire::Gone`]; what the room says comes back as [`Wire::Out`] and is
//!   queued to the connection as if the room were here;
//! - on the room's instance, a *ghost* stands in for the connection: a
//!   connection handle like any other (the lobby and the room cannot tell),
//!   whose queue the ghost's task reads and sends back over the bus.
//!
//! Messages to one instance travel in order on its channel (one Redis
//! connection publishes them, one subscription reads them). What the bus
//! drains at once for one instance goes as one [`Envelope`], and a frame
//! that several connections there are sent (a room's broadcast to its
//! spectators) crosses once, as a [`Wire::Fanout`] (see [`pack`]): a room's
//! frames cost one message per instance, not one per watcher. What is lost
//! while Redis is down is healed by a `sync` of each relayed connection's
//! room once it is back.

mod ghost;
mod pack;

pub use ghost::{GhostCmd, ghost};
pub use pack::pack;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tictactoe_protocol::RequestId;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::cmd::{Ask, Outbound, RemoteRoom, Request, RoomCmd, RoomLink};
use crate::core::queue::TrySendError;
use tictactoe_protocol::Rules;

/// A message from one instance to another, on the receiver's channel: what
/// the sender's bus had for it at once, in the order it is to be handled.
///
/// The format is this build's own: every instance of a cluster runs the
/// same build (an envelope of another version is logged and dropped, not
/// understood). It changed from one [`Wire`] per envelope (`msg`) to a
/// list (`msgs`) with [`Wire::Fanout`].
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope {
    /// The sending instance.
    pub from: Arc<str>,
    /// Its run: a number drawn at its start.
    pub run: u64,
    /// What it says, in order.
    pub msgs: Vec<Wire>,
}

impl Envelope {
    /// How many connection-level items it carries: a fanout counts once per
    /// connection it names (for `ttt_relay_items_total`).
    pub fn items(&self) -> usize {
        self.msgs.iter().map(|m| if let Wire::Fanout { conns, .. } = m { conns.len() } else { 1 }).sum()
    }
}

/// What instances say to each other about relayed connections. `conn` is
/// the connection's number on the instance that holds its socket.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum Wire {
    /// To the instance that answers it: what the connection asks or says
    /// there (to enter a room or a queue, of its challenges there).
    Ask {
        /// The connection.
        conn: u64,
        ask: Ask,
    },
    /// To a room's instance: a request of the connection in a room there.
    Request {
        /// The connection.
        conn: u64,
        request: Request,
        id: Option<RequestId>,
    },
    /// To a room's instance: the connection closed.
    Gone {
        /// The connection.
        conn: u64,
    },
    /// To a room's instance, after Redis was away: what the connection may
    /// have missed meanwhile is to be told again (see [`GhostCmd::Heal`]).
    Heal {
        /// The connection.
        conn: u64,
    },
    /// From the matchmaker to a waiting player's instance: it is paired
    /// on `host`, and moves there if it still waits.
    Pair {
        /// The waiting connection.
        conn: u64,
        rules: Rules,
        /// Where it plays.
        host: Arc<str>,
    },
    /// From the leader to a tournament player's instance: its player meets
    /// the opponent if both are still free.
    TournamentPair(crate::cmd::TournamentPairing),
    /// To a player's instance: an item of the connection's queue (a room
    /// it names is reached back through the bus).
    Out {
        /// The connection.
        conn: u64,
        item: Outbound<()>,
    },
    /// To a player's instance: the same frame for each of `conns`, in
    /// their order, as if each had been sent [`Wire::Out`] here (a room's
    /// broadcast to several connections there crosses once).
    Fanout {
        /// The connections.
        conns: Vec<u64>,
        #[serde(with = "crate::cmd::frame_text")]
        frame: Utf8Bytes,
    },
}

/// One message for the bus to publish.
#[derive(Debug)]
pub struct Outgoing {
    /// The instance whose channel it goes on.
    pub to: Arc<str>,
    /// What it says.
    pub msg: Wire,
}

/// Where messages for other instances queue for the bus.
pub type ToInstances = mpsc::Sender<Outgoing>;

/// How many messages may wait for the bus before relayed requests wait too.
pub const TO_INSTANCES: usize = 1 << 16;

/// The link of a connection to a room on another instance.
#[derive(Debug, Clone)]
pub struct BusLink {
    /// The room's instance.
    pub to: Arc<str>,
    /// The bus's queue.
    pub out: ToInstances,
}

impl BusLink {
    fn wire(cmd: &RoomCmd) -> Option<Wire> {
        match cmd {
            RoomCmd::Request { conn, request, id } => {
                Some(Wire::Request { conn: conn.seq(), request: request.clone(), id: id.clone() })
            }
            RoomCmd::Disconnected { conn } => Some(Wire::Gone { conn: conn.seq() }),
            // Entering goes through the lobby, never through a link.
            RoomCmd::Join { .. } | RoomCmd::Spectate { .. } | RoomCmd::Resume { .. } | RoomCmd::Lost => None,
        }
    }
}

impl RemoteRoom for BusLink {
    fn try_send(&self, cmd: RoomCmd) -> Result<(), TrySendError<RoomCmd>> {
        let Some(msg) = Self::wire(&cmd) else { return Err(TrySendError::Closed(cmd)) };
        match self.out.try_send(Outgoing { to: self.to.clone(), msg }) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => Err(TrySendError::Full(cmd)),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(TrySendError::Closed(cmd)),
        }
    }

    // Only a bus gone (or hopelessly behind) loses a last word, and the
    // room's instance then lets the seat go on its own.
    fn force_send(&self, cmd: RoomCmd) -> Result<(), RoomCmd> {
        self.try_send(cmd).map_err(|e| match e {
            TrySendError::Full(c) | TrySendError::Closed(c) => c,
        })
    }

    fn send(&self, cmd: RoomCmd) -> std::pin::Pin<Box<dyn Future<Output = Result<(), RoomCmd>> + Send + '_>> {
        Box::pin(async move {
            let Some(msg) = Self::wire(&cmd) else { return Err(cmd) };
            self.out.send(Outgoing { to: self.to.clone(), msg }).await.map_err(|_| cmd)
        })
    }
}

/// An item that came over the bus from instance `from`, as the
/// connection's queue takes it: a room it names is reached back through `out`.
pub fn outbound(item: Outbound<()>, from: &Arc<str>, out: &ToInstances) -> Outbound {
    item.with_link(|()| RoomLink::Remote(Arc::new(BusLink { to: from.clone(), out: out.clone() })))
}

/// How a `game_over` frame begins (`type` is serialized first): the
/// ghost and the router watch for the end of a relayed game.
pub const GAME_OVER: &str = "{\"type\":\"game_over\"";
/// How a `game_started` frame begins.
pub const GAME_STARTED: &str = "{\"type\":\"game_started\"";
