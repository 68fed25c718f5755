//! Quick match across instances. Each instance pairs its own players at
//! once, so at most one player per rules waits on each; every instance
//! writes who waits on it to Redis (a key that lasts three seconds). One
//! instance at a time, the leader (a Redis key it renews, taken over by
//! another when it stops being renewed), reads them all every [`PASS`] and
//! pairs the longest-waiting players of different instances, first come
//! first served: the younger moves to the older's instance, where they meet
//! as any two players there. The bus makes the Redis calls
//! (`bus/calls.rs`); this is the leader's state and its pairing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::relay::{Outgoing, Wire};
use tictactoe_protocol::Rules;

/// A player waiting in this instance's queue, as the matchmaker of a
/// cluster sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub struct Waiting {
    pub rules: Rules,
    /// Its connection's number here.
    pub conn: u64,
    /// Since when (Unix ms).
    pub since: u64,
    /// Whether it may move to another instance (its socket is here).
    pub movable: bool,
}

/// The key that names the leader.
pub const LEADER: &str = "ttt:leader";

/// The prefix of each instance's key of who waits there.
pub const WAIT: &str = "ttt:wait";

/// How often the leader pairs.
pub const PASS: Duration = Duration::from_millis(200);

/// A player paired in a pass is not paired again for this long: its
/// instance's list may not say yet that it moved.
const PAIRED_FOR: Duration = Duration::from_secs(2);

/// The matchmaker's state in one instance's bus.
#[derive(Default)]
pub struct Matchmaker {
    /// Whether this instance leads.
    pub leading: bool,
    /// Players paired lately, by (instance, connection).
    paired: HashMap<(Arc<str>, u64), Instant>,
}

impl Matchmaker {
    /// Redis said whether this instance holds the lead now.
    pub fn led(&mut self, leading: bool) {
        if leading != self.leading {
            self.leading = leading;
            ::metrics::gauge!("ttt_matchmaker_leading").set(if leading { 1.0 } else { 0.0 });
            if leading {
                ::metrics::counter!("ttt_matchmaker_leader_changes_total").increment(1);
                tracing::info!("this instance pairs quick matches across the cluster now");
            }
        }
    }

    /// One pass of the leader at `now` over who waits on each instance
    /// (its list as Redis keeps it): the moves to make.
    pub fn pass(&mut self, lists: Vec<(Arc<str>, Option<String>)>, now: Instant) -> Vec<Outgoing> {
        self.paired.retain(|_, at| now.saturating_duration_since(*at) < PAIRED_FOR);
        let mut by_rules: HashMap<Rules, Vec<(Arc<str>, Waiting)>> = HashMap::new();
        for (instance, list) in lists {
            let waiting: Vec<Waiting> = list.and_then(|l| serde_json::from_str(&l).ok()).unwrap_or_default();
            for w in waiting {
                if !self.paired.contains_key(&(instance.clone(), w.conn)) {
                    by_rules.entry(w.rules).or_default().push((instance.clone(), w));
                }
            }
        }
        let mut moves = Vec::new();
        for (rules, mut line) in by_rules {
            line.sort_by_key(|(i, w)| (w.since, i.clone(), w.conn));
            let mut taken = vec![false; line.len()];
            for a in 0..line.len() {
                if taken[a] {
                    continue;
                }
                let partner = (a + 1..line.len()).find(|&b| {
                    !taken[b] && line[b].0 != line[a].0 && (line[a].1.movable || line[b].1.movable)
                });
                let Some(b) = partner else { continue };
                taken[a] = true;
                taken[b] = true;
                // The younger moves to the older's instance, if it can.
                let (stays, goes) = if line[b].1.movable { (a, b) } else { (b, a) };
                let (host, (to, waiting)) = (line[stays].0.clone(), &line[goes]);
                moves.push(Outgoing { to: to.clone(), msg: Wire::Pair { conn: waiting.conn, rules, host } });
                for i in [a, b] {
                    self.paired.insert((line[i].0.clone(), line[i].1.conn), now);
                }
            }
        }
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(waiting: &[(u64, u64, bool)]) -> Option<String> {
        let rules = Rules::classic(3);
        let all: Vec<Waiting> =
            waiting.iter().map(|&(conn, since, movable)| Waiting { rules, conn, since, movable }).collect();
        serde_json::to_string(&all).ok()
    }

    #[test]
    fn players_on_two_instances_asking_different_clocks_are_not_paired() {
        let (mut mm, now) = (Matchmaker::default(), Instant::now());
        let on = |clock| {
            let rules = Rules::classic(3).with_clock(clock);
            serde_json::to_string(&[Waiting { rules, conn: 1, since: 10, movable: true }]).ok()
        };
        let three_two = Some(tictactoe_protocol::Fischer { initial_ms: 180_000, increment_ms: 2_000 });
        let one_zero = Some(tictactoe_protocol::Fischer { initial_ms: 60_000, increment_ms: 0 });
        for (a, b) in [(three_two, one_zero), (three_two, None), (None, one_zero)] {
            assert!(mm.pass(vec![("a".into(), on(a)), ("b".into(), on(b))], now).is_empty(), "{a:?} {b:?}");
        }
        let moves = mm.pass(vec![("a".into(), on(three_two)), ("b".into(), on(three_two))], now);
        let [Outgoing { msg: Wire::Pair { rules, .. }, .. }] = &moves[..] else { panic!("{moves:?}") };
        assert_eq!(rules.clock, three_two, "the pairing keeps the clock");
    }

    #[test]
    fn the_younger_moves_to_the_olders_instance_and_is_not_paired_again_at_once() {
        let (mut mm, now) = (Matchmaker::default(), Instant::now());
        let lists = || vec![("a".into(), list(&[(1, 100, true)])), ("b".into(), list(&[(7, 50, true)]))];
        let moves = mm.pass(lists(), now);
        let [Outgoing { to, msg: Wire::Pair { conn: 1, host, .. } }] = &moves[..] else {
            panic!("not one move of a's player: {moves:?}");
        };
        assert_eq!((&**to, &**host), ("a", "b"));
        // Its instance's list may still show it: not paired twice.
        assert!(mm.pass(lists(), now + Duration::from_millis(200)).is_empty());
        assert_eq!(mm.pass(lists(), now + PAIRED_FOR).len(), 1);
    }

    #[test]
    fn the_older_moves_when_the_younger_cannot_and_one_instance_alone_pairs_nobody() {
        let (mut mm, now) = (Matchmaker::default(), Instant::now());
        let alone = vec![("a".into(), list(&[(1, 10, true), (2, 20, true)])), ("b".into(), None)];
        assert!(mm.pass(alone, now).is_empty());
        let lists = vec![("a".into(), list(&[(1, 10, true)])), ("b".into(), list(&[(7, 50, false)]))];
        let moves = mm.pass(lists, now);
        let [Outgoing { to, msg: Wire::Pair { conn: 1, host, .. } }] = &moves[..] else {
            panic!("not one move of a's player: {moves:?}");
        };
        assert_eq!((&**to, &**host), ("a", "b"));
    }
}
