//! The bus's routing of relayed connections (see [`super::relay`]): which
//! instance runs each room (a Redis hash every instance writes its own rooms
//! to), the ghosts of other instances' connections in rooms here, and this
//! instance's connections in rooms elsewhere.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use tictactoe_protocol::{ErrorCode, ServerMessage};
use tokio::sync::mpsc;

use super::matchmaker::Waiting;
use super::relay::{self, Ask, Envelope, GhostCmd, Item, Outbox, Outgoing, Wire};
use crate::cmd::{ConnHandle, LobbyCmd, Outbound, encode};
use crate::core::account::Identity;
use crate::core::codes;
use crate::room::token_room;
use tictactoe_protocol::Rules;

/// The set of the instances that said who is online on them (and the
/// prefix of each one's list).
pub const WHO: &str = "ttt:who";

/// The hash of every room's instance, by code.
pub const ROOMS: &str = "ttt:rooms";

/// An instance not heard of for this long is gone: its ghosts here leave
/// their rooms, and connections here in its rooms are told to resume.
pub const GONE_AFTER: Duration = Duration::from_secs(5);

/// Writes a room's entry unless another instance holds it (after a
/// cut-off, this one's stale copy must not take an adopted game back).
const CLAIM_FREE: &str = "local v = redis.call('hget', KEYS[1], ARGV[1]) \
    if not v or v == ARGV[2] then return redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end return 0";

/// Deletes a room's entry only if it is still this instance's (another may
/// have adopted the game since).
const DELETE_OWN: &str = "if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('hdel', KEYS[1], ARGV[1]) end return 0";

/// What the lobby asks of the bus.
#[derive(Debug)]
pub enum ToBus {
    /// Find the instance of the room `cmd` names and enter it there.
    Lookup {
        /// `join_room`, `spectate` or `resume`.
        cmd: LobbyCmd<ConnHandle>,
        /// Looks a `resume` has waited already.
        looks: u8,
    },
    /// Move a waiting player to the instance it was paired on.
    Move {
        /// The player.
        conn: ConnHandle,
        /// Who it is.
        who: Arc<Identity>,
        /// The rules it waits for.
        rules: Rules,
        /// Where it goes.
        to: Arc<str>,
    },
    /// The player left the queue; if it had moved, the other instance hears it.
    Cancel {
        /// The player's connection.
        conn: crate::core::ids::ConnId,
        /// The rules it waited for.
        rules: Rules,
    },
    /// A room opened here.
    Opened(Arc<str>),
    /// A room here closed.
    Closed(Arc<str>),
    /// Who waits in the queues here now.
    Waiting(Vec<Waiting>),
    /// Challenge a player on instance `at` from there.
    Challenge {
        /// The challenger.
        conn: ConnHandle,
        /// What it asks there.
        ask: Ask,
        /// Where the challenged player is.
        at: Arc<str>,
    },
    /// Decline (or withdraw) a challenge held by instance `host`.
    Decline {
        /// The connection.
        conn: ConnHandle,
        /// What it asks there.
        ask: Ask,
        /// The challenge's instance.
        host: Arc<str>,
    },
    /// A connection left idle or closed: its ghosts elsewhere hear it.
    LeftIdle {
        /// The connection.
        conn: crate::core::ids::ConnId,
        /// A game started.
        all: bool,
        /// It closed.
        closed: bool,
    },
}

/// A connection here with a ghost on other instances: in a room (or a
/// queue) there, or with challenges there.
struct Away {
    conn: ConnHandle,
    /// The instance of its room, queue or entry on its way, if elsewhere.
    at: Option<Arc<str>>,
    /// What it asked there, until the first answer (or, for a queue, until
    /// it is paired): if that instance goes meanwhile, it is answered here.
    asked: Option<Ask>,
    /// Every instance with a ghost of it.
    ghosts: Vec<Arc<str>>,
    /// Whether the game it played there ended and it heard so (nothing to
    /// heal after Redis was away).
    over: bool,
    /// Since when its ask waits on an instance that restarted meanwhile:
    /// it may have reached the new run (which answers) or the old one
    /// (which never will: answered here after [`UNSURE`]).
    unsure: Option<Instant>,
}

