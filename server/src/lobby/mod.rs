//! The lobby as a state machine: matchmaking queues per board size, the
//! directory of rooms by code, routing of room codes and resume tokens, who
//! is online and the challenges between them. `handle(input, now)` returns
//! what to do; it sends nothing, makes no channels and draws its randomness
//! (room codes, who moves first) from the generator it is handed. Its shell,
//! [`task`], carries the outputs out. Connections are any [`Peer`]: the
//! shell's handles, or bare ids in tests.

mod ended;
mod players;
pub(crate) mod task;

pub use players::{MAX_RECEIVED, MAX_RECEIVED_PER_ADDRESS, MAX_SENT, MAX_SENT_PER_ADDRESS};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tictactoe_protocol::{ErrorCode, HouseLevel, OnlinePlayer, RequestId, ServerMessage};

use crate::cluster::matchmaker::Waiting;
use crate::cmd::{LobbyCmd, Peer, RoomCmd};
use crate::core::account::Identity;
use crate::core::codes;
use crate::core::ids::{ConnId, Instance, RoomAddr};
use crate::room::{INVALID_TOKEN, Room, Settings, game_over_refusal, token_room};
use tictactoe_protocol::Rules;

/// The refusal for a board the engine cannot make (connections check sizes
/// against the configured range first).
const BAD_SIZE: &str = "that board size is not supported";

/// What the lobby asks its shell to do, in order.
#[derive(Debug)]
pub enum Output<C> {
    /// Send `msg` to the connection.
    Send {
        /// The recipient.
        to: C,
        /// The message.
        msg: ServerMessage,
    },
    /// The connection's request went nowhere (its `error` was sent just
    /// before): it is free again.
    Refused {
        /// The connection.
        to: C,
    },
    /// Start the task of a new room, list it in the directory and tell its
    /// members they are in it (`drafted` without having asked).
    Open {
        /// The room, with its first output queued.
        room: Box<Room>,
        /// Its connections.
        members: Vec<C>,
        /// The member drafted by an accepted challenge.
        drafted: Option<ConnId>,
    },
    /// Put the connection in the room at `to` and hand the room `cmd`; a room
    /// that cannot take it refuses at once.
    Forward {
        /// The room.
        to: RoomAddr,
        /// The request, carrying the connection.
        cmd: RoomCmd<C>,
    },
    /// The room's task ended: drop it from the directory.
    Closed {
        /// The room.
        room: RoomAddr,
    },
    /// In a cluster: the room `cmd` names (`join_room`, `spectate`,
    /// `resume`) is not here; ask the bus where it is. A `resume` nobody
    /// runs comes back as [`LobbyCmd::Park`] with `looks`.
    Elsewhere {
        /// The request.
        cmd: LobbyCmd<C>,
        /// Looks for games to adopt a `resume` has waited already.
        looks: u8,
    },
    /// In a cluster: move a waiting player to the instance `to`, where the
    /// matchmaker paired it.
    Move {
        /// The player.
        conn: C,
        /// Who it is.
        who: Arc<Identity>,
        /// The rules it waits for.
        rules: Rules,
        /// The instance it moves to.
        to: Arc<str>,
    },
    /// In a cluster: a player that left the queue may have moved to another
    /// instance's; the bus tells that one.
    CancelElsewhere {
        /// The player.
        conn: ConnId,
        /// The rules it waited for.
        rules: Rules,
    },
    /// In a cluster: the challenged player is on instance `at`; the
    /// challenge is made there, by a ghost of the challenger.
    ChallengeElsewhere {
        /// The challenger.
        conn: C,
        /// Who it is.
        who: Arc<Identity>,
        /// Its address, for the limits kept per address.
        ip: std::net::IpAddr,
        /// The name as typed.
        name: String,
        /// The rules.
        rules: Rules,
        /// Request id.
        id: Option<RequestId>,
        /// Where the challenged player is.
        at: Arc<str>,
    },
    /// In a cluster: a `decline` of a challenge made on instance `host`.
    DeclineElsewhere {
        /// The declining (or withdrawing) connection.
        conn: C,
        /// The instance that holds the challenge.
        host: Arc<str>,
        /// The challenge's id.
        challenge: String,
        /// Why.
        reason: Option<String>,
        /// Request id.
        id: Option<RequestId>,
    },
    /// In a cluster: a connection left idle (`all`: a game started) or
    /// closed (`closed`); its challenges on other instances end too.
    LeftIdle {
        /// The connection.
        conn: ConnId,
        /// A game started.
        all: bool,
        /// The connection closed.
        closed: bool,
    },
}

