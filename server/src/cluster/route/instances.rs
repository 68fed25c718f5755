//! What the router knows of the other instances: which are alive (listed
//! and heard of lately), which stopped or restarted, and what it lets go
//! of when one is gone.

use std::collections::HashSet;
use std::sync::Arc;

use super::away::{Away, UNSURE};
use super::{GONE_AFTER, Router};
use crate::cluster::relay::{GhostCmd, Outgoing, Wire};
use crate::cmd::Outbound;

impl Router {
    /// The instances alive as of the lists just read: one whose list is
    /// gone since the last read stopped or died (its list ran out).
    pub(super) fn listed(&mut self, mut alive: Vec<Arc<str>>) {
        let now = self.now;
        self.stopped.retain(|_, at| now.saturating_duration_since(*at) < GONE_AFTER);
        alive.retain(|name| !self.stopped.contains_key(name));
        for name in &alive {
            self.heard(name);
        }
        let listed: HashSet<Arc<str>> = alive.into_iter().collect();
        let gone: Vec<Arc<str>> = self.listed.difference(&listed).cloned().collect();
        // One listed again (after the bus came back, for it or for this
        // one) may have missed what was said meanwhile.
        let back: Vec<Arc<str>> = listed.difference(&self.listed).cloned().collect();
        for name in back {
            self.back(&name);
        }
        for name in gone {
            if *name != *self.me {
                tracing::info!(instance = %name, "an instance left the cluster; its relayed players resume");
                self.forget(&name);
            }
        }
        self.listed = listed;
    }

    /// Notes that `instance` is alive.
    pub(super) fn heard(&mut self, instance: &str) {
        match self.seen.get_mut(instance) {
            Some(at) => *at = self.now,
            None => {
                self.seen.insert(instance.into(), self.now);
            }
        }
    }

    /// Whether `instance` is alive: listed at the last read, and heard of lately.
    pub(super) fn alive(&self, instance: &str) -> bool {
        self.listed.contains(instance)
            && self.seen.get(instance).is_some_and(|at| self.now.saturating_duration_since(*at) < GONE_AFTER)
    }

    /// Instance `name` said it stopped.
    pub(super) fn stopped(&mut self, name: &str) {
        self.stopped.insert(name.into(), self.now);
        self.forget(name);
    }

    /// Lets go of whatever another instance that is gone (stopped, or not
    /// heard of for [`GONE_AFTER`]) had here, and tells this instance's
    /// connections in its rooms to resume where the game went on.
    fn forget(&mut self, gone: &str) {
        self.let_go(gone, false);
    }

    /// [`Router::forget`]; but on a `restarted` instance, asks still
    /// unanswered there wait a moment for its new run's answer (they may
    /// have reached it: it is answering one now).
    pub(super) fn let_go(&mut self, gone: &str, restarted: bool) {
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
        let (mut answers, now) = (Vec::new(), self.now);
        self.relayed.retain(|_, away| {
            let there = away.at.as_deref() == Some(gone);
            if restarted && there && away.asked.is_some() {
                away.unsure = Some(now);
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
    pub(super) fn sweep(&mut self) {
        let now = self.now;
        let gone: Vec<Arc<str>> = self
            .seen
            .iter()
            .filter(|(_, at)| now.saturating_duration_since(**at) >= GONE_AFTER)
            .map(|(n, _)| n.clone())
            .collect();
        for name in gone {
            tracing::warn!(instance = %name, "an instance stopped answering on the bus; its relayed players resume");
            self.forget(&name);
        }
        // Asks that went to a run since gone, answered here.
        let mut answers = Vec::new();
        for away in self.relayed.values_mut() {
            if away.unsure.is_some_and(|since| now.saturating_duration_since(since) >= UNSURE) {
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
        let (out, settled) = (&self.out, now.saturating_duration_since(self.up_since) >= GONE_AFTER);
        self.relayed.retain(|&conn, away: &mut Away| {
            let open = !away.conn.is_closed();
            if !open {
                for to in &away.ghosts {
                    let _ = out.try_send(Outgoing { to: to.clone(), msg: Wire::Gone { conn } });
                }
            }
            open || !settled
        });
    }

    /// Instance `name` said it is back on the bus (its bus was away, or it
    /// started again under its name): it is alive, whatever it said at its
    /// last stop.
    pub(super) fn returned(&mut self, name: &str) {
        self.stopped.remove(name);
        self.heard(name);
        self.back(name);
    }

    /// Instance `name` is back after its bus (or this one's) was away: what
    /// was lost meanwhile is healed by a fresh `state` of each room there
    /// of a player here.
    fn back(&mut self, name: &str) {
        for (conn, away) in self.relayed.iter().filter(|(_, a)| a.asked.is_none() && !a.over) {
            if let Some(at) = away.at.as_ref().filter(|at| ***at == *name) {
                let msg = Wire::Heal { conn: *conn };
                let _ = self.out.try_send(Outgoing { to: at.clone(), msg });
            }
        }
    }

    /// After the bus came back: the other instances get their time to come
    /// back too (nobody is forgotten for what the outage hid); each is
    /// listed anew once it is back, which heals what was lost meanwhile
    /// (see [`Router::listed`]).
    pub(super) fn resync(&mut self) {
        self.up = true;
        self.up_since = self.now;
        self.listed.clear();
        for at in self.seen.values_mut() {
            *at = self.now;
        }
    }
}