/// How long an ask that may have reached an instance's old run waits for
/// its new run's answer before it is answered here.
const UNSURE: Duration = Duration::from_secs(2);

impl Away {
    fn new(conn: ConnHandle) -> Away {
        Away { conn, at: None, asked: None, ghosts: Vec::new(), over: false, unsure: None }
    }

    fn ghost_at(&mut self, instance: &Arc<str>) {
        if !self.ghosts.contains(instance) {
            self.ghosts.push(instance.clone());
        }
    }
}

/// The routing state; lives in the bus's task.
pub struct Router {
    /// This instance's name.
    pub me: Arc<str>,
    /// Where ghosts enter rooms and where parked `resume`s go.
    pub lobby: mpsc::Sender<LobbyCmd>,
    /// Where messages to other instances queue.
    pub out: Outbox,
    /// A ghost's queue bound (`--outbound-queue`).
    pub queue_len: usize,
    /// Ghosts of other instances' connections, by (instance, connection).
    ghosts: HashMap<(Arc<str>, u64), mpsc::UnboundedSender<GhostCmd>>,
    /// Connections here whose room (or queue) is on another instance.
    relayed: HashMap<u64, Away>,
    /// When each other instance was last heard of.
    seen: HashMap<Arc<str>, Instant>,
    /// The instances whose list of who is online was there at the last
    /// read (a list lasts 3 s unless its instance rewrites it every second).
    listed: HashSet<Arc<str>>,
    /// Instances that said they stopped, and when: their lists may outlive
    /// them by a few seconds, and do not bring them back.
    stopped: HashMap<Arc<str>, Instant>,
    /// This instance's rooms, written to [`ROOMS`] again whenever the bus
    /// comes back.
    own: HashSet<Arc<str>>,
    /// Directory changes not yet written.
    pending: Vec<(Arc<str>, bool)>,
    /// Who waits here, as last told.
    pub waiting: Vec<Waiting>,
    /// Lookups to try again at the next pass.
    later: Vec<ToBus>,
    /// When the bus last came up.
    up_since: Instant,
    /// Each other instance's run (a restart under the same name is a new
    /// instance: what the old run had here is let go).
    runs: HashMap<Arc<str>, u64>,
}

impl Router {
    /// Routing for instance `me`.
    pub fn new(me: Arc<str>, lobby: mpsc::Sender<LobbyCmd>, out: Outbox, queue_len: usize) -> Router {
        Router {
            me,
            lobby,
            out,
            queue_len,
            ghosts: HashMap::new(),
            relayed: HashMap::new(),
            seen: HashMap::new(),
            listed: HashSet::new(),
            stopped: HashMap::new(),
            own: HashSet::new(),
            pending: Vec::new(),
            waiting: Vec::new(),
            later: Vec::new(),
            up_since: Instant::now(),
            runs: HashMap::new(),
        }
    }

    /// How many connections are relayed each way (for /metrics).
    pub fn counts(&self) -> (usize, usize) {
        (self.ghosts.len(), self.relayed.len())
    }

    /// The instances alive as of the lists just read: one whose list is
    /// gone since the last read stopped or died (its list ran out).
    pub fn listed(&mut self, mut alive: Vec<Arc<str>>) {
        self.stopped.retain(|_, at| at.elapsed() < GONE_AFTER);
        alive.retain(|name| !self.stopped.contains_key(name));
        for name in &alive {
            self.heard(name);
        }
        let now: HashSet<Arc<str>> = alive.into_iter().collect();
        let gone: Vec<Arc<str>> = self.listed.difference(&now).cloned().collect();
        // One listed again (after the bus came back, for it or for this
        // one) may have missed what was said meanwhile.
        let back: Vec<Arc<str>> = now.difference(&self.listed).cloned().collect();
        for name in back {
            self.back(&name);
        }
        for name in gone {
            if *name != *self.me {
                tracing::info!(instance = %name, "an instance left the cluster; its relayed players resume");
                self.forget(&name);
            }
        }
        self.listed = now;
    }

