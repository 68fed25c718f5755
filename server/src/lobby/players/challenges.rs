//! The challenges between players online: made within their limits,
//! accepted, declined, expired or ended by what their players did.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use tictactoe_protocol::{ChallengeEndReason, ErrorCode, OnlineStatus, PlayerInfo, RequestId, ServerMessage};

use super::*;

impl<C: Peer> Players<C> {
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
        let to = self.find(name).ok_or_else(|| player_not_found(name))?;
        let target = &self.online[&to];
        if to == conn || (from.who.account.is_some() && from.who.account == target.who.account) {
            return Err((ErrorCode::PlayerNotFound, "that is you; challenge someone else".into()));
        }
        self.within_limits(from, target, address)?;
        if let Some(t) = self.online.get_mut(&to) {
            while t.offered.front().is_some_and(|&at| now.saturating_duration_since(at) >= OFFERS_WINDOW) {
                t.offered.pop_front();
            }
            if t.offered.len() >= MAX_OFFERS {
                let text = format!(
                    "{} was offered {MAX_OFFERS} challenges in the last {} s; try again in a few seconds",
                    t.who.name,
                    OFFERS_WINDOW.as_secs()
                );
                return Err((ErrorCode::Busy, text));
            }
            t.offered.push_back(now);
        }
        let (from, target) = (&self.online[&conn], &self.online[&to]);
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
        let sent = ServerMessage::ChallengeSent {
            clock: rules.clock,
            challenge: challenge.clone(),
            name: to_name,
            size,
            win,
            id,
        };
        let offer = ServerMessage::Challenged {
            clock: rules.clock,
            challenge: challenge.clone(),
            from: info,
            size,
            win,
            expires_ms,
        };
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

    /// Ends every challenge `conn` sent: `because` says what it did.
    pub(super) fn end_sent(&mut self, conn: ConnId, because: &str) {
        let Some(o) = self.online.get(&conn) else { return };
        let text = format!("{} {because}", o.who.name);
        for id in o.sent.clone() {
            self.end(&id, ChallengeEndReason::Canceled, &text, None);
        }
    }

    /// Ends every challenge `conn` sent or received: `because` says what it did.
    pub(super) fn end_all(&mut self, conn: ConnId, because: &str) {
        let Some(o) = self.online.get(&conn) else { return };
        let text = format!("{} {because}", o.who.name);
        let ids: Vec<Arc<str>> = o.sent.iter().chain(&o.received).cloned().collect();
        for id in ids {
            self.end(&id, ChallengeEndReason::Canceled, &text, None);
        }
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
