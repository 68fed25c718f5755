//! What a connection is sent, through its bounded outbound queue: frames
//! serialized once ([`encode`]) and shared by all their recipients, and the
//! signals that change where the connection is. The same items cross the
//! bus, as they are, to a connection whose socket another instance holds.

use std::sync::Arc;

use tictactoe_protocol::Rules;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::RoomCmd;
use crate::core::ids::ConnId;
use crate::core::queue::{self, TrySendError};

/// One item of a connection's outbound queue: a frame to write, or a signal
/// that changes where the connection is (see `session::membership`). `L` is
/// the way to a room entered: a [`RoomLink`] in a queue, nothing on the bus
/// (the receiving instance links the room back through the bus itself).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum Outbound<L = RoomLink> {
    /// A serialized server message; shared by all its recipients.
    Frame(#[serde(with = "frame_text")] Utf8Bytes),
    /// The lobby refused the request (its `error` frame precedes this).
    Refused,
    /// The connection now belongs to this room.
    Entered {
        room: Arc<str>,
        /// The way to the room's inbox.
        link: L,
    },
    /// A challenge this connection sent was accepted: it now plays in this
    /// room, though it asked for nothing (the lobby claimed it first; see
    /// `presence`).
    Drafted {
        room: Arc<str>,
        /// The way to the room's inbox.
        link: L,
    },
    /// A game in the room started (`true`) or ended (`false`).
    Live {
        room: Arc<str>,
        /// Whether a game is in progress.
        live: bool,
    },
    /// A rated game ended: the connection's player now shows this rating
    /// in the pool of `rules`.
    Rated {
        /// The account rated (a connection that has since signed in as
        /// another ignores it).
        account: crate::core::account::AccountId,
        /// The pool.
        rules: Rules,
        shown: i64,
    },
    /// The room no longer holds the connection.
    Released { room: Arc<str> },
    /// Another connection resumed this one's seat: close with 4000.
    Replaced { room: Arc<str> },
    /// The instance that ran the connection's room stopped or died: close
    /// with 1012, for the player to `resume` where the game went on.
    Restart,
}

impl<L> Outbound<L> {
    /// The same item with the way to its room (if it names one) as `f`
    /// makes it: dropped as it goes on the bus, a bus link as it comes off.
    pub fn with_link<M>(self, f: impl FnOnce(L) -> M) -> Outbound<M> {
        match self {
            Outbound::Frame(frame) => Outbound::Frame(frame),
            Outbound::Refused => Outbound::Refused,
            Outbound::Entered { room, link } => Outbound::Entered { room, link: f(link) },
            Outbound::Drafted { room, link } => Outbound::Drafted { room, link: f(link) },
            Outbound::Live { room, live } => Outbound::Live { room, live },
            Outbound::Rated { account, rules, shown } => Outbound::Rated { account, rules, shown },
            Outbound::Released { room } => Outbound::Released { room },
            Outbound::Replaced { room } => Outbound::Replaced { room },
            Outbound::Restart => Outbound::Restart,
        }
    }
}

