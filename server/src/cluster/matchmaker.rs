//! Quick match across instances. Each instance pairs its own players at
//! once, so at most one player per rules waits on each; every instance
//! writes who waits on it to Redis (a key that lasts [`WAIT_LASTS`]). One
//! instance at a time, the leader (a Redis key it renews, taken over by
//! another when it stops being renewed), reads them all every [`PASS`] and
//! pairs the longest-waiting players of different instances, first come
//! first served: the younger moves to the older's instance, where they meet
//! as any two players there.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;

use super::relay::{Outgoing, Wire};
use tictactoe_protocol::Rules;

/// A player waiting in this instance's queue, as the matchmaker of a
/// cluster sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Waiting {
    /// The rules it waits for.
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

/// How long an instance's list of who waits lasts unless rewritten.
const WAIT_LASTS: Duration = Duration::from_secs(3);

/// How long the lead lasts unless renewed (renewed every second).
const LEAD_LASTS: Duration = Duration::from_secs(3);

/// A player paired in a pass is not paired again for this long: its
/// instance's list may not say yet that it moved.
const PAIRED_FOR: Duration = Duration::from_secs(2);

/// Takes the lead if nobody holds it, keeps it if this instance does.
const LEAD: &str = "local v = redis.call('get', KEYS[1]) \
    if v == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 \
    elseif not v then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0";

/// The matchmaker's state in one instance's bus.
#[derive(Default)]
pub struct Matchmaker {
    /// Whether this instance leads.
    pub leading: bool,
    /// Players paired lately, by (instance, connection).
    paired: HashMap<(Arc<str>, u64), Instant>,
}

impl Matchmaker {
    /// Takes or keeps the lead for `me`; says whether it leads.
    pub async fn lead(&mut self, me: &str, conn: &mut MultiplexedConnection) -> redis::RedisResult<bool> {
        let ms = LEAD_LASTS.as_millis() as u64;
        let held: i64 =
            redis::cmd("EVAL").arg(LEAD).arg(1).arg(LEADER).arg(me).arg(ms).query_async(conn).await?;
        let leading = held == 1;
        if leading != self.leading {
            self.leading = leading;
            ::metrics::gauge!("ttt_matchmaker_leading").set(if leading { 1.0 } else { 0.0 });
            if leading {
                ::metrics::counter!("ttt_matchmaker_leader_changes_total").increment(1);
                tracing::info!("this instance pairs quick matches across the cluster now");
            }
        }
        Ok(leading)
    }

    /// Lets the lead go (at a stop, so that another takes it at once).
    pub async fn resign(&mut self, me: &str, conn: &mut MultiplexedConnection) {
        if self.leading {
            let drop_own = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
            let _: redis::RedisResult<i64> =
                redis::cmd("EVAL").arg(drop_own).arg(1).arg(LEADER).arg(me).query_async(conn).await;
            self.leading = false;
        }
    }

    /// One pass of the leader over who waits on `instances`: the moves to make.
    pub async fn pass(
        &mut self,
        instances: &[Arc<str>],
        conn: &mut MultiplexedConnection,
    ) -> redis::RedisResult<Vec<Outgoing>> {
        self.paired.retain(|_, at| at.elapsed() < PAIRED_FOR);
        if instances.len() < 2 {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = instances.iter().map(|i| format!("{WAIT}:{i}")).collect();
        let lists: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query_async(conn).await?;
        let mut by_rules: HashMap<Rules, Vec<(Arc<str>, Waiting)>> = HashMap::new();
        for (instance, list) in instances.iter().zip(lists) {
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
                    self.paired.insert((line[i].0.clone(), line[i].1.conn), Instant::now());
                }
            }
        }
        Ok(moves)
    }
}

/// Writes who waits on `me` (nothing: the key goes).
pub async fn tell_waiting(
    me: &str,
    waiting: &[Waiting],
    conn: &mut MultiplexedConnection,
) -> redis::RedisResult<()> {
    let key = format!("{WAIT}:{me}");
    if waiting.is_empty() {
        return redis::cmd("DEL").arg(key).query_async(conn).await;
    }
    let list = serde_json::to_string(waiting).unwrap_or_else(|_| "[]".into());
    redis::cmd("SET").arg(key).arg(list).arg("PX").arg(WAIT_LASTS.as_millis() as u64).query_async(conn).await
}
