//! The bus's routing of relayed connections (see [`super::relay`]), as a
//! state machine: [`Router::handle`] takes one [`Input`] and says what
//! Redis must do ([`Output`]); what Redis answers comes back as an input.
//! It keeps which instance runs each room (a Redis hash every instance
//! writes its own rooms to), the ghosts of other instances' connections in
//! rooms here, and this instance's connections in rooms elsewhere. Besides
//! its outputs it only hands items to in-process queues that never wait:
//! a connection's, a ghost's, the bus's outbox.

mod away;
pub mod budget;
mod instances;
mod messages;

use away::Away;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::matchmaker::Waiting;
use super::relay::{Envelope, GhostCmd, Outgoing, ToInstances};
use crate::cmd::{Ask, ConnHandle, LobbyCmd, Where};
use crate::core::codes;

use crate::room::token_room;

/// The set of the instances that said who is online on them (and the
/// prefix of each one's list).
pub const WHO: &str = "ttt:who";

/// The hash of every room's instance, by code.
pub const ROOMS: &str = "ttt:rooms";

/// An instance not heard of for this long is gone: its ghosts here leave
/// their rooms, and connections here in its rooms are told to resume.
pub const GONE_AFTER: Duration = Duration::from_secs(5);

/// What the lobby hands the bus.
#[derive(Debug)]
pub enum ToBus {
    /// What a connection here asks that another instance answers.
    Ask {
        /// The connection.
        conn: ConnHandle,
        /// What it asks, shipped as it is.
        ask: Ask,
        /// Which instance answers.
        at: Where,
    },
    /// A room opened here.
    Opened(Arc<str>),
    /// A room here closed.
    Closed(Arc<str>),
    /// Who waits in the queues here now.
    Waiting(Vec<Waiting>),
}

/// An ask waiting for Redis to say which instance runs the room it names.
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub struct Lookup {
    pub code: String,
    /// The asking connection.
    pub conn: ConnHandle,
    /// `join_room`, `spectate` or `resume`.
    pub ask: Ask,
    /// Looks for games to adopt a `resume` has waited already.
    pub looks: u8,
    /// The cluster-wide budget this lookup is charged to, in the same round
    /// trip (a request's first lookup, from an address of this instance).
    pub charge: Option<budget::Charge>,
}

/// What happens to the router: the lobby's asks, other instances' words,
/// Redis's answers, time.
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum Input {
    /// The lobby hands the bus this.
    Lobby(ToBus),
    /// A message from another instance.
    Incoming(Envelope),
    /// Redis's answer to [`Output::Lookup`]: the instance [`ROOMS`] names
    /// for the room, and whether that instance's list of who is online is
    /// there; `None` when Redis has no entry or could not be asked.
    Found {
        lookup: Lookup,
        /// The room's instance and whether it is listed.
        owner: Option<(String, bool)>,
    },
    /// Redis refused [`Output::Lookup`]: its address spent its lookups
    /// across the cluster; one is free again after `wait`.
    Limited { lookup: Lookup, wait: Duration },
    /// The instances whose lists of who is online were there just now.
    Listed(Vec<Arc<str>>),
    /// An instance said it is back on the bus.
    Returned(String),
    /// An instance said it stopped.
    Stopped(String),
    /// A second passed: instances not heard of lately are forgotten, and
    /// connections here that closed are let go of elsewhere.
    Sweep,
    /// The lookups deferred for a moment are due.
    Retry,
    /// The bus came back: all of this instance's rooms are written again,
    /// and the other instances get their time to come back too.
    Resync,
    /// The bus lost Redis: what cannot be said now is kept for later.
    Down,
    /// A message that could not go out (Redis is down).
    Undeliverable(Outgoing),
}

/// What the router asks the bus to do with Redis (or, for the lobby, to
/// hand it, waiting while its inbox is full).
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum Output {
    /// Find which instance runs `code`; the answer is [`Input::Found`].
    Lookup(Lookup),
    /// Write a room's entry in [`ROOMS`] as this instance's (`open`), or
    /// delete it if it is still this instance's.
    Room {
        code: Arc<str>,
        /// Opened, or closed.
        open: bool,
    },
    /// Write every room of this instance again, unless another instance
    /// holds it now (after a cut-off, a stale copy must not take an
    /// adopted game back).
    Claim(Vec<Arc<str>>),
    /// Hand the lobby this.
    Lobby(LobbyCmd),
}

/// The routing state; lives in the bus's task.
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub struct Router {
    pub me: Arc<str>,
    /// Where ghosts enter rooms.
    lobby: mpsc::Sender<LobbyCmd>,
    /// Where messages to other instances queue.
    out: ToInstances,
    /// A ghost's queue bound (`--outbound-queue`).
    queue_len: usize,
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
    /// Who waits here, as last told.
    pub waiting: Vec<Waiting>,
    /// Lookups to try again at the next pass: a room made a moment ago
    /// elsewhere may not be written yet.
    later: Vec<ToBus>,
    /// When the bus last came up.
    up_since: Instant,
    /// Each other instance's run (a restart under the same name is a new
    /// instance: what the old run had here is let go).
    runs: HashMap<Arc<str>, u64>,
    /// Whether Redis answers (as the bus last said).
    up: bool,
    /// The time of the input being handled.
    now: Instant,
    /// What Redis must do, so far.
    outputs: Vec<Output>,
    /// The lookups each client address here may still cause.
    budget: budget::Budget,
}

