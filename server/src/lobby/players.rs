//! Who is online and the challenges between them: the directory of named
//! connections (`who`, and finding a player by name) and every open
//! challenge with its expiry. Part of the lobby's state machine: no tasks,
//! and connections are reached only through their queues.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{ErrorCode, MAX_ONLINE, OnlinePlayer, OnlineStatus, RequestId, ServerMessage};

use crate::cmd::{Peer, player_not_found};
use crate::core::account::{AccountId, Identity, name_key};
use crate::core::ids::ConnId;
use crate::core::presence::{Status, Whereabouts};
use crate::room::{HOUSE_NAME, Rules};
use rand::rngs::StdRng;

mod challenges;

/// Open challenges one challenger may have sent at once: a connection, or
/// an account over all its connections.
pub const MAX_SENT: usize = 5;

/// Open challenges one connection may have waiting for its answer.
pub const MAX_RECEIVED: usize = 20;

/// Open challenges sent from one address at once, over all its connections
/// and names: one client cannot challenge everyone by opening connections.
pub const MAX_SENT_PER_ADDRESS: usize = 50;

/// Open challenges from one address that one player may have waiting: one
/// client cannot fill a player's [`MAX_RECEIVED`] and lock others out.
pub const MAX_RECEIVED_PER_ADDRESS: usize = 5;

/// Challenges one player may be offered within [`OFFERS_WINDOW`], however
/// many are withdrawn at once: a challenge-and-withdraw loop cannot bury
/// its target's own replies under `challenged` and `challenge_ended`.
pub const MAX_OFFERS: usize = 30;

/// The window [`MAX_OFFERS`] counts over.
pub const OFFERS_WINDOW: Duration = Duration::from_secs(10);

/// A refusal: its code and text.
pub type Refusal = (ErrorCode, String);

/// A named connection.
#[derive(Debug)]
struct Online<C> {
    conn: C,
    who: Arc<Identity>,
    presence: Arc<dyn Whereabouts>,
    /// Its place in `by_name`.
    key: (String, u64),
    /// Open challenges it sent, and those waiting for its answer.
    sent: Vec<Arc<str>>,
    received: Vec<Arc<str>>,
    /// When it was offered its challenges of the last [`OFFERS_WINDOW`].
    offered: std::collections::VecDeque<Instant>,
}

/// One open challenge.
#[derive(Debug)]
struct Challenge {
    from: ConnId,
    to: ConnId,
    rules: Rules,
    /// The challenger's address and account when it was sent, as counted.
    address: IpAddr,
    account: Option<AccountId>,
}

/// An accepted challenge, for the lobby to open its room.
#[derive(Debug)]
pub struct Accepted<C> {
    /// The challenger's connection, claimed for the game.
    pub from: C,
    /// Who the challenger is.
    pub from_who: Arc<Identity>,
    /// The board it asked for.
    pub rules: Rules,
}

/// The directory and the challenges.
#[derive(Debug)]
pub struct Players<C> {
    online: HashMap<ConnId, Online<C>>,
    /// Name keys (lower case), then the order they named themselves in.
    by_name: BTreeSet<(String, u64, ConnId)>,
    named: u64,
    challenges: HashMap<Arc<str>, Challenge>,
    /// Challenges by expiry; every challenge lives equally long, so the
    /// order they were made in is the order they expire in.
    expiry: VecDeque<(Instant, Arc<str>)>,
    lifetime: Duration,
    made: u64,
    /// Open challenges sent from each address, and by each account.
    by_address: HashMap<IpAddr, usize>,
    by_account: HashMap<AccountId, usize>,
    /// Challenge ids' random part.
    rng: StdRng,
    /// In a cluster, what every challenge id here starts with: the
    /// instance's name and `~` (a `decline` elsewhere comes here by it).
    prefix: String,
    /// Messages for connections, in order, until the lobby collects them.
    mail: Vec<(C, ServerMessage)>,
}

impl<C: Peer> Players<C> {
    /// Nobody online; challenges live `lifetime` unanswered; ids drawn from `rng`.
    pub fn new(lifetime: Duration, rng: StdRng) -> Self {
        Players {
            online: HashMap::new(),
            by_name: BTreeSet::new(),
            named: 0,
            challenges: HashMap::new(),
            expiry: VecDeque::new(),
            lifetime,
            made: 0,
            by_address: HashMap::new(),
            by_account: HashMap::new(),
            rng,
            prefix: String::new(),
            mail: Vec::new(),
        }
    }

    /// Challenge ids made here name `instance`, for a cluster.
    pub fn name_ids(&mut self, instance: &str) {
        self.prefix = format!("{instance}~");
    }

    /// Counts a challenge a listed connection made on another instance (its
    /// presence then reports leaving idle; the count is never lowered, as
    /// the end of that challenge is not heard of here).
    pub fn count_challenge(&self, conn: ConnId) {
        if let Some(o) = self.online.get(&conn) {
            o.presence.add_challenge();
        }
    }

    /// Who a listed connection is, and where it stands.
    pub fn listed(&self, conn: ConnId) -> Option<(Arc<Identity>, Status)> {
        self.online.get(&conn).map(|o| (o.who.clone(), o.presence.status()))
    }

