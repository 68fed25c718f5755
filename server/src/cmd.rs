//! The commands that tasks send each other: to a room's inbox, to the lobby's,
//! and to a connection's outbound queue, where a server message travels as a
//! frame serialized once ([`encode`]) and shared by all its recipients. It
//! names the tasks' inputs without depending on the tasks.

use std::sync::Arc;

use crate::core::account::Identity;

use tictactoe_protocol::{HouseLevel, Player, RequestId};

use crate::core::presence::Whereabouts;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::core::ids::ConnId;
use crate::core::queue::{self, TrySendError};
use tictactoe_protocol::Rules;

/// What a room's inbox receives.
#[derive(Debug)]
pub enum RoomCmd<C = ConnHandle> {
    /// Take the free seat of a private room.
    Join {
        /// The joining connection.
        conn: C,
        /// Who is asking: display name and account.
        name: Arc<Identity>,
        /// The request id.
        id: Option<RequestId>,
    },
    /// Watch the room.
    Spectate {
        /// The watching connection.
        conn: C,
        /// The request id.
        id: Option<RequestId>,
    },
    /// Reclaim a seat with its token.
    Resume {
        /// The new connection.
        conn: C,
        /// The seat's resume token.
        token: String,
        /// The request id.
        id: Option<RequestId>,
    },
    /// A request from a connection in the room.
    Request {
        /// The sender.
        conn: ConnId,
        /// What it asks.
        request: Request,
        /// The request id.
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
pub enum LobbyCmd<C = ConnHandle> {
    /// Queue for a game with these rules.
    QuickMatch {
        /// The player.
        conn: C,
        /// Who is asking: display name and account.
        name: Arc<Identity>,
        /// Board size and win length, already validated.
        rules: Rules,
        /// Play the house at this level if nobody is paired within this long.
        house: Option<(std::time::Duration, HouseLevel)>,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Open a private room.
    CreateRoom {
        /// The creator.
        conn: C,
        /// Who is asking: display name and account.
        name: Arc<Identity>,
        /// Board size and win length, already validated.
        rules: Rules,
        /// The creator's mark in the first game; random when `None`.
        mark: Option<Player>,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Join a private room by code.
    JoinRoom {
        /// The joiner.
        conn: C,
        /// Who is asking: display name and account.
        name: Arc<Identity>,
        /// The code as typed.
        room: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Watch a room by code.
    Spectate {
        /// The spectator.
        conn: C,
        /// The code as typed.
        room: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Reclaim a seat; the token names its room.
    Resume {
        /// The new connection.
        conn: C,
        /// The resume token.
        token: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Leave the queue for these rules.
    Cancel {
        /// The leaving connection.
        conn: ConnId,
        /// The rules it queued for.
        rules: Rules,
    },
    /// A listed connection's player has a new rating in a pool.
    Rated {
        /// The connection.
        conn: ConnId,
        /// The pool.
        rules: Rules,
        /// The rating as shown.
        shown: i64,
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
    /// A listed connection closed.
    Offline {
        /// The closed connection.
        conn: ConnId,
    },
    /// A listed connection with open challenges left idle: the challenges
    /// it sent end (it can no longer be drafted), and with `all` (its game
    /// started) those it received too.
    Engaged {
        /// The connection.
        conn: ConnId,
        /// A game started: every challenge of it ends.
        all: bool,
    },
    /// List who is online.
    Who {
        /// The asker.
        conn: C,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Challenge a player by name (the challenger is listed).
    Challenge {
        /// The challenger.
        conn: C,
        /// The challenger's address, for the limits kept per address.
        ip: std::net::IpAddr,
        /// The name as typed.
        name: String,
        /// Board size and win length, already validated.
        rules: Rules,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Accept a challenge received: its game starts.
    Accept {
        /// The accepting connection.
        conn: C,
        /// Who it is.
        who: Arc<Identity>,
        /// The challenge's id.
        challenge: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Decline a challenge received (or withdraw one sent).
    Decline {
        /// The declining connection.
        conn: C,
        /// The challenge's id.
        challenge: String,
        /// Why, for the challenger.
        reason: Option<String>,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Play the house bot.
    PlayHouse {
        /// The player.
        conn: C,
        /// Who it is.
        who: Arc<Identity>,
        /// Board size and win length, already validated.
        rules: Rules,
        /// How strong the house plays.
        level: HouseLevel,
        /// Request id.
        id: Option<RequestId>,
    },
    /// In a cluster: a `quick_match` entry moved here from another
    /// instance to be paired (its `queued` was sent there).
    Requeue {
        /// The player.
        conn: C,
        /// Who it is.
        name: Arc<Identity>,
        /// The rules it waits for.
        rules: Rules,
        /// Play the house if nobody is paired within this long.
        house: Option<(std::time::Duration, HouseLevel)>,
    },
    /// In a cluster: a `resume` whose room no instance runs (yet) waits for
    /// this instance's next looks for games to adopt.
    Park {
        /// The connection.
        conn: C,
        /// The resume token.
        token: String,
        /// Request id.
        id: Option<RequestId>,
        /// Looks it has waited already.
        looks: u8,
    },
    /// In a cluster: the matchmaker paired this instance's waiting player
    /// with one waiting on `host`; it moves there if it still waits.
    Paired {
        /// The waiting connection.
        conn: ConnId,
        /// The rules it waits for.
        rules: Rules,
        /// The instance it is paired on.
        host: Arc<str>,
    },
    /// A room's task ended.
    RoomClosed {
        /// Its code.
        room: Arc<str>,
        /// The resume tokens' hashes of its games that ended, each with
        /// the game's id: a later `resume` with one is told which game.
        ended: Vec<(crate::core::account::TokenHash, Arc<str>)>,
    },
}

impl<C> LobbyCmd<C> {
    /// The same command with its connection as `f` makes it (a session's id
    /// becomes its shell's handle).
    pub fn with_conn<D>(self, f: impl FnOnce(C) -> D) -> LobbyCmd<D> {
        use LobbyCmd as L;
        match self {
            L::QuickMatch { conn, name, rules, house, id } => {
                L::QuickMatch { conn: f(conn), name, rules, house, id }
            }
            L::CreateRoom { conn, name, rules, mark, id } => {
                L::CreateRoom { conn: f(conn), name, rules, mark, id }
            }
            L::JoinRoom { conn, name, room, id } => L::JoinRoom { conn: f(conn), name, room, id },
            L::Spectate { conn, room, id } => L::Spectate { conn: f(conn), room, id },
            L::Resume { conn, token, id } => L::Resume { conn: f(conn), token, id },
            L::Cancel { conn, rules } => L::Cancel { conn, rules },
            L::Online { conn, who, presence } => L::Online { conn: f(conn), who, presence },
            L::Offline { conn } => L::Offline { conn },
            L::Rated { conn, rules, shown } => L::Rated { conn, rules, shown },
            L::Engaged { conn, all } => L::Engaged { conn, all },
            L::Who { conn, id } => L::Who { conn: f(conn), id },
            L::Challenge { conn, ip, name, rules, id } => L::Challenge { conn: f(conn), ip, name, rules, id },
            L::Accept { conn, who, challenge, id } => L::Accept { conn: f(conn), who, challenge, id },
            L::Decline { conn, challenge, reason, id } => L::Decline { conn: f(conn), challenge, reason, id },
            L::PlayHouse { conn, who, rules, level, id } => {
                L::PlayHouse { conn: f(conn), who, rules, level, id }
            }
            L::Requeue { conn, name, rules, house } => L::Requeue { conn: f(conn), name, rules, house },
            L::Park { conn, token, id, looks } => L::Park { conn: f(conn), token, id, looks },
            L::Paired { conn, rules, host } => L::Paired { conn, rules, host },
            L::RoomClosed { room, ended } => L::RoomClosed { room, ended },
        }
    }
}

/// One item of a connection's outbound queue: a frame to write, or a signal
/// that changes where the connection is (see `session::membership`).
#[derive(Debug)]
pub enum Outbound {
    /// A serialized server message; shared by all its recipients.
    Frame(Utf8Bytes),
    /// The lobby refused the request (its `error` frame precedes this).
    Refused,
    /// The connection now belongs to this room.
    Entered {
        /// The room code.
        room: Arc<str>,
        /// The way to the room's inbox.
        link: RoomLink,
    },
    /// A challenge this connection sent was accepted: it now plays in this
    /// room, though it asked for nothing (the lobby claimed it first; see
    /// `presence`).
    Drafted {
        /// The room code.
        room: Arc<str>,
        /// The way to the room's inbox.
        link: RoomLink,
    },
    /// A game in the room started (`true`) or ended (`false`).
    Live {
        /// The room code.
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
        /// The rating as shown.
        shown: i64,
    },
    /// The room no longer holds the connection.
    Released {
        /// The room code.
        room: Arc<str>,
    },
    /// Another connection resumed this one's seat: close with 4000.
    Replaced {
        /// The room code.
        room: Arc<str>,
    },
    /// The instance that ran the connection's room stopped or died: close
    /// with 1012, for the player to `resume` where the game went on.
    Restart,
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

/// A player's request to the room it is in, forwarded by their connection.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Request {
    /// Place a mark at `(row, col)`.
    Move {
        /// 0-based row as sent (may be negative or too large).
        row: i64,
        /// 0-based column as sent.
        col: i64,
    },
    /// Concede the game.
    Resign,
    /// Ask for a new game with the seats swapped.
    Rematch,
    /// Leave the room (resigning a game in progress).
    Leave,
    /// Send me the room's `state` (seated players and spectators alike).
    Sync,
}