    /// Notes that `instance` is alive.
    pub fn heard(&mut self, instance: &str) {
        match self.seen.get_mut(instance) {
            Some(at) => *at = Instant::now(),
            None => {
                self.seen.insert(instance.into(), Instant::now());
            }
        }
    }

    /// Whether `instance` is alive: listed at the last read, and heard of lately.
    pub fn alive(&self, instance: &str) -> bool {
        self.listed.contains(instance) && self.seen.get(instance).is_some_and(|at| at.elapsed() < GONE_AFTER)
    }

    /// Instance `name` said it stopped.
    pub fn stopped(&mut self, name: &str) {
        self.stopped.insert(name.into(), Instant::now());
        self.forget(name);
    }

    /// Lets go of whatever another instance that is gone (stopped, or not
    /// heard of for [`GONE_AFTER`]) had here, and tells this instance's
    /// connections in its rooms to resume where the game went on.
    pub fn forget(&mut self, gone: &str) {
        self.let_go(gone, false);
    }

    /// [`Router::forget`]; but on a `restarted` instance, asks still
    /// unanswered there wait a moment for its new run's answer (they may
    /// have reached it: it is answering one now).
    fn let_go(&mut self, gone: &str, restarted: bool) {
        if !restarted {
            self.seen.remove(gone);
            self.listed.remove(gone);
        }
        self.ghosts.retain(|(from, _), ghost| {
            let keep = **from != *gone;
            if !keep {
                let _ = ghost.send(GhostCmd::Gone);
            }
            keep
        });
        let mut answers = Vec::new();
        self.relayed.retain(|_, away| {
            let there = away.at.as_deref() == Some(gone);
            if restarted && there && away.asked.is_some() {
                away.unsure = Some(Instant::now());
                return true;
            }
            away.ghosts.retain(|g| **g != *gone);
            if there {
                away.at = None;
                match away.asked.take() {
                    Some(ask) => answers.push((away.conn.clone(), ask)),
                    // In a room there: it resumes where the game goes on.
                    None => {
                        away.conn.send(Outbound::Restart);
                    }
                }
            }
            !away.ghosts.is_empty()
        });
        for (conn, ask) in answers {
            self.answer_here(conn, ask);
        }
    }

    /// Forgets the instances not heard of lately, and the connections here
    /// that closed.
    pub fn sweep(&mut self) {
        let gone: Vec<Arc<str>> =
            self.seen.iter().filter(|(_, at)| at.elapsed() >= GONE_AFTER).map(|(n, _)| n.clone()).collect();
        for name in gone {
            tracing::warn!(instance = %name, "an instance stopped answering on the bus; its relayed players resume");
            self.forget(&name);
        }
        // Asks that went to a run since gone, answered here.
        let mut answers = Vec::new();
        for away in self.relayed.values_mut() {
            if away.unsure.is_some_and(|since| since.elapsed() >= UNSURE) {
                away.unsure = None;
                if let Some(ask) = away.asked.take() {
                    away.at = None;
                    answers.push((away.conn.clone(), ask));
                }
            }
        }
        for (conn, ask) in answers {
            self.answer_here(conn, ask);
        }
        // A connection closed here: its ghosts elsewhere hear it, again
        // each second for a while after the bus came back (an instance not
        // back on the bus yet would not hear it).
        let (out, settled) = (&self.out, self.up_since.elapsed() >= GONE_AFTER);
        self.relayed.retain(|&conn, away| {
            let open = !away.conn.is_closed();
            if !open {
                for to in &away.ghosts {
                    let _ = out.try_send(Outgoing { to: to.clone(), msg: Wire::Gone { conn } });
                }
            }
            open || !settled
        });
    }

