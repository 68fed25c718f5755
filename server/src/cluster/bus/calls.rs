//! The Redis calls of the bus's worker (and of its task at a reconnect):
//! what the router asks (the rooms' directory, lookups), the lists of who
//! is online on each instance, and the matchmaker's lead and lists of who
//! waits. Publishing to other instances is the publisher's (`publish.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use tictactoe_protocol::OnlinePlayer;
use tokio::sync::mpsc;

use super::WHO_LASTS;
use crate::cluster::matchmaker::{LEADER, Matchmaker, WAIT, Waiting};
use crate::cluster::relay::Outgoing;
use crate::cluster::route::{Input, Output, ROOMS, Router, WHO};
use crate::cmd::LobbyCmd;

/// Writes a room's entry unless another instance holds it (after a
/// cut-off, this one's stale copy must not take an adopted game back).
const CLAIM_FREE: &str = "local v = redis.call('hget', KEYS[1], ARGV[1]) \
    if not v or v == ARGV[2] then return redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end return 0";

/// Deletes a room's entry only if it is still this instance's (another may
/// have adopted the game since).
const DELETE_OWN: &str = "if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('hdel', KEYS[1], ARGV[1]) end return 0";

/// A room's instance, and whether that instance's list of who is online is
/// there (`ARGV[2]` is its prefix), in one round trip. With a burst
/// (`ARGV[3]`, 0 for none) the lookup is first charged to the asking
/// address's bucket (`KEYS[2]`, refilled at `ARGV[4]` a second), shared by
/// every instance; an empty bucket answers `{'', ms to wait}` instead. The
/// bucket's calls are protected: a key of another type is no bucket, and
/// the lookup is made (one failing script would fail the whole pipeline).
const OWNER: &str = "local burst, rate = tonumber(ARGV[3]), tonumber(ARGV[4]) \
    if burst > 0 and rate > 0 then \
        local t = redis.call('time') \
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) \
        local b = redis.pcall('hmget', KEYS[2], 'tokens', 'at') \
        if type(b) == 'table' and not b.err then \
            local tokens = tonumber(b[1]) or burst \
            local at = tonumber(b[2]) or now \
            tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000) \
            if tokens < 1 then return {'', math.max(1, math.ceil((1 - tokens) * 1000 / rate))} end \
            redis.pcall('hset', KEYS[2], 'tokens', tostring(tokens - 1), 'at', tostring(now)) \
            redis.pcall('pexpire', KEYS[2], math.ceil(burst * 1000 / rate) + 1000) \
        end \
    end \
    local o = redis.call('hget', KEYS[1], ARGV[1]) \
    if not o then return false end return {o, redis.call('exists', ARGV[2] .. o)}";

/// Redis's answer to one lookup: the room's instance and whether its list
/// of who is online is there (1 or 0), or `""` and the ms to wait when the
/// address's lookups are spent; nothing when no instance runs the room.
type Answer = Option<(String, i64)>;

/// Carries out what the router asks of Redis (on `conn`; without it, a
/// lookup finds nothing and a write waits for the bus to come back, when
/// every room is written again) and hands `lobby` what it says; Redis's
/// answers go back to the router until it asks nothing more.
pub(super) async fn carry(
    router: &mut Router,
    lobby: &mpsc::Sender<LobbyCmd>,
    mut outputs: Vec<Output>,
    mut conn: Option<&mut MultiplexedConnection>,
) -> redis::RedisResult<()> {
    let me = router.me.clone();
    let mut failed = Ok(());
    while !outputs.is_empty() {
        let mut asks = Vec::new();
        for output in std::mem::take(&mut outputs) {
            match output {
                Output::Lobby(cmd) => {
                    let _ = lobby.send(cmd).await;
                }
                output => asks.push(output),
            }
        }
        let owners = match conn.as_deref_mut() {
            Some(c) => {
                let (owners, done) = query(&me, &asks, c).await;
                if done.is_err() {
                    // Answered as if the bus were down; the bus then
                    // reconnects.
                    failed = done;
                    conn = None;
                }
                owners
            }
            None => Vec::new(),
        };
        for input in found(asks, owners) {
            outputs.extend(router.handle(input, Instant::now()));
        }
    }
    failed
}

