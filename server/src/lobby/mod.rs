//! The lobby as a state machine without tasks or sockets: matchmaking queues
//! per board size, the directory of rooms by code, and routing of room codes
//! and resume tokens. It reaches connections and rooms only through their
//! queues, never waiting; opening a room is an effect its task carries out.

mod players;
pub mod presence;
pub mod task;

pub use players::{MAX_RECEIVED, MAX_RECEIVED_PER_ADDRESS, MAX_SENT, MAX_SENT_PER_ADDRESS};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{ErrorCode, HouseLevel, RequestId, ServerMessage};

use crate::cmd::encode;
use crate::cmd::{ConnHandle, LobbyCmd, Outbound, RoomCmd};
use crate::codes;
use crate::config::ROOM_INBOX;
use crate::net::queue;
use crate::cluster::ConnId;
use crate::room::{INVALID_TOKEN, Room, Rules, Settings, token_room};
use crate::session::account::Identity;

/// The refusal for a board the engine cannot make (connections check sizes
/// against the configured range first).
const BAD_SIZE: &str = "that board size is not supported";

/// A room the lobby has made, for its task to start.
pub struct NewRoom {
    /// The room, with its first output queued.
    pub room: Room,
    /// Its connections, already told they are in it.
    pub members: Vec<ConnHandle>,
    /// Its inbox, whose sender the directory keeps.
    pub inbox: queue::Receiver<RoomCmd>,
}

/// The lobby's state.
#[derive(Debug)]
pub struct Lobby {
    /// Players waiting, per board size and win length, first come first served.
    queues: HashMap<Rules, VecDeque<(ConnHandle, Arc<Identity>)>>,
    /// Every open room's inbox by its code.
    rooms: HashMap<Arc<str>, queue::Sender<RoomCmd>>,
    settings: Settings,
    /// Who is online, and the challenges between them.
    players: players::Players,
    /// Players in the queue who play the house if nobody is paired by then,
    /// soonest first (entries of players no longer waiting are skipped).
    house_after: BinaryHeap<Reverse<(Instant, ConnId, Rules, HouseLevel)>>,
}

impl Lobby {
    /// An empty lobby whose rooms run with `settings`, where a challenge
    /// stays open `challenge_lifetime` unanswered.
    pub fn new(settings: Settings, challenge_lifetime: Duration) -> Lobby {
        let players = players::Players::new(challenge_lifetime);
        Lobby {
            queues: HashMap::new(),
            rooms: HashMap::new(),
            settings,
            players,
            house_after: BinaryHeap::new(),
        }
    }

    /// When the lobby next needs [`Lobby::tick`]: a challenge expiring, or
    /// a player waiting in the queue due to play the house.
    pub fn next_deadline(&self) -> Option<Instant> {
        let house = self.house_after.peek().map(|Reverse((at, ..))| *at);
        self.players.next_deadline().into_iter().chain(house).min()
    }

    /// Time passes: challenges left unanswered expire, and players still
    /// waiting when their `house_after_ms` is up play the house. Returns the
    /// rooms it opened.
    pub fn tick(&mut self, now: Instant) -> Vec<NewRoom> {
        self.players.tick(now);
        let mut opened = Vec::new();
        while let Some(Reverse((at, conn, rules, level))) = self.house_after.peek().copied() {
            if at > now {
                break;
            }
            self.house_after.pop();
            // Gone from the queue (paired, left, closed): nothing to do.
            let Some(queue) = self.queues.get_mut(&rules) else { continue };
            let Some(i) = queue.iter().position(|(c, _)| c.id == conn) else { continue };
            let Some((handle, who)) = queue.remove(i) else { continue };
            let code = self.new_code();
            match Room::house(code, rules, self.settings.clone(), (conn, who), level, rand::random(), now) {
                Ok(room) => opened.push(self.open(room, vec![handle], None)),
                Err(code) => refuse(&handle, code, BAD_SIZE, None),
            }
        }
        opened
    }