/// The lobby's state.
#[derive(Debug)]
pub struct Lobby<C: Peer> {
    /// Players waiting, per board size and win length, first come first served.
    queues: HashMap<Rules, VecDeque<(C, Arc<Identity>, Instant)>>,
    /// Every open room's address by its code.
    rooms: HashMap<Arc<str>, RoomAddr>,
    settings: Settings,
    /// Who is online, and the challenges between them.
    players: players::Players<C>,
    /// Players in the queue who play the house if nobody is paired by then,
    /// soonest first (entries of players no longer waiting are skipped).
    house_after: BinaryHeap<Reverse<(Instant, ConnId, Rules, HouseLevel)>>,
    /// The instance whose rooms this lobby opens.
    instance: Instance,
    /// Room codes, challenge ids, who moves first, the house's seeds.
    rng: StdRng,
    /// In a cluster, `resume`s whose game is not here (yet): another
    /// instance may be letting it go, for this one to adopt at its next look.
    parked: Option<Vec<Parked<C>>>,
    /// In a cluster, who is online on the other instances (as of a second ago).
    elsewhere: Vec<OnlinePlayer>,
    /// In a cluster, the instance of each name online elsewhere (by name key).
    elsewhere_at: HashMap<String, Arc<str>>,
    /// In a cluster, this instance's name.
    me: Option<Arc<str>>,
    /// The resume tokens of games that ended in rooms since closed.
    ended: ended::Ended,
    out: Vec<Output<C>>,
}

/// Where a room code leads.
enum Found {
    Here(RoomAddr),
    Elsewhere,
    Nowhere(String),
}

/// A `resume` waiting for the next looks for games to adopt.
#[derive(Debug)]
struct Parked<C> {
    conn: C,
    token: String,
    id: Option<RequestId>,
    /// Looks that did not bring its game.
    looks: u8,
}

/// Most names an instance tells the others it has online: `who` shows 200,
/// and a `challenge` from another instance finds a name among these.
const SHARED_NAMES: usize = 1_000;

/// Most `resume`s parked at once; beyond, an unknown token is refused at once.
const PARKED_MAX: usize = 10_000;

/// Looks for games to adopt a parked `resume` waits for: a game let go by a
/// stopping instance comes at the first look after it; a dead one's once
/// its lease has run out, which is up to a lease and a look after the death
/// (its last word was up to a look before it): that, and two looks more.
const PARKED_LOOKS: u8 =
    (crate::store::LEASE.as_millis() / crate::cluster::adopt::LOOK.as_millis()) as u8 + 4;

impl<C: Peer> Lobby<C> {
    /// An empty lobby of `instance` whose rooms run with `settings`, where a
    /// challenge stays open `challenge_lifetime` unanswered, drawing from `rng`.
    pub fn new(
        settings: Settings,
        challenge_lifetime: Duration,
        instance: Instance,
        mut rng: StdRng,
    ) -> Self {
        Lobby {
            queues: HashMap::new(),
            rooms: HashMap::new(),
            settings,
            players: players::Players::new(challenge_lifetime, StdRng::from_rng(&mut rng)),
            house_after: BinaryHeap::new(),
            instance,
            rng,
            parked: None,
            elsewhere: Vec::new(),
            elsewhere_at: HashMap::new(),
            me: None,
            ended: ended::Ended::default(),
            out: Vec::new(),
        }
    }

