//! The ghost of a connection whose socket another instance holds: a
//! connection handle like any other here (the lobby and the room cannot
//! tell), whose queue the ghost's task reads and sends back over the bus.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tictactoe_protocol::{ErrorCode, RequestId, ServerMessage};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::{GAME_OVER, GAME_STARTED, Outgoing, ToInstances, Wire};
use crate::cmd::{Ask, ConnHandle, LobbyCmd, Outbound, Request, RoomCmd, RoomLink, encode};
use crate::core::ids::{ConnId, RELAYED};
use crate::core::queue::{self, Recv, TrySendError};
use tictactoe_protocol::Rules;

/// What the bus hands a ghost.
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum GhostCmd {
    /// What the connection asks this instance's lobby.
    Ask(Ask),
    /// A request to the room it is in.
    Request { request: Request, id: Option<RequestId> },
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
    out: ToInstances,
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

/// A relayed connection as its room's instance keeps it.
struct Ghost {
    from: Arc<str>,
    conn: u64,
    me: ConnHandle,
    lobby: mpsc::Sender<LobbyCmd>,
    out: ToInstances,
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

    fn undraft(&self) {
        self.drafted.store(false, Ordering::SeqCst);
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