    /// Handles one command at `now`; returns the room it opened, if any.
    pub fn handle(&mut self, cmd: LobbyCmd, now: Instant) -> Option<NewRoom> {
        match cmd {
            LobbyCmd::QuickMatch { conn, name, rules, house, id } => {
                return self.quick_match(conn, name, rules, house, id, now);
            }
            LobbyCmd::CreateRoom { conn, name, rules, mark, id } => {
                let code = self.new_code();
                match Room::private(code, rules, self.settings.clone(), (conn.id, name), mark, id.clone()) {
                    Ok(room) => return Some(self.open(room, vec![conn], None)),
                    Err(code) => refuse(&conn, code, BAD_SIZE, id),
                }
            }
            LobbyCmd::JoinRoom { conn, name, room, id } => {
                if let Some((code, tx)) = self.find(&room, &conn, id.clone()) {
                    forward(code, tx, RoomCmd::Join { conn, name, id });
                }
            }
            LobbyCmd::Spectate { conn, room, id } => {
                if let Some((code, tx)) = self.find(&room, &conn, id.clone()) {
                    forward(code, tx, RoomCmd::Spectate { conn, id });
                }
            }
            LobbyCmd::Resume { conn, token, id } => {
                let room = token_room(&token, codes::ROOM_CODE_LEN).and_then(|c| self.rooms.get_key_value(c));
                match room {
                    Some((code, tx)) => {
                        forward(code.clone(), tx.clone(), RoomCmd::Resume { conn, token, id })
                    }
                    None => refuse(&conn, ErrorCode::InvalidToken, INVALID_TOKEN, id),
                }
            }
            LobbyCmd::Cancel { conn, rules } => {
                if let Some(q) = self.queues.get_mut(&rules) {
                    q.retain(|(c, _)| c.id != conn);
                }
            }
            LobbyCmd::RoomClosed { room } => {
                self.rooms.remove(&room);
            }
            LobbyCmd::Online { conn, who, presence } => self.players.online(conn, who, presence),
            LobbyCmd::Offline { conn } => self.players.offline(conn),
            LobbyCmd::Engaged { conn, all } => self.players.engaged(conn, all),
            LobbyCmd::Who { conn, id } => {
                conn.frame(&encode(&self.players.who(id)));
            }
            LobbyCmd::Challenge { conn, ip, name, rules, id } => {
                let book = self.settings.records.as_deref();
                if let Err((code, text)) =
                    self.players.challenge((conn.id, ip), &name, rules, id.clone(), book, now)
                {
                    answer(&conn, code, text, id);
                }
            }
            LobbyCmd::Decline { conn, challenge, reason, id } => {
                if let Err((code, text)) = self.players.decline(conn.id, &challenge, reason.as_deref()) {
                    answer(&conn, code, text, id);
                }
            }
            LobbyCmd::Accept { conn, who, challenge, id } => match self.players.accept(conn.id, &challenge) {
                Ok(accepted) => return self.challenge_game(accepted, (conn, who), now),
                Err((code, text)) => refuse(&conn, code, text, id),
            },
            LobbyCmd::PlayHouse { conn, who, rules, level, id } => {
                let code = self.new_code();
                let settings = self.settings.clone();
                match Room::house(code, rules, settings, (conn.id, who), level, rand::random(), now) {
                    Ok(room) => return Some(self.open(room, vec![conn], None)),
                    Err(code) => refuse(&conn, code, BAD_SIZE, id),
                }
            }
        }
        None
    }

    /// The room of an accepted challenge: the challenger (drafted) and the
    /// accepter, who is player 1 at random.
    fn challenge_game(
        &mut self,
        accepted: players::Accepted,
        accepter: (ConnHandle, Arc<Identity>),
        now: Instant,
    ) -> Option<NewRoom> {
        let players::Accepted { from, from_who, rules } = accepted;
        let drafted = from.id;
        let (mut first, mut second) = ((from.id, from_who), (accepter.0.id, accepter.1));
        if rand::random() {
            std::mem::swap(&mut first, &mut second);
        }
        let code = self.new_code();
        match Room::paired(code, rules, self.settings.clone(), first, second, now) {
            Ok(room) => Some(self.open(room, vec![from, accepter.0], Some(drafted))),
            Err(code) => {
                refuse(&accepter.0, code, BAD_SIZE, None);
                None
            }
        }
    }