    /// The lookups to try again now.
    pub fn take_later(&mut self) -> Vec<ToBus> {
        std::mem::take(&mut self.later)
    }

    /// Instance `name` said it is back on the bus (its bus was away, or it
    /// started again under its name): it is alive, whatever it said at its
    /// last stop.
    pub fn returned(&mut self, name: &str) {
        self.stopped.remove(name);
        self.heard(name);
        self.back(name);
    }

    /// Instance `name` is back after its bus (or this one's) was away: what
    /// was lost meanwhile is healed by a fresh `state` of each room there
    /// of a player here.
    pub fn back(&mut self, name: &str) {
        for (conn, away) in self.relayed.iter().filter(|(_, a)| a.asked.is_none() && !a.over) {
            if let Some(at) = away.at.as_ref().filter(|at| ***at == *name) {
                let msg = Wire::Heal { conn: *conn };
                let _ = self.out.try_send(Outgoing { to: at.clone(), msg });
            }
        }
    }

    /// Handles one message from another instance.
    pub fn incoming(&mut self, env: Envelope) {
        let Envelope { from, run, msg } = env;
        if self.runs.get(&from).is_some_and(|known| *known != run) {
            tracing::info!(instance = %from, "an instance restarted; what its last run had here is let go");
            self.let_go(&from, true);
        }
        self.runs.insert(from.clone(), run);
        self.stopped.remove(&from);
        self.heard(&from);
        match msg {
            Wire::Enter { conn, ask } => {
                let key = (from.clone(), conn);
                let ghost = self.ghosts.entry(key).or_insert_with(|| {
                    relay::ghost(from.clone(), conn, self.queue_len, self.lobby.clone(), self.out.clone())
                });
                if let Err(mpsc::error::SendError(GhostCmd::Enter(ask))) = ghost.send(GhostCmd::Enter(ask)) {
                    // Its ghost had ended: a new one takes it.
                    let ghost = relay::ghost(
                        from.clone(),
                        conn,
                        self.queue_len,
                        self.lobby.clone(),
                        self.out.clone(),
                    );
                    let _ = ghost.send(GhostCmd::Enter(ask));
                    self.ghosts.insert((from, conn), ghost);
                }
            }
            Wire::Request { conn, request, id } => {
                let key = (from, conn);
                if let Some(ghost) = self.ghosts.get(&key) {
                    if ghost.send(GhostCmd::Request { request, id }).is_err() {
                        self.ghosts.remove(&key);
                    }
                }
            }
            Wire::Gone { conn } => {
                if let Some(ghost) = self.ghosts.remove(&(from, conn)) {
                    let _ = ghost.send(GhostCmd::Gone);
                }
            }
            Wire::Heal { conn } => {
                if let Some(ghost) = self.ghosts.get(&(from, conn)) {
                    let _ = ghost.send(GhostCmd::Heal);
                }
            }
            Wire::Pair { conn, rules, host } => {
                let conn = crate::core::ids::ConnId::new(crate::core::ids::ALONE, conn);
                let _ = self.lobby.try_send(LobbyCmd::Paired { conn, rules, host });
            }
            Wire::Out { conn, item } => {
                // Only from an instance it has a ghost on: one it forgot (gone,
                // then back with a stale copy) says nothing to it any more.
                let delivered = match self.relayed.get_mut(&conn).filter(|a| a.ghosts.contains(&from)) {
                    Some(away) => {
                        match &item {
                            Item::Frame { text } => {
                                if text.starts_with(relay::GAME_OVER) {
                                    away.over = true;
                                } else if text.starts_with(relay::GAME_STARTED) {
                                    away.over = false;
                                }
                            }
                            Item::Live { .. } | Item::Rated { .. } | Item::Restart => {}
                            // In a room there: its instance's end concerns it.
                            Item::Entered { .. } | Item::Drafted { .. } => {
                                away.over = false;
                                away.asked = None;
                                away.unsure = None;
                                away.at = Some(from.clone());
                            }
                            // Its ask there went nowhere.
                            Item::Refused => {
                                away.asked = None;
                                away.unsure = None;
                                if away.at.as_ref() == Some(&from) {
                                    away.at = None;
                                }
                            }
                            // Out of its room (unless it asked for more meanwhile).
                            Item::Released { .. } | Item::Replaced { .. } => {
                                if away.asked.is_none() && away.at.as_ref() == Some(&from) {
                                    away.at = None;
                                }
                            }
                        }
                        away.conn.send(relay::outbound(item, &from, &self.out))
                    }
                    None => false,
                };
                if !delivered {
                    // Nobody here to take it: its ghost there can go.
                    if let Some(away) = self.relayed.get_mut(&conn) {
                        away.ghosts.retain(|g| *g != from);
                    }
                    let _ = self.out.try_send(Outgoing { to: from, msg: Wire::Gone { conn } });
                }
            }
        }
    }

