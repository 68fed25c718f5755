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
//! connection publishes them, one subscription reads them); what is lost
//! while Redis is down is healed by a `sync` of each relayed connection's
//! room once it is back.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use tictactoe_protocol::{ErrorCode, RequestId, ServerMessage};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::cluster::ids::{ConnId, RELAYED};
use crate::cmd::{Ask, ConnHandle, LobbyCmd, Outbound, RemoteRoom, Request, RoomCmd, RoomLink, encode};
use crate::net::queue::{self, Recv, TrySendError};
use tictactoe_protocol::Rules;

/// A message from one instance to another, on the receiver's channel.
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope {
    /// The sending instance.
    pub from: Arc<str>,
    /// Its run: a number drawn at its start.
    pub run: u64,
    /// What it says.
    pub msg: Wire,
}

/// What instances say to each other about relayed connections. `conn` is
/// the connection's number on the instance that holds its socket.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Wire {
    /// To the instance that answers it: what the connection asks or says
    /// there (to enter a room or a queue, of its challenges there).
    Ask {
        /// The connection.
        conn: u64,
        /// What it asks.
        ask: Ask,
    },
    /// To a room's instance: a request of the connection in a room there.
    Request {
        /// The connection.
        conn: u64,
        /// The request.
        request: Request,
        /// Its id.
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
        /// The rules it waits for.
        rules: Rules,
        /// Where it plays.
        host: Arc<str>,
    },
    /// To a player's instance: an item of the connection's queue (a room
    /// it names is reached back through the bus).
    Out {
        /// The connection.
        conn: u64,
        /// The item.
        item: Outbound<()>,
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
pub type Outbox = mpsc::Sender<Outgoing>;

/// How many messages may wait for the bus before relayed requests wait too.
pub const OUTBOX: usize = 1 << 16;

/// The link of a connection to a room on another instance.
#[derive(Debug, Clone)]
pub struct BusLink {
    /// The room's instance.
    pub to: Arc<str>,
    /// The bus's queue.
    pub out: Outbox,
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
pub fn outbound(item: Outbound<()>, from: &Arc<str>, out: &Outbox) -> Outbound {
    item.with_link(|()| RoomLink::Remote(Arc::new(BusLink { to: from.clone(), out: out.clone() })))
}

/// What the bus hands a ghost.
#[derive(Debug)]
pub enum GhostCmd {
    /// What the connection asks this instance's lobby.
    Ask(Ask),
    /// A request to the room it is in.
    Request {
        /// The request.
        request: Request,
        /// Its id.
        id: Option<RequestId>,
    },
    /// The connection closed.
    Gone,
    /// Redis was away: the connection is sent the truth to go on from —
    /// its game's `game_over` if it ended, else the room's `state`, or that
    /// its room let it go.
    Heal,
}

/// Numbers the ghosts of this instance (their ids say [`RELAYED`]).
static GHOSTS: AtomicU64 = AtomicU64::new(1);

/// Starts the ghost of connection `conn` of instance `from`: it enters
/// through `lobby`, and what reaches it goes back through `out`. Returns
/// where the bus hands it commands.
pub fn ghost(
    from: Arc<str>,
    conn: u64,
    queue_len: usize,
    lobby: mpsc::Sender<LobbyCmd>,
    out: Outbox,
) -> mpsc::UnboundedSender<GhostCmd> {
    let (tx, cmds) = mpsc::unbounded_channel();
    let (qtx, rx) = queue::channel(queue_len);
    let me = ConnHandle::new(ConnId::new(RELAYED, GHOSTS.fetch_add(1, Ordering::Relaxed)), qtx);
    let presence = Arc::new(GhostPresence::default());
    let ghost = Ghost {
        from,
        conn,
        me,
        lobby,
        out,
        room: None,
        last_room: None,
        last_over: None,
        queued: None,
        presence,
        listed: false,
    };
    tokio::spawn(ghost.run(rx, cmds));
    tx
}

/// How a `game_over` frame begins (`type` is serialized first): the
/// ghost and the router watch for the end of a relayed game.
pub const GAME_OVER: &str = "{\"type\":\"game_over\"";
/// How a `game_started` frame begins.
pub const GAME_STARTED: &str = "{\"type\":\"game_started\"";

/// A relayed connection as its room's instance keeps it.
struct Ghost {
    from: Arc<str>,
    conn: u64,
    me: ConnHandle,
    lobby: mpsc::Sender<LobbyCmd>,
    out: Outbox,
    /// The room it is in, and the way there.
    room: Option<(Arc<str>, RoomLink)>,
    /// The last room it entered.
    last_room: Option<Arc<str>>,
    /// The `game_over` of the last game it played there, until another
    /// starts: what heals a connection that missed it while Redis was down.
    last_over: Option<Utf8Bytes>,
    /// The rules it waits for in the queue here.
    queued: Option<Rules>,
    /// Whether a challenge of its drafted it (as the lobby sees it).
    presence: Arc<GhostPresence>,
    /// Whether it is in the lobby's list (to challenge from here).
    listed: bool,
}

/// Where a ghost stands for the challenges it sent from here: idle (its
/// own instance let it challenge) until a challenge of its is accepted,
/// and again once that game's room lets it go.
#[derive(Debug, Default)]
struct GhostPresence {
    drafted: std::sync::atomic::AtomicBool,
}

impl crate::lobby::presence::Whereabouts for GhostPresence {
    fn status(&self) -> crate::lobby::presence::Status {
        match self.drafted.load(Ordering::SeqCst) {
            true => crate::lobby::presence::Status::Drafted,
            false => crate::lobby::presence::Status::Idle,
        }
    }

    fn draft(&self) -> Result<(), crate::lobby::presence::Status> {
        self.drafted
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .map(|_| ())
            .map_err(|_| crate::lobby::presence::Status::Drafted)
    }

    fn add_challenge(&self) {}

    fn end_challenge(&self) {}
}

impl Ghost {
    async fn run(mut self, mut rx: queue::Receiver<Outbound>, mut cmds: mpsc::UnboundedReceiver<GhostCmd>) {
        loop {
            tokio::select! {
                item = rx.recv() => match item {
                    Recv::Item(item) => {
                        if !self.back(item).await {
                            break;
                        }
                    }
                    // Killed: the other side could not keep up.
                    Recv::Ended | Recv::Killed => {
                        self.leave().await;
                        let _ = self.send(Outbound::Restart).await;
                        return;
                    }
                },
                cmd = cmds.recv() => match cmd {
                    Some(GhostCmd::Ask(ask)) => self.ask(ask).await,
                    Some(GhostCmd::Request { request, id }) => self.request(request, id).await,
                    Some(GhostCmd::Heal) => self.heal().await,
                    Some(GhostCmd::Gone) | None => break,
                },
            }
        }
        self.leave().await;
    }

    /// The connection is gone: its room, queue and challenges hear it as
    /// from a socket.
    async fn leave(&mut self) {
        if self.listed {
            let _ = self.lobby.send(LobbyCmd::Ask { conn: self.me.clone(), ask: Ask::Offline }).await;
        }
        if let Some((_, link)) = self.room.take() {
            let _ = link.force_send(RoomCmd::Disconnected { conn: self.me.id });
        }
        if let Some(rules) = self.queued.take() {
            let ask = Ask::Cancel { rules };
            let _ = self.lobby.send(LobbyCmd::Ask { conn: self.me.clone(), ask }).await;
        }
    }

    /// Hands its lobby what the connection asks, keeping what it must
    /// undo when the connection goes: its wait in a queue, its listing.
    async fn ask(&mut self, ask: Ask) {
        match &ask {
            Ask::Requeue { rules, .. } => self.queued = Some(*rules),
            Ask::Cancel { .. } => self.queued = None,
            Ask::Challenge { who, .. } if !self.listed => {
                self.listed = true;
                let (conn, who, presence) = (self.me.clone(), who.clone(), self.presence.clone());
                let _ = self.lobby.send(LobbyCmd::Online { conn, who, presence }).await;
            }
            _ => {}
        }
        let _ = self.lobby.send(LobbyCmd::Ask { conn: self.me.clone(), ask }).await;
    }

    /// See [`GhostCmd::Heal`]. A game that is over is told by its
    /// `game_over` (a `state` would show the board but not the result).
    async fn heal(&mut self) {
        if let Some(over) = &self.last_over {
            self.send(Outbound::Frame(over.clone())).await;
        }
        match (&self.room, self.last_room.clone()) {
            (Some(_), _) if self.last_over.is_none() => self.request(Request::Sync, None).await,
            (None, Some(room)) => {
                self.send(Outbound::Released { room }).await;
            }
            _ => {}
        }
    }

    async fn request(&mut self, request: Request, id: Option<RequestId>) {
        let Some((_, link)) = &self.room else {
            // Its room let it go while the request was on its way: as a
            // connection here would be, it is told so and is in no room.
            let refusal = ServerMessage::error(ErrorCode::NotInGame, crate::room::ROOM_CLOSED, id);
            self.send(Outbound::Frame(encode(&refusal))).await;
            if let Some(room) = self.last_room.clone() {
                self.send(Outbound::Released { room }).await;
            }
            return;
        };
        let link = link.clone();
        if request == Request::Leave {
            self.room = None;
        }
        let cmd = RoomCmd::Request { conn: self.me.id, request, id };
        if let Err(TrySendError::Full(cmd)) = link.try_send(cmd) {
            let _ = link.send(cmd).await;
        }
    }

    /// Sends `item` back to the connection, keeping what heals it and
    /// what its end must undo; false when the bus is gone.
    async fn back(&mut self, item: Outbound) -> bool {
        match &item {
            Outbound::Frame(frame) => {
                if frame.as_str().starts_with(GAME_OVER) {
                    self.last_over = Some(frame.clone());
                } else if frame.as_str().starts_with(GAME_STARTED) {
                    self.last_over = None;
                }
            }
            Outbound::Entered { room, link } | Outbound::Drafted { room, link } => {
                if let Outbound::Entered { .. } = item {
                    self.last_over = None;
                }
                self.queued = None;
                self.last_room = Some(room.clone());
                self.room = Some((room.clone(), link.clone()));
            }
            Outbound::Live { live: false, .. } => self.presence.drafted.store(false, Ordering::SeqCst),
            Outbound::Released { room } => {
                if self.room.as_ref().is_some_and(|(r, _)| r == room) {
                    self.room = None;
                    self.presence.drafted.store(false, Ordering::SeqCst);
                }
            }
            Outbound::Replaced { room } => {
                if self.room.as_ref().is_some_and(|(r, _)| r == room) {
                    self.room = None;
                }
            }
            Outbound::Live { .. } | Outbound::Refused | Outbound::Rated { .. } | Outbound::Restart => {}
        }
        self.send(item.with_link(|_| ())).await
    }

    async fn send(&self, item: Outbound<()>) -> bool {
        let msg = Wire::Out { conn: self.conn, item };
        self.out.send(Outgoing { to: self.from.clone(), msg }).await.is_ok()
    }
}
