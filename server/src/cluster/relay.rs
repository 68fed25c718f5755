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
use tictactoe_protocol::{ErrorCode, HouseLevel, RequestId, ServerMessage};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::cmd::{ConnHandle, LobbyCmd, Outbound, RemoteRoom, Request, RoomCmd, RoomLink, encode};
use crate::core::account::{AccountId, Identity};
use crate::core::ids::{ConnId, RELAYED};
use crate::core::queue::{self, Recv, TrySendError};
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
    /// To a room's instance: the connection asks to enter (or queue).
    Enter {
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
    /// To a player's instance: an item of the connection's queue.
    Out {
        /// The connection.
        conn: u64,
        /// The item.
        item: Item,
    },
}

/// A request that enters a room (or the queue) on another instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum Ask {
    /// `join_room`.
    Join {
        /// The code as typed.
        room: String,
        /// Who asks.
        who: Identity,
        /// Request id.
        id: Option<RequestId>,
    },
    /// `spectate`.
    Spectate {
        /// The code as typed.
        room: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// `resume`.
    Resume {
        /// The token.
        token: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// A `quick_match` entry moved to the instance it is paired on.
    Queue {
        /// Who waits.
        who: Identity,
        /// The rules it waits for.
        rules: Rules,
        /// Play the house after this many milliseconds, at this level.
        house: Option<(u64, HouseLevel)>,
    },
    /// The connection left the queue it moved to.
    Cancel {
        /// The rules it waited for.
        rules: Rules,
    },
    /// `challenge` a player online on the instance it is sent to.
    Challenge {
        /// Who challenges.
        who: Identity,
        /// The challenger's address.
        ip: std::net::IpAddr,
        /// The name as typed.
        name: String,
        /// The rules.
        rules: Rules,
        /// Request id.
        id: Option<RequestId>,
    },
    /// `decline` (or withdraw) a challenge held there.
    Decline {
        /// The challenge's id.
        challenge: String,
        /// Why.
        reason: Option<String>,
        /// Request id.
        id: Option<RequestId>,
    },
    /// The connection left idle (`all`: a game started): its challenges end.
    Engaged {
        /// A game started.
        all: bool,
    },
}

/// An item of a connection's queue, as it crosses the bus.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "item", rename_all = "snake_case")]
pub enum Item {
    /// A serialized server message.
    Frame {
        /// Its text.
        text: String,
    },
    /// The request went nowhere.
    Refused,
    /// The connection is in the room.
    Entered {
        /// The room.
        room: Arc<str>,
    },
    /// The connection was drafted into the room.
    Drafted {
        /// The room.
        room: Arc<str>,
    },
    /// A game in the room started or ended.
    Live {
        /// The room.
        room: Arc<str>,
        /// Whether a game is in progress.
        live: bool,
    },
    /// A rated game ended.
    Rated {
        /// The account.
        account: AccountId,
        /// The pool.
        rules: Rules,
        /// The rating as shown.
        shown: i64,
    },
    /// The room let the connection go.
    Released {
        /// The room.
        room: Arc<str>,
    },
    /// Another connection took the seat.
    Replaced {
        /// The room.
        room: Arc<str>,
    },
    /// The room's side is gone: close with 1012.
    Restart,
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

/// Turns an item that came over the bus into what the connection's queue
/// takes; a room named in it is reached back through `from`.
pub fn outbound(item: Item, from: &Arc<str>, out: &Outbox) -> Outbound {
    let link = || RoomLink::Remote(Arc::new(BusLink { to: from.clone(), out: out.clone() }));
    match item {
        Item::Frame { text } => Outbound::Frame(Utf8Bytes::from(text)),
        Item::Refused => Outbound::Refused,
        Item::Entered { room } => Outbound::Entered { room, link: link() },
        Item::Drafted { room } => Outbound::Drafted { room, link: link() },
        Item::Live { room, live } => Outbound::Live { room, live },
        Item::Rated { account, rules, shown } => Outbound::Rated { account, rules, shown },
        Item::Released { room } => Outbound::Released { room },
        Item::Replaced { room } => Outbound::Replaced { room },
        Item::Restart => Outbound::Restart,
    }
}

/// What the bus hands a ghost.
#[derive(Debug)]
pub enum GhostCmd {
    /// Enter a room or the queue.
    Enter(Ask),
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
    last_over: Option<String>,
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

impl crate::core::presence::Whereabouts for GhostPresence {
    fn status(&self) -> crate::core::presence::Status {
        match self.drafted.load(Ordering::SeqCst) {
            true => crate::core::presence::Status::Drafted,
            false => crate::core::presence::Status::Idle,
        }
    }

    fn draft(&self) -> Result<(), crate::core::presence::Status> {
        self.drafted
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .map(|_| ())
            .map_err(|_| crate::core::presence::Status::Drafted)
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
                        let _ = self.send(Item::Restart).await;
                        return;
                    }
                },
                cmd = cmds.recv() => match cmd {
                    Some(GhostCmd::Enter(ask)) => self.enter(ask).await,
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
            let _ = self.lobby.send(LobbyCmd::Offline { conn: self.me.id }).await;
        }
        if let Some((_, link)) = self.room.take() {
            let _ = link.force_send(RoomCmd::Disconnected { conn: self.me.id });
        }
        if let Some(rules) = self.queued.take() {
            let _ = self.lobby.send(LobbyCmd::Cancel { conn: self.me.id, rules }).await;
        }
    }

    async fn enter(&mut self, ask: Ask) {
        let conn = self.me.clone();
        let cmd = match ask {
            Ask::Join { room, who, id } => LobbyCmd::JoinRoom { conn, name: Arc::new(who), room, id },
            Ask::Spectate { room, id } => LobbyCmd::Spectate { conn, room, id },
            Ask::Resume { token, id } => LobbyCmd::Resume { conn, token, id },
            Ask::Queue { who, rules, house } => {
                self.queued = Some(rules);
                let house = house.map(|(ms, level)| (std::time::Duration::from_millis(ms), level));
                LobbyCmd::Requeue { conn, name: Arc::new(who), rules, house }
            }
            Ask::Cancel { rules } => {
                self.queued = None;
                LobbyCmd::Cancel { conn: conn.id, rules }
            }
            Ask::Challenge { who, ip, name, rules, id } => {
                let who = Arc::new(who);
                if !self.listed {
                    self.listed = true;
                    let presence = self.presence.clone();
                    let online = LobbyCmd::Online { conn: conn.clone(), who: who.clone(), presence };
                    let _ = self.lobby.send(online).await;
                }
                LobbyCmd::Challenge { conn, ip, name, rules, id }
            }
            Ask::Decline { challenge, reason, id } => LobbyCmd::Decline { conn, challenge, reason, id },
            Ask::Engaged { all } => LobbyCmd::Engaged { conn: conn.id, all },
        };
        let _ = self.lobby.send(cmd).await;
    }

    /// See [`GhostCmd::Heal`]. A game that is over is told by its
    /// `game_over` (a `state` would show the board but not the result).
    async fn heal(&mut self) {
        if let Some(over) = &self.last_over {
            self.send(Item::Frame { text: over.clone() }).await;
        }
        match (&self.room, self.last_room.clone()) {
            (Some(_), _) if self.last_over.is_none() => self.request(Request::Sync, None).await,
            (None, Some(room)) => {
                self.send(Item::Released { room }).await;
            }
            _ => {}
        }
    }

    async fn request(&mut self, request: Request, id: Option<RequestId>) {
        let Some((_, link)) = &self.room else {
            // Its room let it go while the request was on its way: as a
            // connection here would be, it is told so and is in no room.
            let refusal = ServerMessage::error(ErrorCode::NotInGame, crate::room::ROOM_CLOSED, id);
            self.send(Item::Frame { text: encode(&refusal).as_str().to_owned() }).await;
            if let Some(room) = self.last_room.clone() {
                self.send(Item::Released { room }).await;
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

    /// Sends `item` back to the connection; false when the bus is gone.
    async fn back(&mut self, item: Outbound) -> bool {
        let item = match item {
            Outbound::Frame(frame) => {
                let text = frame.as_str();
                if text.starts_with(GAME_OVER) {
                    self.last_over = Some(text.to_owned());
                } else if text.starts_with(GAME_STARTED) {
                    self.last_over = None;
                }
                Item::Frame { text: text.to_owned() }
            }
            Outbound::Refused => Item::Refused,
            Outbound::Entered { room, link } => {
                self.last_over = None;
                self.queued = None;
                self.last_room = Some(room.clone());
                self.room = Some((room.clone(), link));
                Item::Entered { room }
            }
            Outbound::Drafted { room, link } => {
                self.queued = None;
                self.last_room = Some(room.clone());
                self.room = Some((room.clone(), link));
                Item::Drafted { room }
            }
            Outbound::Live { room, live } => {
                if !live {
                    self.presence.drafted.store(false, Ordering::SeqCst);
                }
                Item::Live { room, live }
            }
            Outbound::Rated { account, rules, shown } => Item::Rated { account, rules, shown },
            Outbound::Released { room } => {
                if self.room.as_ref().is_some_and(|(r, _)| *r == room) {
                    self.room = None;
                    self.presence.drafted.store(false, Ordering::SeqCst);
                }
                Item::Released { room }
            }
            Outbound::Replaced { room } => {
                if self.room.as_ref().is_some_and(|(r, _)| *r == room) {
                    self.room = None;
                }
                Item::Replaced { room }
            }
            Outbound::Restart => Item::Restart,
        };
        self.send(item).await
    }

    async fn send(&self, item: Item) -> bool {
        let msg = Wire::Out { conn: self.conn, item };
        self.out.send(Outgoing { to: self.from.clone(), msg }).await.is_ok()
    }
}