    /// After the bus came back: the other instances get their time to come
    /// back too (nobody is forgotten for what the outage hid); each is
    /// listed anew once it is back, which heals what was lost meanwhile
    /// (see [`Router::listed`]).
    pub fn resync(&mut self) {
        self.up_since = Instant::now();
        self.listed.clear();
        for at in self.seen.values_mut() {
            *at = Instant::now();
        }
    }

    /// Carries out what the lobby asked; `conn` is Redis, or `None` while
    /// it cannot be reached.
    pub async fn from_lobby(
        &mut self,
        ask: ToBus,
        conn: Option<&mut MultiplexedConnection>,
    ) -> redis::RedisResult<()> {
        let conn_up = conn.is_some();
        match ask {
            ToBus::Opened(code) => {
                self.own.insert(code.clone());
                self.pending.push((code, true));
            }
            ToBus::Closed(code) => {
                self.own.remove(&code);
                self.pending.push((code, false));
            }
            ToBus::Waiting(waiting) => self.waiting = waiting,
            ToBus::Cancel { conn: id, rules } => {
                if let Some(away) = self.relayed.get_mut(&id.seq()) {
                    if let (Some(at), Some(Ask::Queue { .. })) = (&away.at, &away.asked) {
                        let msg = Wire::Enter { conn: id.seq(), ask: Ask::Cancel { rules } };
                        let _ = self.out.try_send(Outgoing { to: at.clone(), msg });
                        away.asked = None;
                        away.at = None;
                    }
                }
            }
            ToBus::Challenge { conn, ask, at } => self.send_aside(conn, at, ask),
            ToBus::Decline { conn, ask, host } => self.send_aside(conn, host, ask),
            ToBus::LeftIdle { conn, all, closed } => {
                let seq = conn.seq();
                let Some(away) = self.relayed.get_mut(&seq) else { return Ok(()) };
                for to in away.ghosts.clone() {
                    let msg = match closed {
                        true => Wire::Gone { conn: seq },
                        false => Wire::Enter { conn: seq, ask: Ask::Engaged { all } },
                    };
                    let _ = self.out.try_send(Outgoing { to, msg });
                }
                // Without the bus the word is lost: kept, the connection's
                // ghosts hear of its end from the sweep once the bus is back.
                if closed && conn_up {
                    self.relayed.remove(&seq);
                }
            }
            ToBus::Move { conn, who, rules, to } => {
                let ask = Ask::Queue { who: (*who).clone(), rules, house: None };
                self.send_enter(conn, to, ask);
            }
            ToBus::Lookup { cmd, looks } => {
                let owner = match conn {
                    Some(redis) => self.owner(&cmd, redis).await?,
                    None => None,
                };
                // A room made a moment ago elsewhere may not be written yet.
                let fresh =
                    matches!(cmd, LobbyCmd::JoinRoom { .. } | LobbyCmd::Spectate { .. }) && looks == 0;
                match owner {
                    None if fresh => self.later.push(ToBus::Lookup { cmd, looks: 1 }),
                    owner => self.enter(cmd, owner, looks).await,
                }
            }
        }
        Ok(())
    }

