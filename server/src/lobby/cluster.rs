//! The lobby's cluster half: who is online on the other instances, the
//! `resume`s waiting for a game to be adopted here, and the asks it sends
//! elsewhere ([`Output::Elsewhere`]). A lobby that runs alone has none of it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use tictactoe_protocol::{ErrorCode, OnlinePlayer, RequestId};

use super::{Lobby, Output};
use crate::cluster::matchmaker::Waiting;
use crate::cmd::{Ask, Peer, RoomCmd, Where};
use crate::core::account::name_key;
use crate::core::codes;
use crate::core::ids::{ALONE, ConnId};
use crate::core::presence;
use crate::room::{INVALID_TOKEN, Room, token_room};
use tictactoe_protocol::Rules;

/// Most names an instance tells the others it has online: `who` shows 200,
/// and a `challenge` from another instance finds a name among these.
const SHARED_NAMES: usize = 1_000;

/// Most `resume`s parked at once; beyond, an unknown token is refused at once.
const PARKED_MAX: usize = 10_000;

/// Looks for games to adopt a parked `resume` waits for: a game let go by a
/// stopping instance comes at the first look after it; a dead one's once
/// its lease has run out, which is up to a lease and a look after the death
/// (its last word was up to a look before it): that, and two looks more.
pub(super) const PARKED_LOOKS: u8 =
    (crate::store::LEASE.as_millis() / crate::cluster::adopt::LOOK.as_millis()) as u8 + 4;

/// What a lobby in a cluster knows of the other instances.
#[derive(Debug)]
pub(super) struct Cluster<C> {
    /// This instance's name: the prefix of the challenge ids made here.
    me: Arc<str>,
    /// `resume`s whose game is not here (yet): another instance may be
    /// letting it go, for this one to adopt at its next look. `None` once
    /// the looks ended: an unknown token is then refused at once.
    parked: Option<Vec<Parked<C>>>,
    /// Who is online on the other instances (as of a second ago), for `who`.
    pub(super) online: Vec<OnlinePlayer>,
    /// The instance of each name online elsewhere (by name key), for a
    /// challenge to a player not here.
    online_at: HashMap<String, Arc<str>>,
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

impl<C: Peer> Lobby<C> {
    /// Makes this lobby instance `me`'s of a cluster: a `resume` whose game
    /// is not here waits for the next looks for games to adopt
    /// ([`Lobby::looked`]) before it is `invalid_token`, and rooms, players
    /// and challenges not here are looked for elsewhere.
    pub fn in_cluster(&mut self, me: &str) {
        self.players.name_ids(me);
        let (online, online_at) = (Vec::new(), HashMap::new());
        self.cluster = Some(Cluster { me: me.into(), parked: Some(Vec::new()), online, online_at });
    }

    /// Who is online on this instance, for the other instances' `who`.
    pub fn online_here(&self) -> Vec<OnlinePlayer> {
        self.players.here(SHARED_NAMES)
    }