/// Carries out the writes and lookups among `asks` (for instance `me`) on
/// `conn`: the owners found, in the order of the lookups, and whether Redis
/// failed (it is then asked nothing more, and the lookups not yet answered
/// find nothing). `asks` is only read: what waits for Redis stays where it
/// is if the caller is dropped meanwhile (see `Kept::pending`).
pub(super) async fn query(
    me: &str,
    asks: &[Output],
    conn: &mut MultiplexedConnection,
) -> (Vec<Answer>, redis::RedisResult<()>) {
    let (mut rooms, mut lookups) = (redis::pipe(), redis::pipe());
    let mut claims = Vec::new();
    for ask in asks {
        match ask {
            Output::Room { code, open: true } => {
                rooms.cmd("HSET").arg(ROOMS).arg(&**code).arg(me).ignore();
            }
            Output::Room { code, open: false } => {
                rooms.cmd("EVAL").arg(DELETE_OWN).arg(1).arg(ROOMS).arg(&**code).arg(me).ignore();
            }
            Output::Claim(own) => claims.extend(own.iter().cloned()),
            Output::Lookup(lookup) => {
                let (key, burst, per_second) =
                    lookup.charge.map_or((String::new(), 0, 0), |c| (c.key(), c.burst, c.per_second));
                lookups
                    .cmd("EVAL")
                    .arg(OWNER)
                    .arg(2)
                    .arg(ROOMS)
                    .arg(if key.is_empty() { ROOMS } else { &key })
                    .arg(&lookup.code)
                    .arg(format!("{WHO}:"))
                    .arg(burst)
                    .arg(per_second);
            }
            // The caller's to hand on.
            Output::Lobby(_) => {}
        }
    }
    // All of these lookups in one round trip: a flood of them costs one
    // wait, not one per lookup.
    let mut owners = Vec::new();
    if !lookups.is_empty() {
        match lookups.query_async(conn).await {
            Ok(found) => owners = found,
            Err(e) => return (owners, Err(e)),
        }
    }
    for chunk in claims.chunks(1000) {
        let mut pipe = redis::pipe();
        for code in chunk {
            pipe.cmd("EVAL").arg(CLAIM_FREE).arg(1).arg(ROOMS).arg(&**code).arg(me).ignore();
        }
        if let Err(e) = pipe.query_async::<()>(conn).await {
            return (owners, Err(e));
        }
    }
    if !rooms.is_empty() {
        if let Err(e) = rooms.query_async::<()>(conn).await {
            return (owners, Err(e));
        }
    }
    (owners, Ok(()))
}

/// The router's inputs for the lookups among `asks`: each with its owner
/// from `owners`, in order (nothing past their end: not found), or refused
/// for its address's budget.
pub(super) fn found(asks: Vec<Output>, owners: Vec<Answer>) -> Vec<Input> {
    let mut owners = owners.into_iter();
    asks.into_iter()
        .filter_map(|ask| match ask {
            Output::Lookup(lookup) => Some(match owners.next().flatten() {
                Some((owner, wait_ms)) if owner.is_empty() => {
                    let wait = Duration::from_millis(u64::try_from(wait_ms).unwrap_or(1));
                    Input::Limited { lookup, wait }
                }
                owner => Input::Found { lookup, owner: owner.map(|(o, listed)| (o, listed != 0)) },
            }),
            _ => None,
        })
        .collect()
}

/// Most messages drained for one round trip.
pub(super) const BATCH: usize = 512;

/// Says who is online on `instance` (`here`), and reads who is on the
/// others: their lists, in one, and the names of the instances alive.
pub(super) async fn tell_who(
    conn: &mut MultiplexedConnection,
    instance: &str,
    here: &[OnlinePlayer],
) -> redis::RedisResult<(Vec<(Arc<str>, OnlinePlayer)>, Vec<Arc<str>>)> {
    let list = serde_json::to_string(here).unwrap_or_else(|_| "[]".into());
    let lasts = WHO_LASTS.as_millis() as u64;
    let (_, _, names): ((), (), Vec<String>) = redis::pipe()
        .cmd("SET")
        .arg(format!("{WHO}:{instance}"))
        .arg(list)
        .arg("PX")
        .arg(lasts)
        .cmd("SADD")
        .arg(WHO)
        .arg(instance)
        .cmd("SMEMBERS")
        .arg(WHO)
        .query_async(conn)
        .await?;
    let others: Vec<&String> = names.iter().filter(|n| n.as_str() != instance).collect();
    let mut alive: Vec<Arc<str>> = vec![instance.into()];
    if others.is_empty() {
        return Ok((Vec::new(), alive));
    }
    let keys: Vec<String> = others.iter().map(|n| format!("{WHO}:{n}")).collect();
    let lists: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query_async(conn).await?;
    let mut elsewhere = Vec::new();
    for (name, list) in others.iter().zip(lists) {
        match list {
            Some(list) => {
                let at: Arc<str> = name.as_str().into();
                alive.push(at.clone());
                let players = serde_json::from_str::<Vec<OnlinePlayer>>(&list).unwrap_or_default();
                elsewhere.extend(players.into_iter().map(|p| (at.clone(), p)));
            }
            // Gone (its instance stopped saying): out of the set too.
            None => {
                let _: i64 = redis::cmd("SREM").arg(WHO).arg(name.as_str()).query_async(conn).await?;
            }
        }
    }
    Ok((elsewhere, alive))
}

