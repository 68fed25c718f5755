//! Tournaments across instances: every instance writes its tournament
//! players free now (a Redis key per instance that lasts three seconds),
//! and the matchmaker's leader pairs them all each [`TOURNAMENT_PASS`], by
//! the tournament's own rule, sending each pairing to the first player's
//! instance. The leader dies, another leads: what a tournament is stays in
//! the store, so pairing goes on wherever the lead goes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::Rules;
use tictactoe_protocol::tournament::{self, Free};

use super::relay::{Outgoing, Wire};
use crate::cmd::TournamentPairing;

/// The prefix of each instance's key of its free tournament players.
pub const FREE: &str = "ttt:tfree";

/// How often the leader pairs tournament players (the contract's "at least every 2 s").
pub const TOURNAMENT_PASS: Duration = Duration::from_secs(1);

/// A player paired in a pass is not paired again for this long: its
/// instance's list (rewritten each second) may still show it free. A
/// pairing of a player no longer free is refused where it lands.
const PAIRED_FOR: Duration = Duration::from_millis(1500);

/// A tournament player free on an instance, as that instance writes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FreePlayer {
    /// The tournament's id.
    pub tournament: Arc<str>,
    /// Its games' terms.
    pub rules: Rules,
    /// The connection's number on its instance.
    pub conn: u64,
    /// The account's name.
    pub name: String,
    /// Its rank in the standings as its instance read them.
    pub rank: usize,
    /// Its last opponent's name.
    pub last: Option<String>,
    /// When the tournament's time is up (Unix ms).
    pub ends_at: i64,
    /// How long it has been free, as its instance wrote it.
    pub waited_ms: u64,
}

/// A player as the leader names it: its instance and connection number.
type Seat = (Arc<str>, u64);

/// What a tournament's games are played on, and until when (Unix ms).
type Terms = (Rules, i64);

/// The leader's memory of whom it paired lately.
#[derive(Debug, Default)]
pub struct Pairing {
    paired: HashMap<Seat, Instant>,
}

impl Pairing {
    /// One pass over every instance's list (as Redis keeps it): the
    /// pairings to send, each to its first player's instance.
    pub fn pass(&mut self, lists: Vec<(Arc<str>, Option<String>)>, now: Instant) -> Vec<Outgoing> {
        self.paired.retain(|_, at| now.saturating_duration_since(*at) < PAIRED_FOR);
        let mut by_tournament: HashMap<Arc<str>, (Terms, Vec<Free<Seat>>)> = HashMap::new();
        let mut waits: HashMap<Seat, u64> = HashMap::new();
        for (instance, list) in lists {
            let free: Vec<FreePlayer> = list.and_then(|l| serde_json::from_str(&l).ok()).unwrap_or_default();
            for p in free {
                let key = (instance.clone(), p.conn);
                if self.paired.contains_key(&key) {
                    continue;
                }
                let terms = (p.rules, p.ends_at);
                let entry = by_tournament.entry(p.tournament.clone()).or_insert_with(|| (terms, Vec::new()));
                waits.insert(key.clone(), p.waited_ms);
                entry.1.push(Free { key, name: p.name, rank: p.rank, last: p.last });
            }
        }
        let mut out = Vec::new();
        for (tid, ((rules, ends_at), free)) in by_tournament {
            // One account on two connections (or instances) counts once.
            let mut names = std::collections::HashSet::new();
            let free: Vec<_> = free.into_iter().filter(|f| names.insert(f.name.clone())).collect();
            for ((a_at, a), (b_at, b)) in tournament::pair(free) {
                for seat in [(a_at.clone(), a), (b_at.clone(), b)] {
                    let waited = waits.get(&seat).map(|&ms| Duration::from_millis(ms));
                    if let Some(w) = waited {
                        ::metrics::histogram!("ttt_tournament_pairing_wait_seconds").record(w.as_secs_f64());
                    }
                }
                self.paired.insert((a_at.clone(), a), now);
                self.paired.insert((b_at.clone(), b), now);
                let at = (a_at != b_at).then_some(b_at);
                let pairing =
                    TournamentPairing { tournament: tid.clone(), rules, conn: a, opponent: b, at, ends_at };
                let msg = Wire::TournamentPair(pairing);
                out.push(Outgoing { to: a_at, msg });
            }
        }
        ::metrics::counter!("ttt_tournament_pairings_total").increment(out.len() as u64);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(players: &[(u64, &str, usize, Option<&str>)]) -> Option<String> {
        let rules = Rules::classic(3);
        let all: Vec<FreePlayer> = players
            .iter()
            .map(|&(conn, name, rank, last)| FreePlayer {
                tournament: "T".into(),
                rules,
                conn,
                name: name.into(),
                rank,
                last: last.map(Into::into),
                ends_at: i64::MAX,
                waited_ms: 0,
            })
            .collect();
        serde_json::to_string(&all).ok()
    }

    #[test]
    fn players_on_any_instances_are_paired_once_and_not_again_at_once() {
        let (mut p, now) = (Pairing::default(), Instant::now());
        let lists = || {
            vec![
                ("a".into(), list(&[(1, "ann", 1, Some("bob")), (2, "cid", 3, None)])),
                ("b".into(), list(&[(7, "bob", 2, Some("ann"))])),
                ("c".into(), list(&[(9, "dan", 4, None)])),
            ]
        };
        let out = p.pass(lists(), now);
        let pairs: Vec<String> = out
            .iter()
            .map(|o| match &o.msg {
                Wire::TournamentPair(p) => format!("{}:{}-{:?}:{}", o.to, p.conn, p.at, p.opponent),
                other => format!("{other:?}"),
            })
            .collect();
        // ann (1) does not meet bob, her last opponent, while cid is free.
        assert_eq!(pairs, ["a:1-None:2", "b:7-Some(\"c\"):9"], "{pairs:?}");
        assert!(p.pass(lists(), now + Duration::from_secs(1)).is_empty(), "not paired twice");
        assert_eq!(p.pass(lists(), now + PAIRED_FOR).len(), 2);
    }

    #[test]
    fn an_account_free_on_two_instances_is_not_paired_with_itself() {
        let (mut p, now) = (Pairing::default(), Instant::now());
        let lists =
            vec![("a".into(), list(&[(1, "ann", 1, None)])), ("b".into(), list(&[(2, "ann", 1, None)]))];
        assert!(p.pass(lists, now).is_empty());
    }
}