impl Router {
    /// Routing for instance `me`: ghosts enter through `lobby`, messages to
    /// other instances queue on `out`.
    pub fn new(me: Arc<str>, lobby: mpsc::Sender<LobbyCmd>, out: ToInstances, queue_len: usize) -> Router {
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
            waiting: Vec::new(),
            later: Vec::new(),
            up_since: Instant::now(),
            runs: HashMap::new(),
            up: false,
            now: Instant::now(),
            outputs: Vec::new(),
            budget: budget::Budget::new(budget::LOOKUPS_PER_SECOND),
        }
    }

    /// Where messages to other instances queue (the leader's pairings go
    /// there too, published in order with the rest).
    pub fn outbox(&self) -> ToInstances {
        self.out.clone()
    }

    /// How many connections are relayed each way (for /metrics).
    pub fn counts(&self) -> (usize, usize) {
        (self.ghosts.len(), self.relayed.len())
    }

    /// Handles one input at `now`: what Redis (and the lobby) must do, in order.
    pub fn handle(&mut self, input: Input, now: Instant) -> Vec<Output> {
        self.now = now;
        match input {
            Input::Lobby(ask) => self.lobby_asked(ask),
            Input::Incoming(env) => self.incoming(env),
            Input::Found { lookup, owner } => self.found(lookup, owner),
            Input::Limited { lookup, wait } => self.refuse(&lookup.conn, &lookup.ask, wait),
            Input::Listed(alive) => self.listed(alive),
            Input::Returned(name) => self.returned(&name),
            Input::Stopped(name) => self.stopped(&name),
            Input::Sweep => self.sweep(),
            Input::Retry => {
                for ask in std::mem::take(&mut self.later) {
                    self.lobby_asked(ask);
                }
            }
            Input::Resync => {
                self.resync();
                self.outputs.push(Output::Claim(self.own.iter().cloned().collect()));
            }
            Input::Down => self.up = false,
            Input::Undeliverable(msg) => self.undeliverable(msg),
        }
        std::mem::take(&mut self.outputs)
    }

    /// Carries out what the lobby asked.
    fn lobby_asked(&mut self, ask: ToBus) {
        match ask {
            ToBus::Opened(code) => {
                self.own.insert(code.clone());
                self.outputs.push(Output::Room { code, open: true });
            }
            ToBus::Closed(code) => {
                self.own.remove(&code);
                self.outputs.push(Output::Room { code, open: false });
            }
            ToBus::Waiting(waiting) => self.waiting = waiting,
            ToBus::Ask { conn, ask, at: Where::Find { looks } } => {
                let code = match &ask {
                    Ask::JoinRoom { room, .. } | Ask::Spectate { room, .. } => {
                        codes::normalize_room_code(room)
                    }
                    Ask::Resume { token, .. } => match token_room(token, codes::ROOM_CODE_LEN) {
                        Some(code) => code.to_owned(),
                        None => return self.enter(conn, ask, None, looks),
                    },
                    _ => return,
                };
                // A request's first lookup is paid for by its address; the
                // looks a parked `resume` repeats are bounded by the
                // request, and go to Redis together at each look.
                if looks == 0 && !self.afford(&conn, &ask) {
                    return;
                }
                let charge = if looks == 0 { self.charge(&conn) } else { None };
                self.outputs.push(Output::Lookup(Lookup { code, conn, ask, looks, charge }));
            }
            ToBus::Ask { conn, ask: ask @ Ask::Requeue { .. }, at: Where::At(to) } => {
                self.send_enter(conn, to, ask)
            }
            ToBus::Ask { conn, ask, at: Where::At(to) } => self.send_aside(conn, to, ask),
            ToBus::Ask { conn, ask, at: Where::Followed } => self.follow(conn, ask),
        }
    }

    /// Redis said which instance runs the room `lookup` names.
    fn found(&mut self, lookup: Lookup, owner: Option<(String, bool)>) {
        let owner = owner.and_then(|(owner, listed)| self.live_owner(owner, listed));
        let Lookup { conn, ask, looks, .. } = lookup;
        match owner {
            // A room made a moment ago elsewhere may not be written yet.
            None if matches!(ask, Ask::JoinRoom { .. } | Ask::Spectate { .. }) && looks == 0 => {
                self.later.push(ToBus::Ask { conn, ask, at: Where::Find { looks: 1 } })
            }
            owner => self.enter(conn, ask, owner, looks),
        }
    }

    /// The live instance other than this one that Redis names as a room's:
    /// one not listed here yet (it started within the last second) is
    /// alive if its own list is there.
    fn live_owner(&mut self, owner: String, listed: bool) -> Option<Arc<str>> {
        if *owner == *self.me || self.stopped.contains_key(owner.as_str()) {
            return None;
        }
        if self.alive(&owner) {
            return Some(owner.into());
        }
        if !listed {
            return None;
        }
        let owner: Arc<str> = owner.into();
        self.heard(&owner);
        self.listed.insert(owner.clone());
        Some(owner)
    }

    /// Sends `ask` to `owner`'s instance, or answers it here: `room_not_found`,
    /// or (a `resume`) back to the lobby to wait for adoption.
    fn enter(&mut self, conn: ConnHandle, ask: Ask, owner: Option<Arc<str>>, looks: u8) {
        match (owner, ask) {
            (Some(to), ask) => self.send_enter(conn, to, ask),
            (None, Ask::Resume { token, id }) => {
                self.outputs.push(Output::Lobby(LobbyCmd::Park { conn, token, id, looks }))
            }
            (None, ask) => self.answer_here(conn, ask),
        }
    }
}

#[cfg(test)]
mod tests;