/// How long an instance's list of who waits lasts unless rewritten.
const WAIT_LASTS: Duration = Duration::from_secs(3);

/// How long the lead lasts unless renewed (renewed every second).
const LEAD_LASTS: Duration = Duration::from_secs(3);

/// Takes the lead if nobody holds it, keeps it if this instance does.
const LEAD: &str = "local v = redis.call('get', KEYS[1]) \
    if v == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 \
    elseif not v then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0";

/// Takes or keeps the matchmaker's lead for `me`.
pub(super) async fn lead(
    matchmaker: &mut Matchmaker,
    me: &str,
    conn: &mut MultiplexedConnection,
) -> redis::RedisResult<()> {
    let ms = LEAD_LASTS.as_millis() as u64;
    let held: i64 = redis::cmd("EVAL").arg(LEAD).arg(1).arg(LEADER).arg(me).arg(ms).query_async(conn).await?;
    matchmaker.led(held == 1);
    Ok(())
}

/// Lets the lead go (at a stop, so that another takes it at once).
pub(super) async fn resign(matchmaker: &mut Matchmaker, me: &str, conn: &mut MultiplexedConnection) {
    if matchmaker.leading {
        let drop_own =
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
        let _: redis::RedisResult<i64> =
            redis::cmd("EVAL").arg(drop_own).arg(1).arg(LEADER).arg(me).query_async(conn).await;
        matchmaker.leading = false;
    }
}

/// One pass of the leader over who waits on `instances`: the moves to make.
pub(super) async fn pair(
    matchmaker: &mut Matchmaker,
    instances: &[Arc<str>],
    conn: &mut MultiplexedConnection,
) -> redis::RedisResult<Vec<Outgoing>> {
    if instances.len() < 2 {
        return Ok(matchmaker.pass(Vec::new(), Instant::now()));
    }
    let keys: Vec<String> = instances.iter().map(|i| format!("{WAIT}:{i}")).collect();
    let lists: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query_async(conn).await?;
    Ok(matchmaker.pass(instances.iter().cloned().zip(lists).collect(), Instant::now()))
}

/// Writes who waits on `me` (nothing: the key goes).
pub(super) async fn tell_waiting(
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

/// How long an instance's list of free tournament players lasts unless rewritten.
const FREE_LASTS: Duration = Duration::from_secs(3);

/// Writes this instance's free tournament players and, on the leader
/// (`leading`: its pairing and the instances alive), pairs every
/// instance's: the pairings to send.
pub(super) async fn tournament_pass(
    me: &Arc<str>,
    free: &[crate::cluster::tournaments::FreePlayer],
    leading: Option<(&mut crate::cluster::tournaments::Pairing, &[Arc<str>])>,
    conn: &mut MultiplexedConnection,
) -> redis::RedisResult<Vec<Outgoing>> {
    use crate::cluster::tournaments::FREE;
    let key = format!("{FREE}:{me}");
    if free.is_empty() {
        redis::cmd("DEL").arg(&key).query_async::<()>(conn).await?;
    } else {
        let list = serde_json::to_string(free).unwrap_or_else(|_| "[]".into());
        let lasts = FREE_LASTS.as_millis() as u64;
        redis::cmd("SET").arg(&key).arg(list).arg("PX").arg(lasts).query_async::<()>(conn).await?;
    }
    let Some((pairing, instances)) = leading else { return Ok(Vec::new()) };
    let mut all: Vec<Arc<str>> = instances.to_vec();
    if !all.contains(me) {
        all.push(me.clone());
    }
    let keys: Vec<String> = all.iter().map(|i| format!("{FREE}:{i}")).collect();
    let lists: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query_async(conn).await?;
    Ok(pairing.pass(all.into_iter().zip(lists).collect(), Instant::now()))
}
