//! Who is online and the challenges between them: the directory of named
//! connections (`who`, and finding a player by name) and every open
//! challenge with its expiry. Part of the lobby's state machine: no tasks,
//! and connections are reached only through their queues.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{
    ChallengeEndReason, ErrorCode, MAX_ONLINE, OnlinePlayer, OnlineStatus, PlayerInfo, RequestId,
    ServerMessage,
};

use crate::cmd::Peer;
use crate::core::account::{AccountId, Identity, name_key};
use crate::core::ids::ConnId;
use crate::core::presence::{Status, Whereabouts};
use crate::room::{HOUSE_NAME, Rules};
use rand::rngs::StdRng;

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
                let entry = Online { conn, who, presence, key, sent: Vec::new(), received: Vec::new() };
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

    /// `challenge` from `conn` (which is online), whose peer is at
    /// `address`: sent, or refused.
    pub fn challenge(
        &mut self,
        (conn, address): (ConnId, IpAddr),
        name: &str,
        rules: Rules,
        id: Option<RequestId>,
        now: Instant,
    ) -> Result<(), Refusal> {
        let Some(from) = self.online.get(&conn) else {
            return Err((ErrorCode::InvalidName, "say hello with your name first".into()));
        };
        let not_found = || {
            let shown: String = name.chars().take(40).collect();
            (
                ErrorCode::PlayerNotFound,
                format!("nobody called {shown:?} is online right now; a `who` request lists who is"),
            )
        };
        let to = self.find(name).ok_or_else(not_found)?;
        let target = &self.online[&to];
        if to == conn || (from.who.account.is_some() && from.who.account == target.who.account) {
            return Err((ErrorCode::PlayerNotFound, "that is you; challenge someone else".into()));
        }
        self.within_limits(from, target, address)?;
        // Counted before the statuses are read, as connections write their
        // status before they read the count (see `presence`): a connection
        // that leaves idle meanwhile either is refused here or reports it.
        from.presence.add_challenge();
        target.presence.add_challenge();
        // The challenger must be free to be drafted; the challenged may be
        // waiting for a game (accepting ends the wait), not playing one.
        let from_busy = (from.presence.status() != Status::Idle).then_some(
            "you are in a game or waiting for one; challenge when you are free (leave first)".to_owned(),
        );
        let target_busy = (target.presence.status().shown() == OnlineStatus::Playing)
            .then(|| format!("{} is playing; try again after their game (who shows it)", target.who.name));
        if let Some(text) = from_busy.or(target_busy) {
            from.presence.end_challenge();
            target.presence.end_challenge();
            return Err((ErrorCode::Busy, text));
        }
        self.made += 1;
        let random = crate::core::codes::room_code(&mut self.rng);
        let challenge: Arc<str> =
            format!("{}c{}-{}", self.prefix, self.made, random.get(..6).unwrap_or("")).into();
        let expires_ms = u64::try_from(self.lifetime.as_millis()).unwrap_or(u64::MAX);
        let (from_who, to_name) = (from.who.clone(), target.who.name.clone());
        let info = PlayerInfo {
            name: from_who.name.clone(),
            account: from_who.account.is_some(),
            bot: from_who.bot,
            rating: from_who.rating(rules),
        };
        let (size, win) = (rules.size, rules.win);
        let sent =
            ServerMessage::ChallengeSent { challenge: challenge.clone(), name: to_name, size, win, id };
        let offer =
            ServerMessage::Challenged { challenge: challenge.clone(), from: info, size, win, expires_ms };
        self.mail.push((self.online[&conn].conn.clone(), sent));
        self.mail.push((self.online[&to].conn.clone(), offer));
        if let Some(o) = self.online.get_mut(&conn) {
            o.sent.push(challenge.clone());
        }
        if let Some(o) = self.online.get_mut(&to) {
            o.received.push(challenge.clone());
        }
        self.expiry.push_back((now + self.lifetime, challenge.clone()));
        *self.by_address.entry(address).or_default() += 1;
        if let Some(account) = from_who.account {
            *self.by_account.entry(account).or_default() += 1;
        }
        let open = Challenge { from: conn, to, rules, address, account: from_who.account };
        self.challenges.insert(challenge, open);
        Ok(())
    }

    /// The limits on open challenges: per challenger (its connection, or its
    /// account on every connection), per address, per challenged player,
    /// and per address for one challenged player.
    fn within_limits(&self, from: &Online<C>, target: &Online<C>, address: IpAddr) -> Result<(), Refusal> {
        let wait = "wait for an answer, withdraw one (decline its id) or let one expire";
        let by_account = from.who.account.and_then(|a| self.by_account.get(&a)).copied().unwrap_or(0);
        if from.sent.len() >= MAX_SENT || by_account >= MAX_SENT {
            let text = format!("you have {MAX_SENT} open challenges (on all your connections); {wait}");
            return Err((ErrorCode::Busy, text));
        }
        if self.by_address.get(&address).copied().unwrap_or(0) >= MAX_SENT_PER_ADDRESS {
            let text = format!("{MAX_SENT_PER_ADDRESS} challenges from your address are open; {wait}");
            return Err((ErrorCode::Busy, text));
        }
        let name = &target.who.name;
        if target.received.len() >= MAX_RECEIVED {
            let text = format!("{name} has {MAX_RECEIVED} open challenges; try again later");
            return Err((ErrorCode::Busy, text));
        }
        let from_here = target
            .received
            .iter()
            .filter(|id| self.challenges.get(*id).is_some_and(|c| c.address == address))
            .count();
        if from_here >= MAX_RECEIVED_PER_ADDRESS {
            let text =
                format!("{name} has {MAX_RECEIVED_PER_ADDRESS} open challenges from your address; {wait}");
            return Err((ErrorCode::Busy, text));
        }
        Ok(())
    }

    /// `accept` from `conn`: the challenger claimed for the game, and every
    /// other challenge of either side ended; or refused.
    pub fn accept(&mut self, conn: ConnId, challenge: &str) -> Result<Accepted<C>, Refusal> {
        let c =
            self.challenges.get(challenge).filter(|c| c.to == conn).ok_or_else(|| not_found(challenge))?;
        let (from, rules) = (c.from, c.rules);
        let Some(challenger) = self.online.get(&from) else {
            return Err(not_found(challenge));
        };
        if challenger.presence.draft().is_err() {
            let name = challenger.who.name.clone();
            self.end(challenge, ChallengeEndReason::Canceled, &format!("{name} started another game"), None);
            return Err((ErrorCode::ChallengeNotFound, format!("{name} has just started another game")));
        }
        let accepted = Accepted { from: challenger.conn.clone(), from_who: challenger.who.clone(), rules };
        self.remove(challenge);
        self.end_all(from, "started another game");
        self.end_all(conn, "started another game");
        Ok(accepted)
    }

    /// `decline` from `conn`: the challenger is told, with the reason; a
    /// challenger may also withdraw its own challenge this way.
    pub fn decline(&mut self, conn: ConnId, challenge: &str, reason: Option<&str>) -> Result<(), Refusal> {
        let c = self.challenges.get(challenge).ok_or_else(|| not_found(challenge))?;
        let name = |c: ConnId| self.online.get(&c).map_or_else(|| "?".into(), |o| o.who.name.clone());
        if c.to == conn {
            // Passed on to another client: no controls, no reordering.
            let because = reason.and_then(crate::core::text::clean);
            let text = match because {
                Some(r) => format!("{} declined: {r}", name(conn)),
                None => format!("{} declined", name(conn)),
            };
            self.end(challenge, ChallengeEndReason::Declined, &text, Some(conn));
            Ok(())
        } else if c.from == conn {
            let text = format!("{} withdrew the challenge", name(conn));
            self.end(challenge, ChallengeEndReason::Canceled, &text, None);
            Ok(())
        } else {
            Err(not_found(challenge))
        }
    }

    /// Ends the challenges that were left unanswered too long.
    pub fn tick(&mut self, now: Instant) {
        while let Some((at, _)) = self.expiry.front() {
            if *at > now {
                break;
            }
            if let Some((_, id)) = self.expiry.pop_front() {
                if self.challenges.contains_key(&id) {
                    self.end(&id, ChallengeEndReason::Expired, "nobody answered the challenge in time", None);
                }
            }
        }
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

    /// Ends every challenge `conn` sent: `because` says what it did.
    fn end_sent(&mut self, conn: ConnId, because: &str) {
        let Some(o) = self.online.get(&conn) else { return };
        let text = format!("{} {because}", o.who.name);
        for id in o.sent.clone() {
            self.end(&id, ChallengeEndReason::Canceled, &text, None);
        }
    }

    /// Ends every challenge `conn` sent or received: `because` says what it did.
    fn end_all(&mut self, conn: ConnId, because: &str) {
        let Some(o) = self.online.get(&conn) else { return };
        let text = format!("{} {because}", o.who.name);
        let ids: Vec<Arc<str>> = o.sent.iter().chain(&o.received).cloned().collect();
        for id in ids {
            self.end(&id, ChallengeEndReason::Canceled, &text, None);
        }
    }

    /// The messages for connections since the last call, in order.
    pub fn mail(&mut self) -> std::vec::Drain<'_, (C, ServerMessage)> {
        self.mail.drain(..)
    }

    /// Ends a challenge, telling both sides but `quiet`.
    fn end(&mut self, id: &str, reason: ChallengeEndReason, message: &str, quiet: Option<ConnId>) {
        let Some(c) = self.remove(id) else { return };
        let msg = ServerMessage::ChallengeEnded { challenge: id.into(), reason, message: message.into() };
        for side in [c.from, c.to].into_iter().filter(|&s| Some(s) != quiet) {
            if let Some(o) = self.online.get(&side) {
                self.mail.push((o.conn.clone(), msg.clone()));
            }
        }
    }

    /// Forgets a challenge and its counts.
    fn remove(&mut self, id: &str) -> Option<Challenge> {
        let c = self.challenges.remove(id)?;
        release(&mut self.by_address, c.address);
        if let Some(account) = c.account {
            release(&mut self.by_account, account);
        }
        for side in [c.from, c.to] {
            if let Some(o) = self.online.get_mut(&side) {
                o.sent.retain(|s| **s != *id);
                o.received.retain(|s| **s != *id);
                o.presence.end_challenge();
            }
        }
        Some(c)
    }
}

/// One open challenge fewer for `key`; a key with none is forgotten.
fn release<K: Eq + Hash>(counts: &mut HashMap<K, usize>, key: K) {
    if let Some(n) = counts.get_mut(&key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            counts.remove(&key);
        }
    }
}

fn not_found(challenge: &str) -> Refusal {
    let shown: String = challenge.chars().take(40).collect();
    (
        ErrorCode::ChallengeNotFound,
        format!("no open challenge to you has the id {shown:?} (it may have expired or been withdrawn)"),
    )
}
