//! The lobby as a state machine: matchmaking queues per board size, the
//! directory of rooms by code, routing of room codes and resume tokens, who
//! is online and the challenges between them. `handle(input, now)` returns
//! what to do; it sends nothing, makes no channels and draws its randomness
//! (room codes, who moves first) from the generator it is handed. Its shell,
//! [`task`], carries the outputs out. Connections are any [`Peer`]: the
//! shell's handles, or bare ids in tests.

mod cluster;
mod ended;
mod output;
mod players;
pub(crate) mod task;
mod tournament;

pub use output::Output;
pub use players::{MAX_RECEIVED, MAX_RECEIVED_PER_ADDRESS, MAX_SENT, MAX_SENT_PER_ADDRESS};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tictactoe_protocol::{ErrorCode, HouseLevel, RequestId, ServerMessage};

use crate::cmd::{Ask, LobbyCmd, Peer, RoomCmd, Where};
use crate::core::account::Identity;
use crate::core::codes;
use crate::core::ids::{ConnId, Instance, RoomAddr};
use crate::room::{INVALID_TOKEN, Room, Settings, game_over_refusal, token_room};
use tictactoe_protocol::Rules;

/// The refusal for a board the engine cannot make (connections check sizes
/// against the configured range first).
const BAD_SIZE: &str = "that board size is not supported";

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
    /// What it knows of the rest of its cluster; alone, nothing.
    cluster: Option<cluster::Cluster<C>>,
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
            cluster: None,
            ended: ended::Ended::default(),
            out: Vec::new(),
        }
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
                Ok(room) => self.open(room, vec![handle], Vec::new()),
                Err(code) => self.refuse(&handle, code, BAD_SIZE, None),
            }
        }
        self.outputs()
    }

    /// Handles one command at `now`: what to do, in order.
    pub fn handle(&mut self, cmd: LobbyCmd<C>, now: Instant) -> Vec<Output<C>> {
        match cmd {
            LobbyCmd::Ask { conn, ask } => self.ask(conn, ask, now),
            LobbyCmd::Online { conn, who, presence } => self.players.online(conn, who, presence),
            LobbyCmd::Park { conn, token, id, looks } => self.park(conn, token, id, looks),
            LobbyCmd::Paired { conn, rules, host } => self.paired(conn, rules, host),
            LobbyCmd::TournamentPaired(p) => {
                // Past the end nobody is drafted (nor sent to meet elsewhere).
                let over = self.settings.wall.unix_ms(now) >= p.ends_at;
                if !over
                    && let Some((conn, who)) =
                        self.players.draft(ConnId::new(crate::core::ids::ALONE, p.conn))
                {
                    self.tournament_meet(
                        conn,
                        who,
                        (p.tournament, p.rules, p.ends_at),
                        (p.opponent, p.at),
                        now,
                    );
                }
            }
            LobbyCmd::RoomClosed { room, ended } => {
                self.ended.remember(ended, now);
                if let Some(room) = self.rooms.remove(&room) {
                    self.out.push(Output::Closed { room });
                }
            }
        }
        self.outputs()
    }

    /// What a connection asks or says.
    fn ask(&mut self, conn: C, ask: Ask, now: Instant) {
        match ask {
            Ask::QuickMatch { who, rules, house, id } => {
                let msg = ServerMessage::Queued { clock: rules.clock, size: rules.size, win: rules.win, id };
                self.out.push(Output::Send { to: conn.clone(), msg });
                self.quick_match(conn, who, rules, house, now)
            }
            Ask::Requeue { who, rules, house } => self.quick_match(conn, who, rules, house, now),
            Ask::Cancel { rules } => {
                let q = self.queues.entry(rules).or_default();
                let before = q.len();
                q.retain(|(c, ..)| c.id() != conn.id());
                if q.len() == before {
                    self.follow(conn, Ask::Cancel { rules });
                }
            }
            Ask::CreateRoom { who, rules, mark, organise, id } => {
                let (code, rng) = (self.new_code(), StdRng::from_rng(&mut self.rng));
                let seat = (conn.id(), who);
                let settings = self.settings.clone();
                match Room::private(code, rules, settings, rng, seat, mark, organise, id.clone()) {
                    Ok(room) => self.open(room, vec![conn], Vec::new()),
                    Err(code) => self.refuse(&conn, code, BAD_SIZE, id),
                }
            }
            Ask::JoinRoom { who, room, id } => match self.find(&room, &conn) {
                Found::Here(to) => {
                    self.out.push(Output::Forward { to, cmd: RoomCmd::Join { conn, name: who, id } })
                }
                Found::Elsewhere => {
                    let (ask, at) = (Ask::JoinRoom { who, room, id }, Where::Find { looks: 0 });
                    self.out.push(Output::Elsewhere { conn, ask, at })
                }
                Found::Nowhere(msg) => self.refuse(&conn, ErrorCode::RoomNotFound, msg, id),
            },
            Ask::Spectate { room, id } => match self.find(&room, &conn) {
                Found::Here(to) => self.out.push(Output::Forward { to, cmd: RoomCmd::Spectate { conn, id } }),
                Found::Elsewhere => {
                    let (ask, at) = (Ask::Spectate { room, id }, Where::Find { looks: 0 });
                    self.out.push(Output::Elsewhere { conn, ask, at })
                }
                Found::Nowhere(msg) => self.refuse(&conn, ErrorCode::RoomNotFound, msg, id),
            },
            Ask::Resume { token, id } => self.resume(conn, token, id, now),
            Ask::Who { id } => {
                let elsewhere = self.cluster.as_ref().map_or(&[][..], |c| &c.online[..]);
                let msg = self.players.who(elsewhere, id);
                self.out.push(Output::Send { to: conn, msg });
            }
            Ask::Challenge { who, ip, name, rules, id } => {
                let made = self.players.challenge((conn.id(), ip), &name, rules, id.clone(), now);
                match made {
                    Err((ErrorCode::PlayerNotFound, text)) => match self.player_elsewhere(&name, &conn) {
                        Some(at) => {
                            let ask = Ask::Challenge { who, ip, name, rules, id: id.clone() };
                            self.challenge_elsewhere(conn, ask, id, at)
                        }
                        None => self.answer(&conn, ErrorCode::PlayerNotFound, text, id),
                    },
                    Err((code, text)) => self.answer(&conn, code, text, id),
                    Ok(()) => {}
                }
            }
            Ask::Accept { who, challenge, id } => match self.players.accept(conn.id(), &challenge) {
                Ok(accepted) => {
                    // The challenges it ended are told before the room opens.
                    self.collect_mail();
                    self.challenge_game(accepted, (conn, who), now)
                }
                Err((code, text)) => self.refuse(&conn, code, text, id),
            },
            Ask::Decline { challenge, reason, id } => {
                if let Err((code, text)) = self.players.decline(conn.id(), &challenge, reason.as_deref()) {
                    match self.challenge_host(&challenge, &conn) {
                        Some(host) => {
                            let ask = Ask::Decline { challenge, reason, id };
                            self.out.push(Output::Elsewhere { conn, ask, at: Where::At(host) })
                        }
                        None => self.answer(&conn, code, text, id),
                    }
                }
            }
            Ask::PlayHouse { who, rules, level, id } => {
                let code = self.new_code();
                let (settings, rng) = (self.settings.clone(), StdRng::from_rng(&mut self.rng));
                match Room::house(code, rules, settings, rng, (conn.id(), who), level, now) {
                    Ok(room) => self.open(room, vec![conn], Vec::new()),
                    Err(code) => self.refuse(&conn, code, BAD_SIZE, id),
                }
            }
            Ask::Engaged { all } => {
                self.players.engaged(conn.id(), all);
                self.follow(conn, Ask::Engaged { all });
            }
            Ask::Rated { rules, shown } => self.players.rated(conn.id(), rules, shown),
            Ask::Offline => {
                self.players.offline(conn.id());
                self.follow(conn, Ask::Offline);
            }
            Ask::TournamentMeet { who, tournament, rules, opponent, at, ends_at } => {
                self.tournament_meet(conn, who, (tournament, rules, ends_at), (opponent, at), now)
            }
        }
    }

    /// `resume`: to its room here; a token whose room is gone and whose
    /// game ended here is told which game; a room not here may be another
    /// instance's.
    fn resume(&mut self, conn: C, token: String, id: Option<RequestId>, now: Instant) {
        let Some(code) = token_room(&token, codes::ROOM_CODE_LEN) else {
            // A token that names no room at all is refused at once.
            return self.refuse(&conn, ErrorCode::InvalidToken, INVALID_TOKEN, id);
        };
        if let Some(to) = self.rooms.get(code).cloned() {
            return self.out.push(Output::Forward { to, cmd: RoomCmd::Resume { conn, token, id } });
        }
        match self.ended.game_of(&token, now) {
            Some(game_id) => {
                self.collect_mail();
                self.out.push(Output::Send { to: conn.clone(), msg: game_over_refusal(game_id, id) });
                self.out.push(Output::Refused { to: conn });
            }
            None if self.cluster.is_some() => self.resume_elsewhere(conn, token, id),
            None => self.refuse(&conn, ErrorCode::InvalidToken, INVALID_TOKEN, id),
        }
    }

    /// Lists a room that nobody is in yet (a game restored after a restart,
    /// its players to come back with `resume`).
    pub fn adopt(&mut self, room: Room) -> Vec<Output<C>> {
        self.open(room, Vec::new(), Vec::new());
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
            Ok(room) => self.open(room, vec![from, accepter.0], vec![drafted]),
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
            Ok(room) => self.open(room, vec![first.0, second.0], Vec::new()),
            Err(code) => {
                self.refuse(&first.0, code, BAD_SIZE, None);
                self.refuse(&second.0, code, BAD_SIZE, None);
            }
        }
    }

    /// Lists the room in the directory and asks the shell to start it.
    fn open(&mut self, room: Room, members: Vec<C>, drafted: Vec<ConnId>) {
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
