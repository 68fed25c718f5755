//! The lobby's shell: reads the lobby's inbox until shutdown, wakes the
//! lobby when a challenge expires or a waiting player is due to play the
//! house, and carries out what it says: frames to connections, rooms started
//! (each a task, listed in the directory), requests handed to rooms.

use std::collections::HashMap;
use std::sync::Arc;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tictactoe_protocol::{ErrorCode, OnlinePlayer, ServerMessage};
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::{Lobby, Output};
use crate::cluster::route::ToBus;
use crate::cmd::{ConnHandle, LobbyCmd, Outbound, RoomCmd, RoomLink, encode};
use crate::config::ROOM_INBOX;
use crate::core::ids::{ALONE, RoomAddr};
use crate::core::queue;
use crate::metrics;
use crate::room::task::{self, RoomContext};
use crate::room::{Room, Settings};

/// The lobby's ways to the rest of a cluster.
pub struct ClusterLinks {
    /// Each look for games to adopt, with the rooms it adopted.
    pub looks: mpsc::Receiver<Vec<Room>>,
    /// Who is online here, every second, for the bus to tell the others.
    pub here: mpsc::Sender<Vec<OnlinePlayer>>,
    /// Who is online on the other instances, each with its instance, as
    /// the bus last read it.
    pub elsewhere: mpsc::Receiver<Vec<(Arc<str>, OnlinePlayer)>>,
    pub me: Arc<str>,
    /// What the lobby asks of the bus: rooms elsewhere, rooms here, who waits.
    pub bus: mpsc::UnboundedSender<ToBus>,
}

/// How often the lobby tells the bus who waits in its queues.
const WAITING: std::time::Duration = std::time::Duration::from_millis(100);

/// How often the lobby tells the bus who is online here.
const PRESENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs the lobby until shutdown, starting with the `restored` rooms. In a
/// cluster, `cluster` brings each look for games to adopt and who is online
/// elsewhere, and takes who is online here.
pub async fn run(
    mut inbox: mpsc::Receiver<LobbyCmd>,
    cluster: Option<ClusterLinks>,
    settings: Settings,
    restored: Vec<Room>,
    challenge_lifetime: std::time::Duration,
    ctx: RoomContext,
    tracker: TaskTracker,
) {
    let shutdown = ctx.shutdown.clone();
    let mut lobby = Lobby::new(settings, challenge_lifetime, ALONE, StdRng::from_os_rng());
    let mut looking = cluster.is_some();
    let (mut looks, here, mut elsewhere, bus) = match cluster {
        Some(links) => {
            lobby.in_cluster(&links.me);
            (links.looks, Some(links.here), links.elsewhere, Some(links.bus))
        }
        None => (mpsc::channel(1).1, None, mpsc::channel(1).1, None),
    };
    let mut presence = tokio::time::interval(PRESENCE);
    let mut waiting = tokio::time::interval(WAITING);
    let mut shell = Shell { directory: HashMap::new(), ctx, tracker, bus };
    for room in restored {
        shell.carry_out(lobby.adopt(room));
    }
    let timer = tokio::time::sleep(std::time::Duration::ZERO);
    tokio::pin!(timer);
    let mut armed = None;
    loop {
        // Re-armed only when the next expiry changes, not per command.
        let deadline = lobby.next_deadline();
        if deadline != armed {
            if let Some(d) = deadline {
                timer.as_mut().reset(tokio::time::Instant::from_std(d));
            }
            armed = deadline;
        }
        let outputs = tokio::select! {
            _ = shutdown.started() => return,
            cmd = inbox.recv() => match cmd {
                Some(cmd) => lobby.handle(cmd, std::time::Instant::now()),
                None => return,
            },
            _ = &mut timer, if deadline.is_some() => lobby.tick(std::time::Instant::now()),
            rooms = looks.recv(), if looking => match rooms {
                Some(rooms) => {
                    shell.close_lost();
                    lobby.looked(rooms)
                }
                None => {
                    looking = false;
                    lobby.not_looking()
                }
            },
            _ = presence.tick(), if here.is_some() => {
                if let Some(here) = &here {
                    let _ = here.try_send(lobby.online_here());
                }
                Vec::new()
            }
            Some(players) = elsewhere.recv(), if here.is_some() => {
                lobby.online_elsewhere(players);
                Vec::new()
            }
            _ = waiting.tick(), if shell.bus.is_some() => {
                let wall = crate::store::record::unix_ms(std::time::SystemTime::now()).max(0) as u64;
                shell.tell(ToBus::Waiting(lobby.waiting_here(std::time::Instant::now(), wall)));
                Vec::new()
            }
        };
        shell.carry_out(outputs);
    }
}

/// What the lobby's outputs act on: the directory of this instance's room
/// inboxes, and what starting a room task takes.
struct Shell {
    /// The inbox of every room listed, by code. Only the lobby hands these
    /// out: a connection gets a room's link when it enters the room.
    directory: HashMap<Arc<str>, RoomLink>,
    ctx: RoomContext,
    tracker: TaskTracker,
    /// In a cluster, the bus.
    bus: Option<mpsc::UnboundedSender<ToBus>>,
}