    /// Makes this lobby instance `me`'s of a cluster: a `resume` whose game
    /// is not here waits for the next looks for games to adopt
    /// ([`Lobby::looked`]) before it is `invalid_token`, and rooms, players
    /// and challenges not here are looked for elsewhere.
    pub fn in_cluster(&mut self, me: &str) {
        self.parked.get_or_insert_with(Vec::new);
        self.players.name_ids(me);
        self.me = Some(me.into());
    }

    /// Who is online on this instance, for the other instances' `who`.
    pub fn online_here(&self) -> Vec<OnlinePlayer> {
        self.players.here(SHARED_NAMES)
    }

    /// Who is online on the other instances of the cluster, as they last
    /// said, each with its instance.
    pub fn online_elsewhere(&mut self, players: Vec<(Arc<str>, OnlinePlayer)>) {
        self.elsewhere_at =
            players.iter().map(|(at, p)| (crate::core::account::name_key(&p.name), at.clone())).collect();
        self.elsewhere = players.into_iter().map(|(_, p)| p).collect();
    }

    /// The looks for games to adopt ended (the leases' thread stopped):
    /// parked `resume`s are refused, and no more wait.
    pub fn not_looking(&mut self) -> Vec<Output<C>> {
        for p in self.parked.take().unwrap_or_default() {
            self.refuse(&p.conn, ErrorCode::InvalidToken, INVALID_TOKEN, p.id);
        }
        self.outputs()
    }

    /// A look for games to adopt is over, with these `rooms` (none, mostly):
    /// they are listed, and the parked `resume`s whose game came go to it.
    pub fn looked(&mut self, rooms: Vec<Room>) -> Vec<Output<C>> {
        for room in rooms {
            // This instance still runs a room of that code (a game it held
            // before it was cut off, adopted since): the saved one is not opened twice.
            if self.rooms.contains_key(room.code()) {
                tracing::warn!(room = %room.code(), "an adopted game's room is open here already; not opened again");
                continue;
            }
            self.open(room, Vec::new(), None);
        }
        if let Some(parked) = self.parked.take() {
            let mut waiting = Vec::new();
            for mut p in parked {
                if p.conn.is_closed() {
                    continue;
                }
                match token_room(&p.token, codes::ROOM_CODE_LEN).and_then(|c| self.rooms.get(c)).cloned() {
                    Some(to) => self.out.push(Output::Forward {
                        to,
                        cmd: RoomCmd::Resume { conn: p.conn, token: p.token, id: p.id },
                    }),
                    None if p.looks + 1 >= PARKED_LOOKS => {
                        self.refuse(&p.conn, ErrorCode::InvalidToken, INVALID_TOKEN, p.id)
                    }
                    // Another instance may have adopted it: ask again.
                    None if !p.conn.relayed() => {
                        let cmd = LobbyCmd::Resume { conn: p.conn, token: p.token, id: p.id };
                        self.out.push(Output::Elsewhere { cmd, looks: p.looks + 1 });
                    }
                    None => {
                        p.looks += 1;
                        waiting.push(p);
                    }
                }
            }
            self.parked = Some(waiting);
        }
        self.outputs()
    }

    /// When the lobby next needs [`Lobby::tick`]: a challenge expiring, or
    /// a player waiting in the queue due to play the house.
    pub fn next_deadline(&self) -> Option<Instant> {
        let house = self.house_after.peek().map(|Reverse((at, ..))| *at);
        self.players.next_deadline().into_iter().chain(house).min()
    }

