//! The lobby task: matchmaking queues per board size, and the directory of
//! rooms by code. It never waits on a room or a connection.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use tictactoe_protocol::{ErrorCode, RequestId, ServerMessage};

use crate::codes;
use crate::outbound::{ConnHandle, ConnId, Outbound, encode};
use crate::queue;
use crate::room::{Room, Settings};
use crate::room_task::{self, RoomCmd, RoomContext};

/// Inbox capacity of the lobby.
pub const LOBBY_INBOX: usize = 1024;

/// What the lobby's inbox receives.
#[derive(Debug)]
pub enum LobbyCmd {
    /// Queue for a game of `size`.
    QuickMatch {
        /// The player.
        conn: ConnHandle,
        /// Display name.
        name: Arc<str>,
        /// Board size, already validated.
        size: usize,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Open a private room.
    CreateRoom {
        /// The creator.
        conn: ConnHandle,
        /// Display name.
        name: Arc<str>,
        /// Board size, already validated.
        size: usize,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Join a private room by code.
    JoinRoom {
        /// The joiner.
        conn: ConnHandle,
        /// Display name.
        name: Arc<str>,
        /// The code as typed.
        room: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Watch a room by code.
    Spectate {
        /// The spectator.
        conn: ConnHandle,
        /// The code as typed.
        room: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Reclaim a seat; the token names its room.
    Resume {
        /// The new connection.
        conn: ConnHandle,
        /// The resume token.
        token: String,
        /// Request id.
        id: Option<RequestId>,
    },
    /// Leave the queue for `size`.
    Cancel {
        /// The leaving connection.
        conn: ConnId,
        /// The size it queued for.
        size: usize,
    },
    /// A room's task ended.
    RoomClosed {
        /// Its code.
        room: Arc<str>,
    },
}

struct Lobby {
    queues: HashMap<usize, VecDeque<(ConnHandle, Arc<str>)>>,
    rooms: HashMap<Arc<str>, queue::Sender<RoomCmd>>,
    settings: Settings,
    ctx: RoomContext,
    tracker: TaskTracker,
}

/// Runs the lobby until shutdown.
pub async fn run(
    mut inbox: mpsc::Receiver<LobbyCmd>,
    settings: Settings,
    ctx: RoomContext,
    tracker: TaskTracker,
) {
    let shutdown = ctx.shutdown.clone();
    let mut lobby = Lobby { queues: HashMap::new(), rooms: HashMap::new(), settings, ctx, tracker };
    loop {
        tokio::select! {
            _ = shutdown.started() => return,
            cmd = inbox.recv() => match cmd {
                Some(cmd) => lobby.handle(cmd),
                None => return,
            },
        }
    }
}

impl Lobby {
    fn handle(&mut self, cmd: LobbyCmd) {
        match cmd {
            LobbyCmd::QuickMatch { conn, name, size, id } => self.quick_match(conn, name, size, id),
            LobbyCmd::CreateRoom { conn, name, size, id } => {
                let code = self.new_code();
                match Room::private(code.clone(), size, self.settings, conn.id, name, id.clone()) {
                    Ok(room) => self.open(room, vec![conn]),
                    Err(code) => refuse(&conn, code, "that board size is not supported", id),
                }
            }
            LobbyCmd::JoinRoom { conn, name, room, id } => {
                if let Some((code, tx)) = self.find(&room, &conn, id.clone()) {
                    self.forward(code, tx, RoomCmd::Join { conn, name, id });
                }
            }
            LobbyCmd::Spectate { conn, room, id } => {
                if let Some((code, tx)) = self.find(&room, &conn, id.clone()) {
                    self.forward(code, tx, RoomCmd::Spectate { conn, id });
                }
            }
            LobbyCmd::Resume { conn, token, id } => {
                let code = token.get(..codes::ROOM_CODE_LEN).unwrap_or("");
                match self.rooms.get_key_value(code) {
                    Some((code, tx)) => {
                        let (code, tx) = (code.clone(), tx.clone());
                        self.forward(code, tx, RoomCmd::Resume { conn, token, id });
                    }
                    None => refuse(
                        &conn,
                        ErrorCode::InvalidToken,
                        "this resume token is not valid (wrong, or its game is over); start a new game",
                        id,
                    ),
                }
            }
            LobbyCmd::Cancel { conn, size } => {
                if let Some(q) = self.queues.get_mut(&size) {
                    q.retain(|(c, _)| c.id != conn);
                }
            }
            LobbyCmd::RoomClosed { room } => {
                self.rooms.remove(&room);
            }
        }
    }

    fn quick_match(&mut self, conn: ConnHandle, name: Arc<str>, size: usize, id: Option<RequestId>) {
        let queued = encode(&ServerMessage::Queued { size, id });
        if !conn.frame(&queued) || !conn.send(Outbound::Queued) {
            return;
        }
        let queue = self.queues.entry(size).or_default();
        queue.retain(|(c, _)| !c.is_closed());
        let Some((other, other_name)) = queue.pop_front() else {
            queue.push_back((conn, name));
            return;
        };
        let (first, second) = if rand::random() {
            ((other, other_name), (conn, name))
        } else {
            ((conn, name), (other, other_name))
        };
        let code = self.new_code();
        let now = Instant::now();
        match Room::paired(code, size, self.settings, (first.0.id, first.1), (second.0.id, second.1), now) {
            Ok(room) => self.open(room, vec![first.0, second.0]),
            Err(code) => {
                refuse(&first.0, code, "that board size is not supported", None);
                refuse(&second.0, code, "that board size is not supported", None);
            }
        }
    }

    /// Tells the members they are in the room, then starts its task.
    fn open(&mut self, room: Room, members: Vec<ConnHandle>) {
        let code = room.code().clone();
        let (tx, rx) = queue::channel(room_task::ROOM_INBOX);
        for m in &members {
            m.send(Outbound::Entered { room: code.clone(), tx: tx.clone() });
        }
        room_task::spawn(room, members, rx, self.ctx.clone(), &self.tracker);
        self.rooms.insert(code, tx);
    }

    fn new_code(&self) -> Arc<str> {
        loop {
            let code = codes::room_code();
            if !self.rooms.contains_key(&code) {
                return code;
            }
        }
    }

    fn find(
        &self,
        room: &str,
        conn: &ConnHandle,
        id: Option<RequestId>,
    ) -> Option<(Arc<str>, queue::Sender<RoomCmd>)> {
        let code = codes::normalize_room_code(room);
        match self.rooms.get_key_value(code.as_str()) {
            Some((code, tx)) => Some((code.clone(), tx.clone())),
            None => {
                refuse(
                    conn,
                    ErrorCode::RoomNotFound,
                    format!("no room has the code {code:?}; check the code"),
                    id,
                );
                None
            }
        }
    }

    /// Puts the connection in the room and hands the room its request.
    fn forward(&self, code: Arc<str>, tx: queue::Sender<RoomCmd>, cmd: RoomCmd) {
        let conn = match &cmd {
            RoomCmd::Join { conn, .. } | RoomCmd::Spectate { conn, .. } | RoomCmd::Resume { conn, .. } => {
                conn.clone()
            }
            _ => return,
        };
        if !conn.send(Outbound::Entered { room: code.clone(), tx: tx.clone() }) {
            return;
        }
        if tx.try_send(cmd).is_err() {
            let msg = ServerMessage::error(
                ErrorCode::RoomNotFound,
                "that room is closing or overloaded; try again",
                None,
            );
            conn.frame(&encode(&msg));
            conn.send(Outbound::Released { room: code });
        }
    }
}

fn refuse(conn: &ConnHandle, code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) {
    conn.frame(&encode(&ServerMessage::error(code, message, id)));
    conn.send(Outbound::Refused);
}