impl Shell {
    /// Closes the rooms whose games another instance holds now.
    fn close_lost(&self) {
        for code in self.ctx.store.stats().take_lost() {
            if let Some(link) = self.directory.get(&code) {
                let _ = link.force_send(RoomCmd::Lost);
            }
        }
    }

    /// Hands the bus what the lobby asks (only a lobby in a cluster asks).
    fn tell(&self, ask: ToBus) {
        if let Some(bus) = &self.bus {
            let _ = bus.send(ask);
        }
    }

    fn carry_out(&mut self, outputs: Vec<Output<ConnHandle>>) {
        for output in outputs {
            match output {
                Output::Send { to, msg } => {
                    if let ServerMessage::Error { code, .. } = &msg {
                        metrics::refused(*code);
                    }
                    to.frame(&encode(&msg));
                }
                Output::Refused { to } => {
                    to.send(Outbound::Refused);
                }
                Output::Open { room, members, drafted } => self.open(room, members, drafted),
                Output::Forward { to, cmd } => forward(&self.directory, &to, cmd),
                Output::Closed { room } => {
                    self.directory.remove(&room.code);
                    self.tell(ToBus::Closed(room.code));
                }
                Output::Elsewhere { conn, ask, at } => self.tell(ToBus::Ask { conn, ask, at }),
            }
        }
    }

    /// Makes the room's inbox, lists it, tells the members they are in it
    /// (before the room's first frames, which the task sends), and starts
    /// its task.
    fn open(&mut self, room: Box<Room>, members: Vec<ConnHandle>, drafted: Vec<crate::core::ids::ConnId>) {
        let code = room.code().clone();
        let (tx, inbox) = queue::channel(ROOM_INBOX);
        let link = RoomLink::local(tx);
        for m in &members {
            let (room, link) = (code.clone(), link.clone());
            m.send(match drafted.contains(&m.id) {
                true => Outbound::Drafted { room, link },
                false => Outbound::Entered { room, link },
            });
        }
        self.tell(ToBus::Opened(code.clone()));
        self.directory.insert(code, link);
        task::spawn(room, members, inbox, self.ctx.clone(), &self.tracker);
    }
}

/// Puts the connection in the room and hands the room its request; a room
/// that is closing or overloaded refuses it at once.
fn forward(directory: &HashMap<Arc<str>, RoomLink>, to: &RoomAddr, cmd: RoomCmd) {
    let (conn, id) = match &cmd {
        RoomCmd::Join { conn, id, .. }
        | RoomCmd::Spectate { conn, id }
        | RoomCmd::Resume { conn, id, .. } => (conn.clone(), id.clone()),
        RoomCmd::Request { .. } | RoomCmd::Disconnected { .. } | RoomCmd::Lost => return,
    };
    let Some(link) = directory.get(&to.code) else {
        // The lobby and its directory list the same rooms; should they ever
        // differ, the connection is told, not left claimed.
        let msg = ServerMessage::error(ErrorCode::RoomNotFound, "that room is closing; try again", id);
        conn.frame(&encode(&msg));
        conn.send(Outbound::Refused);
        return;
    };
    if !conn.send(Outbound::Entered { room: to.code.clone(), link: link.clone() }) {
        return;
    }
    if link.try_send(cmd).is_err() {
        let msg = ServerMessage::error(
            ErrorCode::RoomNotFound,
            "that room is closing or overloaded; try again",
            id,
        );
        conn.frame(&encode(&msg));
        conn.send(Outbound::Released { room: to.code.clone() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::account::Identity;
    use crate::core::ids::ConnId;
    use crate::core::queue::Recv;

    #[test]
    fn a_room_that_stopped_reading_refuses_at_once() {
        let (tx, inbox) = queue::channel(4);
        drop(inbox);
        let code: Arc<str> = "K7QM3XPA2B".into();
        let directory = HashMap::from([(code.clone(), RoomLink::local(tx))]);
        let (conn_tx, mut conn_rx) = queue::channel(8);
        let conn = ConnHandle::new(ConnId::new(0, 2), conn_tx);
        let to = RoomAddr { code: code.clone(), instance: ALONE };
        let id = Some(tictactoe_protocol::RequestId::Int(9));
        forward(&directory, &to, RoomCmd::Join { conn, name: Identity::guest("b"), id });
        let mut got = Vec::new();
        while let Some(Recv::Item(item)) = conn_rx.try_recv() {
            got.push(match item {
                Outbound::Entered { room, .. } => format!("entered:{room}"),
                Outbound::Frame(f) => f.to_string(),
                Outbound::Released { room } => format!("released:{room}"),
                other => format!("{other:?}"),
            });
        }
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0], format!("entered:{code}"));
        assert!(
            got[1].contains("room_not_found") && got[1].contains(r#""id":9"#),
            "the request's id: {got:?}"
        );
        assert_eq!(got[2], format!("released:{code}"));
    }
}