    /// Time passes: challenges left unanswered expire, and players still
    /// waiting when their `house_after_ms` is up play the house.
    pub fn tick(&mut self, now: Instant) -> Vec<Output<C>> {
        self.players.tick(now);
        self.collect_mail();
        while let Some(Reverse((at, conn, rules, level))) = self.house_after.peek().copied() {
            if at > now {
                break;
            }
            self.house_after.pop();
            // Gone from the queue (paired, left, closed): nothing to do.
            let Some(queue) = self.queues.get_mut(&rules) else { continue };
            let Some(i) = queue.iter().position(|(c, ..)| c.id() == conn) else { continue };
            let Some((handle, who, _)) = queue.remove(i) else { continue };
            let code = self.new_code();
            let rng = StdRng::from_rng(&mut self.rng);
            match Room::house(code, rules, self.settings.clone(), rng, (conn, who), level, now) {
                Ok(room) => self.open(room, vec![handle], None),
                Err(code) => self.refuse(&handle, code, BAD_SIZE, None),
            }
        }
        self.outputs()
    }

    /// Handles one command at `now`: what to do, in order.
    pub fn handle(&mut self, cmd: LobbyCmd<C>, now: Instant) -> Vec<Output<C>> {
        match cmd {
            LobbyCmd::QuickMatch { conn, name, rules, house, id } => {
                self.out.push(Output::Send {
                    to: conn.clone(),
                    msg: ServerMessage::Queued { size: rules.size, win: rules.win, id },
                });
                self.quick_match(conn, name, rules, house, now)
            }
            LobbyCmd::Requeue { conn, name, rules, house } => self.quick_match(conn, name, rules, house, now),
            LobbyCmd::Paired { conn, rules, host } => {
                let queue = self.queues.entry(rules).or_default();
                if let Some(i) = queue.iter().position(|(c, ..)| c.id() == conn && !c.relayed()) {
                    if let Some((conn, who, _)) = queue.remove(i) {
                        self.out.push(Output::Move { conn, who, rules, to: host });
                    }
                }
            }
            LobbyCmd::Park { conn, token, id, looks } => match &mut self.parked {
                Some(parked) if parked.len() < PARKED_MAX => parked.push(Parked { conn, token, id, looks }),
                _ => self.refuse(&conn, ErrorCode::InvalidToken, INVALID_TOKEN, id),
            },
            LobbyCmd::CreateRoom { conn, name, rules, mark, id } => {
                let (code, rng) = (self.new_code(), StdRng::from_rng(&mut self.rng));
                match Room::private(
                    code,
                    rules,
                    self.settings.clone(),
                    rng,
                    (conn.id(), name),
                    mark,
                    id.clone(),
                ) {
                    Ok(room) => self.open(room, vec![conn], None),
                    Err(code) => self.refuse(&conn, code, BAD_SIZE, id),
                }
            }
            LobbyCmd::JoinRoom { conn, name, room, id } => match self.find(&room, &conn) {
                Found::Here(to) => {
                    self.out.push(Output::Forward { to, cmd: RoomCmd::Join { conn, name, id } })
                }
                Found::Elsewhere => {
                    let cmd = LobbyCmd::JoinRoom { conn, name, room, id };
                    self.out.push(Output::Elsewhere { cmd, looks: 0 })
                }
                Found::Nowhere(msg) => self.refuse(&conn, ErrorCode::RoomNotFound, msg, id),
            },
            LobbyCmd::Spectate { conn, room, id } => match self.find(&room, &conn) {
                Found::Here(to) => self.out.push(Output::Forward { to, cmd: RoomCmd::Spectate { conn, id } }),
                Found::Elsewhere => {
                    self.out.push(Output::Elsewhere { cmd: LobbyCmd::Spectate { conn, room, id }, looks: 0 })
                }
                Found::Nowhere(msg) => self.refuse(&conn, ErrorCode::RoomNotFound, msg, id),
            },
            LobbyCmd::Resume { conn, token, id } => {
                let room = token_room(&token, codes::ROOM_CODE_LEN).and_then(|c| self.rooms.get(c)).cloned();
                // Its room gone, a token of a game that ended here says which game.
                let ended = match room {
                    None => self.ended.game_of(&token, now),
                    Some(_) => None,
                };
                match (room, ended) {
                    (Some(to), _) => {
                        self.out.push(Output::Forward { to, cmd: RoomCmd::Resume { conn, token, id } })
                    }
                    (None, Some(game_id)) => {
                        self.collect_mail();
                        self.out.push(Output::Send { to: conn.clone(), msg: game_over_refusal(game_id, id) });
                        self.out.push(Output::Refused { to: conn });
                    }
                    // A token that names no room at all is refused at once;
                    // one whose room is not here may name another instance's.
                    (None, None)
                        if token_room(&token, codes::ROOM_CODE_LEN).is_some()
                            && self.asks_elsewhere(conn.id()) =>
                    {
                        self.out
                            .push(Output::Elsewhere { cmd: LobbyCmd::Resume { conn, token, id }, looks: 0 })
                    }
                    (None, None)
                        if token_room(&token, codes::ROOM_CODE_LEN).is_some()
                            && self.parked.as_ref().is_some_and(|p| p.len() < PARKED_MAX) =>
                    {
                        if let Some(parked) = &mut self.parked {
                            parked.push(Parked { conn, token, id, looks: 0 });
                        }
                    }
                    (None, None) => self.refuse(&conn, ErrorCode::InvalidToken, INVALID_TOKEN, id),
                }
            }
            LobbyCmd::Cancel { conn, rules } => {
                let q = self.queues.entry(rules).or_default();
                let before = q.len();
                q.retain(|(c, ..)| c.id() != conn);
                if q.len() == before && self.asks_elsewhere(conn) {
                    self.out.push(Output::CancelElsewhere { conn, rules });
                }
            }
            LobbyCmd::RoomClosed { room, ended } => {
                self.ended.remember(ended, now);
                if let Some(room) = self.rooms.remove(&room) {
                    self.out.push(Output::Closed { room });
                }
            }
            LobbyCmd::Online { conn, who, presence } => self.players.online(conn, who, presence),
            LobbyCmd::Offline { conn } => {
                self.players.offline(conn);
                if self.asks_elsewhere(conn) {
                    self.out.push(Output::LeftIdle { conn, all: true, closed: true });
                }
            }
            LobbyCmd::Rated { conn, rules, shown } => self.players.rated(conn, rules, shown),
            LobbyCmd::Engaged { conn, all } => {
                self.players.engaged(conn, all);
                if self.asks_elsewhere(conn) {
                    self.out.push(Output::LeftIdle { conn, all, closed: false });
                }
            }
            LobbyCmd::Who { conn, id } => {
                let msg = self.players.who(&self.elsewhere, id);
                self.out.push(Output::Send { to: conn, msg });
            }
            LobbyCmd::Challenge { conn, ip, name, rules, id } => {
                let made = self.players.challenge((conn.id(), ip), &name, rules, id.clone(), now);
                match made {
                    Err((ErrorCode::PlayerNotFound, text)) => match self.player_elsewhere(&name, &conn) {
                        Some(at) => self.challenge_elsewhere(conn, ip, name, rules, id, at),
                        None => self.answer(&conn, ErrorCode::PlayerNotFound, text, id),
                    },
                    Err((code, text)) => self.answer(&conn, code, text, id),
                    Ok(()) => {}
                }
            }
            LobbyCmd::Decline { conn, challenge, reason, id } => {
                if let Err((code, text)) = self.players.decline(conn.id(), &challenge, reason.as_deref()) {
                    match self.challenge_host(&challenge, &conn) {
                        Some(host) => {
                            self.out.push(Output::DeclineElsewhere { conn, host, challenge, reason, id })
                        }
                        None => self.answer(&conn, code, text, id),
                    }
                }
            }
            LobbyCmd::Accept { conn, who, challenge, id } => match self.players.accept(conn.id(), &challenge)
            {
                Ok(accepted) => {
                    // The challenges it ended are told before the room opens.
                    self.collect_mail();
                    self.challenge_game(accepted, (conn, who), now)
                }
                Err((code, text)) => self.refuse(&conn, code, text, id),
            },
            LobbyCmd::PlayHouse { conn, who, rules, level, id } => {
                let code = self.new_code();
                let (settings, rng) = (self.settings.clone(), StdRng::from_rng(&mut self.rng));
                match Room::house(code, rules, settings, rng, (conn.id(), who), level, now) {
                    Ok(room) => self.open(room, vec![conn], None),
                    Err(code) => self.refuse(&conn, code, BAD_SIZE, id),
                }
            }
        }
        self.outputs()
    }