    /// Who is online on the other instances of the cluster, as they last
    /// said, each with its instance.
    pub fn online_elsewhere(&mut self, players: Vec<(Arc<str>, OnlinePlayer)>) {
        let Some(cluster) = &mut self.cluster else { return };
        cluster.online_at = players.iter().map(|(at, p)| (name_key(&p.name), at.clone())).collect();
        cluster.online = players.into_iter().map(|(_, p)| p).collect();
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

    /// The looks for games to adopt ended (the leases' thread stopped):
    /// parked `resume`s are refused, and no more wait.
    pub fn not_looking(&mut self) -> Vec<Output<C>> {
        let parked = self.cluster.as_mut().and_then(|c| c.parked.take());
        for p in parked.unwrap_or_default() {
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
            self.open(room, Vec::new(), Vec::new());
        }
        let Some(parked) = self.cluster.as_mut().and_then(|c| c.parked.take()) else {
            return self.outputs();
        };
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
                    let ask = Ask::Resume { token: p.token, id: p.id };
                    let at = Where::Find { looks: p.looks + 1 };
                    self.out.push(Output::Elsewhere { conn: p.conn, ask, at });
                }
                None => {
                    p.looks += 1;
                    waiting.push(p);
                }
            }
        }
        if let Some(cluster) = &mut self.cluster {
            cluster.parked = Some(waiting);
        }
        self.outputs()
    }

    /// A `resume` whose room is not here: asked elsewhere for a connection
    /// whose socket is here, else parked until the next looks (refused
    /// when it cannot wait).
    pub(super) fn resume_elsewhere(&mut self, conn: C, token: String, id: Option<RequestId>) {
        if self.asks_elsewhere(conn.id()) {
            let ask = Ask::Resume { token, id };
            return self.out.push(Output::Elsewhere { conn, ask, at: Where::Find { looks: 0 } });
        }
        self.park(conn, token, id, 0);
    }

    /// Parks a `resume` nobody runs until the next looks for games to adopt.
    pub(super) fn park(&mut self, conn: C, token: String, id: Option<RequestId>, looks: u8) {
        match self.cluster.as_mut().and_then(|c| c.parked.as_mut()) {
            Some(parked) if parked.len() < PARKED_MAX => parked.push(Parked { conn, token, id, looks }),
            _ => self.refuse(&conn, ErrorCode::InvalidToken, INVALID_TOKEN, id),
        }
    }

    /// The matchmaker paired a player waiting here with one on `host`: it
    /// moves there if it still waits (and its socket is here).
    pub(super) fn paired(&mut self, conn: ConnId, rules: Rules, host: Arc<str>) {
        let queue = self.queues.entry(rules).or_default();
        let Some(i) = queue.iter().position(|(c, ..)| c.id() == conn && !c.relayed()) else { return };
        if let Some((conn, who, _)) = queue.remove(i) {
            let ask = Ask::Requeue { who, rules, house: None };
            self.out.push(Output::Elsewhere { conn, ask, at: Where::At(host) });
        }
    }

    /// Sends what `conn` asks or says to the instances it went to already,
    /// if it is a connection whose socket is here.
    pub(super) fn follow(&mut self, conn: C, ask: Ask) {
        if self.asks_elsewhere(conn.id()) {
            self.out.push(Output::Elsewhere { conn, ask, at: Where::Followed });
        }
    }

    /// The other instance a name is online on, for a challenge from `conn`
    /// (a connection whose socket is here).
    pub(super) fn player_elsewhere(&self, name: &str, conn: &C) -> Option<Arc<str>> {
        if !self.asks_elsewhere(conn.id()) {
            return None;
        }
        self.cluster.as_ref()?.online_at.get(&name_key(name.trim())).cloned()
    }

    /// The other instance a challenge id was made on.
    pub(super) fn challenge_host(&self, challenge: &str, conn: &C) -> Option<Arc<str>> {
        let (host, _) = challenge.split_once('~')?;
        let me = &self.cluster.as_ref()?.me;
        (self.asks_elsewhere(conn.id()) && **me != *host).then(|| host.into())
    }

    /// A challenge (`ask`) to a player on instance `at`: sent there, if the
    /// challenger may challenge now.
    pub(super) fn challenge_elsewhere(&mut self, conn: C, ask: Ask, id: Option<RequestId>, at: Arc<str>) {
        match self.players.listed(conn.id()) {
            Some((_, presence::Status::Idle)) => {
                // Its connection then says when it leaves idle, which ends
                // the challenge there too (`Ask::Engaged`).
                self.players.count_challenge(conn.id());
                self.out.push(Output::Elsewhere { conn, ask, at: Where::At(at) })
            }
            Some(_) => {
                let text = "you are in a game or waiting for one; challenge when you are free (leave first)";
                self.answer(&conn, ErrorCode::Busy, text, id)
            }
            None => self.answer(&conn, ErrorCode::InvalidName, "say hello with your name first", id),
        }
    }

    /// Whether what `conn` asks that is not here is looked for on the other
    /// instances: in a cluster, for a connection whose socket is here (a
    /// ghost's asks came from its own instance, which looked already).
    pub(super) fn asks_elsewhere(&self, conn: ConnId) -> bool {
        self.cluster.is_some() && conn.instance() == ALONE
    }
}