    /// Claims a listed connection of this instance for a game it did not
    /// ask for (a tournament's pairing): its handle and who it is, if it
    /// was free.
    pub fn draft(&self, conn: ConnId) -> Option<(C, Arc<Identity>)> {
        let o = self.online.get(&conn).filter(|o| !o.conn.relayed() && !o.conn.is_closed())?;
        o.presence.draft().ok()?;
        Some((o.conn.clone(), o.who.clone()))
    }

    /// Frees a listed connection drafted for a game that could not be opened.
    pub fn undraft(&self, conn: ConnId) {
        if let Some(o) = self.online.get(&conn) {
            o.presence.undraft();
        }
    }

    /// A connection said who it is (again).
    /// A ghost of another instance's connection challenges from here but is
    /// neither listed nor found by name: its own instance lists it.
    pub fn online(&mut self, conn: C, who: Arc<Identity>, presence: Arc<dyn Whereabouts>) {
        self.named += 1;
        let key = (name_key(&who.name), self.named);
        if !conn.relayed() {
            self.by_name.insert((key.0.clone(), key.1, conn.id()));
        }
        match self.online.get_mut(&conn.id()) {
            Some(o) => {
                let old = std::mem::replace(&mut o.key, key);
                self.by_name.remove(&(old.0, old.1, conn.id()));
                o.who = who;
            }
            None => {
                let (sent, received, offered) = (Vec::new(), Vec::new(), Default::default());
                let entry = Online { conn, who, presence, key, sent, received, offered };
                self.online.insert(entry.conn.id(), entry);
            }
        }
    }

    /// A listed connection's player has a new rating in the pool of `rules`.
    pub fn rated(&mut self, conn: ConnId, rules: Rules, shown: i64) {
        if let Some(o) = self.online.get_mut(&conn) {
            o.who = Arc::new(o.who.rated(rules, shown));
        }
    }

    /// A connection closed: its challenges end.
    pub fn offline(&mut self, conn: ConnId) {
        self.end_all(conn, "disconnected");
        if let Some(o) = self.online.remove(&conn) {
            self.by_name.remove(&(o.key.0, o.key.1, conn));
        }
    }

    /// A connection left idle: the challenges it sent end, and with `all`
    /// (its game started) those it received too.
    pub fn engaged(&mut self, conn: ConnId, all: bool) {
        match all {
            true => self.end_all(conn, "started another game"),
            false => self.end_sent(conn, "is waiting for another game"),
        }
    }

    /// The `online` list: the house, then players by name, this instance's
    /// and (in a cluster) `elsewhere`, the other instances' (by name too).
    pub fn who(&self, elsewhere: &[OnlinePlayer], id: Option<RequestId>) -> ServerMessage {
        let house =
            OnlinePlayer { name: HOUSE_NAME.into(), account: false, bot: true, status: OnlineStatus::Idle };
        let here = self.here(MAX_ONLINE);
        let players = match elsewhere.is_empty() {
            true => std::iter::once(house).chain(here).take(MAX_ONLINE).collect(),
            false => {
                let mut all: Vec<OnlinePlayer> = here.into_iter().chain(elsewhere.iter().cloned()).collect();
                all.sort_by_cached_key(|p| name_key(&p.name));
                std::iter::once(house).chain(all).take(MAX_ONLINE).collect()
            }
        };
        ServerMessage::Online { players, id }
    }

    /// Up to `most` players online on this instance, by name.
    pub fn here(&self, most: usize) -> Vec<OnlinePlayer> {
        self.by_name
            .iter()
            .filter_map(|(_, _, c)| self.online.get(c))
            .map(|o| OnlinePlayer {
                name: o.who.name.clone(),
                account: o.who.account.is_some(),
                bot: o.who.bot,
                status: o.presence.status().shown(),
            })
            .take(most)
            .collect()
    }

    /// The online connection a name reaches: an account's if one is signed
    /// in under it (the most recent), else the guest who took it last.
    fn find(&self, name: &str) -> Option<ConnId> {
        let key = name_key(name.trim());
        let named: Vec<&Online<C>> = self
            .by_name
            .range((key.clone(), 0, ConnId::MIN)..=(key, u64::MAX, ConnId::MAX))
            .filter_map(|(_, _, c)| self.online.get(c))
            .collect();
        let account = named.iter().rev().find(|o| o.who.account.is_some());
        account.or(named.last()).map(|o| o.conn.id())
    }

    /// When the next challenge expires.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.expiry.front().map(|(at, _)| *at)
    }

    /// How many challenges are open.
    #[cfg(test)]
    pub fn open(&self) -> usize {
        self.challenges.len()
    }

    /// Whether every per-address and per-account count is back to none.
    #[cfg(test)]
    pub fn counts_empty(&self) -> bool {
        self.by_address.is_empty() && self.by_account.is_empty()
    }

    /// The messages for connections since the last call, in order.
    pub fn mail(&mut self) -> std::vec::Drain<'_, (C, ServerMessage)> {
        self.mail.drain(..)
    }
}
