//! What the lobby and rooms send to a connection, and the handle they send it by.

use std::sync::Arc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::queue::{self, TrySendError};
use crate::room_task::RoomCmd;

/// A connection's unique number for the server's lifetime.
pub type ConnId = u64;

/// One item of a connection's outbound queue.
#[derive(Debug)]
pub enum Outbound {
    /// A serialized server message; shared by all its recipients.
    Frame(Utf8Bytes),
    /// The lobby put the connection in the matchmaking queue.
    Queued,
    /// The lobby refused the request (its `error` frame precedes this).
    Refused,
    /// The connection now belongs to this room.
    Entered {
        /// The room code.
        room: Arc<str>,
        /// The room's inbox.
        tx: queue::Sender<RoomCmd>,
    },
    /// A game in the room started (`true`) or ended (`false`).
    Live {
        /// The room code.
        room: Arc<str>,
        /// Whether a game is in progress.
        live: bool,
    },
    /// The room no longer holds the connection.
    Released {
        /// The room code.
        room: Arc<str>,
    },
}

/// How the lobby and rooms reach one connection: a bounded queue, never awaited.
#[derive(Debug, Clone)]
pub struct ConnHandle {
    /// The connection's number.
    pub id: ConnId,
    tx: queue::Sender<Outbound>,
}

impl ConnHandle {
    /// A handle on the connection's queue `tx`.
    pub fn new(id: ConnId, tx: queue::Sender<Outbound>) -> Self {
        ConnHandle { id, tx }
    }

    /// Queues `item` without waiting. A full queue means a client that cannot
    /// keep up: it is dropped. Returns false when the connection is gone.
    pub fn send(&self, item: Outbound) -> bool {
        match self.tx.try_send(item) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                tracing::debug!(conn = self.id, "outbound queue full; dropping the client");
                self.tx.kill();
                false
            }
            Err(TrySendError::Closed(_)) => false,
        }
    }

    /// Whether the connection's task has ended.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Queues one serialized message.
    pub fn frame(&self, frame: &Utf8Bytes) -> bool {
        self.send(Outbound::Frame(frame.clone()))
    }
}

/// Serializes a message once into a shareable frame.
pub fn encode(message: &tictactoe_protocol::ServerMessage) -> Utf8Bytes {
    Utf8Bytes::from(message.to_json())
}