    /// How many players wait for games with `rules`.
    #[cfg(test)]
    fn waiting(&self, rules: Rules) -> usize {
        self.queues.get(&rules).map_or(0, VecDeque::len)
    }

    /// How many rooms are open.
    #[cfg(test)]
    fn rooms(&self) -> usize {
        self.rooms.len()
    }

    fn quick_match(
        &mut self,
        conn: ConnHandle,
        name: Arc<Identity>,
        rules: Rules,
        house: Option<(Duration, HouseLevel)>,
        id: Option<RequestId>,
        now: Instant,
    ) -> Option<NewRoom> {
        if !conn.frame(&encode(&ServerMessage::Queued { size: rules.size, win: rules.win, id })) {
            return None;
        }
        let queue = self.queues.entry(rules).or_default();
        queue.retain(|(c, _)| !c.is_closed());
        let Some((other, other_name)) = queue.pop_front() else {
            if let Some((after, level)) = house {
                self.house_after.push(Reverse((now + after, conn.id, rules, level)));
            }
            queue.push_back((conn, name));
            return None;
        };
        // Who is player 1 is random: waiting first is no advantage.
        let (first, second) = if rand::random() {
            ((other, other_name), (conn, name))
        } else {
            ((conn, name), (other, other_name))
        };
        let code = self.new_code();
        match Room::paired(
            code,
            rules,
            self.settings.clone(),
            (first.0.id, first.1),
            (second.0.id, second.1),
            now,
        ) {
            Ok(room) => Some(self.open(room, vec![first.0, second.0], None)),
            Err(code) => {
                refuse(&first.0, code, BAD_SIZE, None);
                refuse(&second.0, code, BAD_SIZE, None);
                None
            }
        }
    }

    /// Lists a room that nobody is in yet (a game restored after a restart,
    /// its players to come back with `resume`).
    pub fn adopt(&mut self, room: Room) -> NewRoom {
        self.open(room, Vec::new(), None)
    }

    /// Tells the members they are in the room (`drafted` without asking)
    /// and lists it in the directory.
    fn open(&mut self, room: Room, members: Vec<ConnHandle>, drafted: Option<ConnId>) -> NewRoom {
        let code = room.code().clone();
        let (tx, inbox) = queue::channel(ROOM_INBOX);
        for m in &members {
            let (room, tx) = (code.clone(), tx.clone());
            m.send(match Some(m.id) == drafted {
                true => Outbound::Drafted { room, tx },
                false => Outbound::Entered { room, tx },
            });
        }
        self.rooms.insert(code, tx);
        NewRoom { room, members, inbox }
    }

    fn new_code(&self) -> Arc<str> {
        loop {
            let code = codes::room_code();
            if !self.rooms.contains_key(&code) {
                return code;
            }
        }
    }

    /// The room a typed code names, or a `room_not_found` refusal.
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
                let msg = format!("no room has the code {code:?}; check the code");
                refuse(conn, ErrorCode::RoomNotFound, msg, id);
                None
            }
        }
    }
}

/// Puts the connection in the room and hands the room its request; a room
/// that is closing or overloaded refuses it at once.
fn forward(code: Arc<str>, tx: queue::Sender<RoomCmd>, cmd: RoomCmd) {
    let conn = match &cmd {
        RoomCmd::Join { conn, .. } | RoomCmd::Spectate { conn, .. } | RoomCmd::Resume { conn, .. } => {
            conn.clone()
        }
        RoomCmd::Request { .. } | RoomCmd::Disconnected { .. } => return,
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

/// Refuses a request that changed nothing about where the connection is
/// (`challenge`, `decline`): no signal follows the error.
fn answer(conn: &ConnHandle, code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) {
    crate::net::metrics::refused(code);
    conn.frame(&encode(&ServerMessage::error(code, message, id)));
}

/// Refuses a request that was on its way somewhere: the connection is free again.
fn refuse(conn: &ConnHandle, code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) {
    crate::net::metrics::refused(code);
    conn.frame(&encode(&ServerMessage::error(code, message, id)));
    conn.send(Outbound::Refused);
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod challenge_tests;