    /// Writes the directory changes waiting (all of this instance's rooms
    /// again with `all`, after the bus came back).
    pub async fn write_directory(
        &mut self,
        conn: &mut MultiplexedConnection,
        all: bool,
    ) -> redis::RedisResult<()> {
        if all {
            self.pending.clear();
            let own: Vec<Arc<str>> = self.own.iter().cloned().collect();
            for chunk in own.chunks(1000) {
                let mut pipe = redis::pipe();
                for code in chunk {
                    pipe.cmd("EVAL").arg(CLAIM_FREE).arg(1).arg(ROOMS).arg(&**code).arg(&*self.me).ignore();
                }
                pipe.query_async::<()>(conn).await?;
            }
            return Ok(());
        }
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for (code, open) in &self.pending {
            match open {
                true => pipe.cmd("HSET").arg(ROOMS).arg(&**code).arg(&*self.me).ignore(),
                false => {
                    pipe.cmd("EVAL").arg(DELETE_OWN).arg(1).arg(ROOMS).arg(&**code).arg(&*self.me).ignore()
                }
            };
        }
        pipe.query_async::<()>(conn).await?;
        self.pending.clear();
        Ok(())
    }

    /// The live instance other than this one that runs the room `cmd` names.
    async fn owner(
        &mut self,
        cmd: &LobbyCmd<ConnHandle>,
        conn: &mut MultiplexedConnection,
    ) -> redis::RedisResult<Option<Arc<str>>> {
        let code = match cmd {
            LobbyCmd::JoinRoom { room, .. } | LobbyCmd::Spectate { room, .. } => {
                codes::normalize_room_code(room)
            }
            LobbyCmd::Resume { token, .. } => match token_room(token, codes::ROOM_CODE_LEN) {
                Some(code) => code.to_owned(),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        let owner: Option<String> = redis::cmd("HGET").arg(ROOMS).arg(&code).query_async(conn).await?;
        let Some(owner) = owner.filter(|o| **o != *self.me && !self.stopped.contains_key(o.as_str())) else {
            return Ok(None);
        };
        if self.alive(&owner) {
            return Ok(Some(owner.into()));
        }
        // Not listed here yet (it started within the last second): its own
        // list says whether it is alive.
        let listed: bool = redis::cmd("EXISTS").arg(format!("{WHO}:{owner}")).query_async(conn).await?;
        if !listed {
            return Ok(None);
        }
        let owner: Arc<str> = owner.into();
        self.heard(&owner);
        self.listed.insert(owner.clone());
        Ok(Some(owner))
    }

    /// Sends `cmd` to `owner`'s instance, or answers it here: `room_not_found`,
    /// or (a `resume`) back to the lobby to wait for adoption.
    async fn enter(&mut self, cmd: LobbyCmd<ConnHandle>, owner: Option<Arc<str>>, looks: u8) {
        let (conn, ask) = match cmd {
            LobbyCmd::JoinRoom { conn, name, room, id } => {
                (conn, Ask::Join { room, who: (*name).clone(), id })
            }
            LobbyCmd::Spectate { conn, room, id } => (conn, Ask::Spectate { room, id }),
            LobbyCmd::Resume { conn, token, id } => (conn, Ask::Resume { token, id }),
            _ => return,
        };
        match (owner, ask) {
            (Some(to), ask) => self.send_enter(conn, to, ask),
            (None, Ask::Resume { token, id }) => {
                let _ = self.lobby.send(LobbyCmd::Park { conn, token, id, looks }).await;
            }
            (None, ask) => self.answer_here(conn, ask),
        }
    }

    /// Sends the connection's `ask` to instance `to`, where its room (or
    /// queue) will be, keeping it until answered.
    fn send_enter(&mut self, conn: ConnHandle, to: Arc<str>, ask: Ask) {
        if !self.alive(&to) {
            return self.answer_here(conn, ask);
        }
        let seq = conn.id.seq();
        let away = self.relayed.entry(seq).or_insert_with(|| Away::new(conn.clone()));
        away.conn = conn;
        away.at = Some(to.clone());
        away.asked = Some(ask.clone());
        away.unsure = None;
        away.ghost_at(&to);
        let _ = self.out.try_send(Outgoing { to, msg: Wire::Enter { conn: seq, ask } });
    }

    /// Sends the connection's `ask` about challenges to instance `to`.
    fn send_aside(&mut self, conn: ConnHandle, to: Arc<str>, ask: Ask) {
        if !self.alive(&to) {
            return self.answer_here(conn, ask);
        }
        let seq = conn.id.seq();
        let away = self.relayed.entry(seq).or_insert_with(|| Away::new(conn.clone()));
        away.ghost_at(&to);
        let _ = self.out.try_send(Outgoing { to, msg: Wire::Enter { conn: seq, ask } });
    }

    /// Answers here what another instance cannot: a `resume` waits for
    /// adoption here, a moved queue entry comes back to this instance's
    /// queue, `join_room` and `spectate` find no room, a challenge no
    /// player, a `decline` no challenge.
    fn answer_here(&mut self, conn: ConnHandle, ask: Ask) {
        match ask {
            Ask::Resume { token, id } => {
                let _ = self.lobby.try_send(LobbyCmd::Park { conn, token, id, looks: 0 });
            }
            Ask::Queue { who, rules, .. } => {
                let who = Arc::new(who);
                let _ = self.lobby.try_send(LobbyCmd::Requeue { conn, name: who, rules, house: None });
            }
            Ask::Join { room, id, .. } | Ask::Spectate { room, id } => {
                let code = codes::normalize_room_code(&room);
                let msg = ServerMessage::error(ErrorCode::RoomNotFound, codes::no_room(&code), id);
                crate::metrics::refused(ErrorCode::RoomNotFound);
                conn.frame(&encode(&msg));
                conn.send(Outbound::Refused);
            }
            Ask::Challenge { name, id, .. } => {
                let shown: String = name.chars().take(40).collect();
                let text =
                    format!("nobody called {shown:?} is online right now; a `who` request lists who is");
                refuse_here(&conn, ErrorCode::PlayerNotFound, text, id);
            }
            Ask::Decline { challenge, id, .. } => {
                let shown: String = challenge.chars().take(40).collect();
                refuse_here(&conn, ErrorCode::ChallengeNotFound, format!("no open challenge {shown:?}"), id);
            }
            Ask::Cancel { .. } | Ask::Engaged { .. } => {}
        }
    }

    /// A message that cannot go out while Redis is down: a request that
    /// waits for an answer is answered here.
    pub fn undeliverable(&mut self, msg: Outgoing) {
        let Wire::Enter { conn, .. } = msg.msg else { return };
        let Some(away) = self.relayed.get_mut(&conn) else { return };
        if let Some(ask) = away.asked.take() {
            away.at = None;
            let conn = away.conn.clone();
            self.answer_here(conn, ask);
        }
    }
}

/// Refuses a connection's request here, as its lobby would.
fn refuse_here(conn: &ConnHandle, code: ErrorCode, text: String, id: Option<tictactoe_protocol::RequestId>) {
    crate::metrics::refused(code);
    conn.frame(&encode(&ServerMessage::error(code, text, id)));
}