    /// Lists a room that nobody is in yet (a game restored after a restart,
    /// its players to come back with `resume`).
    pub fn adopt(&mut self, room: Room) -> Vec<Output<C>> {
        self.open(room, Vec::new(), None);
        self.outputs()
    }

    /// The outputs so far, the challenges' messages included.
    fn outputs(&mut self) -> Vec<Output<C>> {
        self.collect_mail();
        std::mem::take(&mut self.out)
    }

    /// Puts the challenges' messages so far in line with the other outputs.
    fn collect_mail(&mut self) {
        self.out.extend(self.players.mail().map(|(to, msg)| Output::Send { to, msg }));
    }

    /// The room of an accepted challenge: the challenger (drafted) and the
    /// accepter, who is player 1 at random.
    fn challenge_game(&mut self, accepted: players::Accepted<C>, accepter: (C, Arc<Identity>), now: Instant) {
        let players::Accepted { from, from_who, rules } = accepted;
        let drafted = from.id();
        let (mut first, mut second) = ((from.id(), from_who), (accepter.0.id(), accepter.1));
        if self.rng.random() {
            std::mem::swap(&mut first, &mut second);
        }
        let (code, rng) = (self.new_code(), StdRng::from_rng(&mut self.rng));
        match Room::paired(code, rules, self.settings.clone(), rng, first, second, now) {
            Ok(room) => self.open(room, vec![from, accepter.0], Some(drafted)),
            Err(code) => self.refuse(&accepter.0, code, BAD_SIZE, None),
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

    /// The other instance a name is online on, for a challenge from `conn`
    /// (a connection whose socket is here).
    fn player_elsewhere(&self, name: &str, conn: &C) -> Option<Arc<str>> {
        if !self.asks_elsewhere(conn.id()) {
            return None;
        }
        self.elsewhere_at.get(&crate::core::account::name_key(name.trim())).cloned()
    }

    /// The other instance a challenge id was made on.
    fn challenge_host(&self, challenge: &str, conn: &C) -> Option<Arc<str>> {
        let (host, _) = challenge.split_once('~')?;
        (self.asks_elsewhere(conn.id()) && self.me.as_deref() != Some(host)).then(|| host.into())
    }

    /// A challenge to a player on instance `at`: sent there, if the
    /// challenger may challenge now.
    fn challenge_elsewhere(
        &mut self,
        conn: C,
        ip: std::net::IpAddr,
        name: String,
        rules: Rules,
        id: Option<RequestId>,
        at: Arc<str>,
    ) {
        match self.players.listed(conn.id()) {
            Some((who, crate::core::presence::Status::Idle)) => {
                // Its connection then says when it leaves idle, which ends
                // the challenge there too (`LeftIdle`).
                self.players.count_challenge(conn.id());
                self.out.push(Output::ChallengeElsewhere { conn, who, ip, name, rules, id, at })
            }
            Some(_) => {
                let text = "you are in a game or waiting for one; challenge when you are free (leave first)";
                self.answer(&conn, ErrorCode::Busy, text, id)
            }
            None => self.answer(&conn, ErrorCode::InvalidName, "say hello with your name first", id),
        }
    }

    /// Who waits in the queues here, for the matchmaker of a cluster; `wall`
    /// is `now` as Unix ms.
    pub fn waiting_here(&self, now: Instant, wall: u64) -> Vec<Waiting> {
        let mut all = Vec::new();
        for (rules, queue) in &self.queues {
            for (c, _, since) in queue.iter().filter(|(c, ..)| !c.is_closed()) {
                let waited = now.saturating_duration_since(*since).as_millis() as u64;
                let (conn, movable) = (c.id().seq(), !c.relayed());
                all.push(Waiting { rules: *rules, conn, since: wall.saturating_sub(waited), movable });
            }
        }
        all
    }

    fn quick_match(
        &mut self,
        conn: C,
        name: Arc<Identity>,
        rules: Rules,
        house: Option<(Duration, HouseLevel)>,
        now: Instant,
    ) {
        // A connection already gone waits for nobody, and nobody is paired
        // with one (its `Cancel` may still be on the way).
        if conn.is_closed() {
            return;
        }
        let queue = self.queues.entry(rules).or_default();
        queue.retain(|(c, ..)| !c.is_closed());
        let Some((other, other_name, _)) = queue.pop_front() else {
            if let Some((after, level)) = house {
                self.house_after.push(Reverse((now + after, conn.id(), rules, level)));
            }
            queue.push_back((conn, name, now));
            return;
        };
        // Who is player 1 is random: waiting first is no advantage.
        let (first, second) = if self.rng.random() {
            ((other, other_name), (conn, name))
        } else {
            ((conn, name), (other, other_name))
        };
        let (code, rng) = (self.new_code(), StdRng::from_rng(&mut self.rng));
        let players = ((first.0.id(), first.1), (second.0.id(), second.1));
        match Room::paired(code, rules, self.settings.clone(), rng, players.0, players.1, now) {
            Ok(room) => self.open(room, vec![first.0, second.0], None),
            Err(code) => {
                self.refuse(&first.0, code, BAD_SIZE, None);
                self.refuse(&second.0, code, BAD_SIZE, None);
            }
        }
    }

    /// Lists the room in the directory and asks the shell to start it.
    fn open(&mut self, room: Room, members: Vec<C>, drafted: Option<ConnId>) {
        let code = room.code().clone();
        self.rooms.insert(code.clone(), RoomAddr { code, instance: self.instance });
        self.out.push(Output::Open { room: Box::new(room), members, drafted });
    }

    fn new_code(&mut self) -> Arc<str> {
        loop {
            let code = codes::room_code(&mut self.rng);
            if !self.rooms.contains_key(&code) {
                return code;
            }
        }
    }

    /// Whether what `conn` asks that is not here is looked for on the other
    /// instances: in a cluster, for a connection whose socket is here (a
    /// ghost's asks came from its own instance, which looked already).
    fn asks_elsewhere(&self, conn: ConnId) -> bool {
        self.me.is_some() && conn.instance() == crate::core::ids::ALONE
    }

    /// Where the room a typed code names is: here, perhaps on another
    /// instance (in a cluster, for a connection whose socket is here), or
    /// nowhere (with the refusal's words).
    fn find(&self, room: &str, conn: &C) -> Found {
        let code = codes::normalize_room_code(room);
        match self.rooms.get(code.as_str()) {
            Some(addr) => Found::Here(addr.clone()),
            None if self.asks_elsewhere(conn.id()) => Found::Elsewhere,
            None => Found::Nowhere(codes::no_room(&code)),
        }
    }

    /// Refuses a request that changed nothing about where the connection is
    /// (`challenge`, `decline`): no signal follows the error.
    fn answer(&mut self, conn: &C, code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) {
        // What the refused request ended (a challenge) is told first.
        self.collect_mail();
        self.out.push(Output::Send { to: conn.clone(), msg: ServerMessage::error(code, message, id) });
    }

    /// Refuses a request that was on its way somewhere: the connection is free again.
    fn refuse(&mut self, conn: &C, code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) {
        self.answer(conn, code, message, id);
        self.out.push(Output::Refused { to: conn.clone() });
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod challenge_tests;