/// A frame crosses the bus as its text.
pub(crate) mod frame_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use tokio_tungstenite::tungstenite::Utf8Bytes;

    pub fn serialize<S: Serializer>(frame: &Utf8Bytes, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(frame.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Utf8Bytes, D::Error> {
        String::deserialize(d).map(Utf8Bytes::from)
    }
}

/// The way to a room's inbox, handed out by the lobby's directory once per
/// room a connection enters: the room's task in this process, or (in a
/// cluster) the bus to the instance whose task it is.
#[derive(Debug, Clone)]
pub enum RoomLink {
    /// A room task of this process.
    Local(queue::Sender<RoomCmd>),
    /// A room on another instance, reached over the bus.
    Remote(Arc<dyn RemoteRoom>),
}

/// The way to a room on another instance (the bus carries what it is handed).
pub trait RemoteRoom: Send + Sync + std::fmt::Debug {
    /// Hands the room `cmd` without waiting; a bus far behind gives it back.
    fn try_send(&self, cmd: RoomCmd) -> Result<(), TrySendError<RoomCmd>>;

    /// Hands the room `cmd`, a connection's last word; fails only if the bus is gone.
    fn force_send(&self, cmd: RoomCmd) -> Result<(), RoomCmd>;

    /// Hands the room `cmd`, waiting while the bus is behind.
    fn send(&self, cmd: RoomCmd) -> std::pin::Pin<Box<dyn Future<Output = Result<(), RoomCmd>> + Send + '_>>;
}

impl RoomLink {
    /// The link to a room task's inbox in this process.
    pub fn local(tx: queue::Sender<RoomCmd>) -> RoomLink {
        RoomLink::Local(tx)
    }

    /// Hands the room `cmd` without waiting; a full inbox gives it back.
    pub fn try_send(&self, cmd: RoomCmd) -> Result<(), TrySendError<RoomCmd>> {
        match self {
            RoomLink::Local(tx) => tx.try_send(cmd),
            RoomLink::Remote(room) => room.try_send(cmd),
        }
    }

    /// Hands the room `cmd` even over its inbox's bound (leaving and
    /// disconnecting must always arrive); fails only if the room is gone.
    pub fn force_send(&self, cmd: RoomCmd) -> Result<(), RoomCmd> {
        match self {
            RoomLink::Local(tx) => tx.force_send(cmd),
            RoomLink::Remote(room) => room.force_send(cmd),
        }
    }

    /// Hands the room `cmd`, waiting for room in its inbox.
    pub async fn send(&self, cmd: RoomCmd) -> Result<(), RoomCmd> {
        match self {
            RoomLink::Local(tx) => tx.send(cmd).await,
            RoomLink::Remote(room) => room.send(cmd).await,
        }
    }
}

/// How the lobby and rooms reach one connection: a bounded queue, never awaited.
#[derive(Debug, Clone)]
pub struct ConnHandle {
    /// The connection's number.
    pub id: ConnId,
    tx: queue::Sender<Outbound>,
    /// The client's address, for the limits kept per address past the
    /// session (a ghost has none here: its own instance keeps them).
    ip: Option<std::net::IpAddr>,
}

impl ConnHandle {
    /// A handle on the connection's queue `tx`.
    pub fn new(id: ConnId, tx: queue::Sender<Outbound>) -> Self {
        ConnHandle { id, tx, ip: None }
    }

    /// The same handle, for a client at `ip`.
    pub fn with_ip(self, ip: std::net::IpAddr) -> Self {
        ConnHandle { ip: Some(ip), ..self }
    }

    /// The client's address, when its socket is here.
    pub fn ip(&self) -> Option<std::net::IpAddr> {
        self.ip
    }

    /// Queues `item` without waiting. A full queue means a client that cannot
    /// keep up: it is dropped. Returns false when the connection is gone.
    pub fn send(&self, item: Outbound) -> bool {
        match self.tx.try_send(item) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                tracing::debug!(conn = %self.id, "outbound queue full; dropping the client");
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

/// Frames are serialized into chunks of this many bytes: one reference-counted
/// allocation shared by the frames in it, instead of two allocations (the text
/// and its reference count) per frame. A frame still queued for a slow client
/// keeps its chunk alive, so a chunk is small: with `--outbound-queue` 256, a
/// client's queue pins at most 256 KiB before the client is dropped.
const FRAME_CHUNK: usize = 1024;

thread_local! {
    static CHUNK: std::cell::RefCell<bytes::BytesMut> = std::cell::RefCell::new(bytes::BytesMut::new());
}

/// Serializes a message once into a shareable frame.
pub fn encode(message: &tictactoe_protocol::ServerMessage) -> Utf8Bytes {
    use bytes::BufMut;
    CHUNK.with_borrow_mut(|chunk| {
        if chunk.capacity() < FRAME_CHUNK / 4 {
            *chunk = bytes::BytesMut::with_capacity(FRAME_CHUNK);
        }
        // Serializing these types cannot fail: every map key is a string.
        if serde_json::to_writer((&mut *chunk).writer(), message).is_err() {
            chunk.clear();
        }
        Utf8Bytes::try_from(chunk.split().freeze()).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tictactoe_protocol::{ErrorCode, Player, ServerMessage};

    fn moved(seq: usize) -> ServerMessage {
        ServerMessage::Moved {
            clocks: None,
            running: None,
            room: Arc::from("ROOM"),
            row: 1,
            col: 2,
            player: Player::X,
            seq,
            next: Some(Player::O),
            clock_ms: None,
            id: None,
        }
    }

    #[test]
    fn frames_from_one_chunk_and_across_chunks_keep_their_own_text() {
        // Enough frames to fill several chunks, one of them larger than a chunk.
        let big = ServerMessage::error(ErrorCode::BadMessage, "x".repeat(3 * FRAME_CHUNK), None);
        let mut messages: Vec<ServerMessage> = (1..=40).map(moved).collect();
        messages.insert(17, big);
        let frames: Vec<Utf8Bytes> = messages.iter().map(encode).collect();
        for (frame, message) in frames.iter().zip(&messages) {
            assert_eq!(frame.as_str(), message.to_json());
        }
    }
}
