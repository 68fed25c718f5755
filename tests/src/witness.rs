//! What the clients of the crash phase's SIGSTOP form saw, game by game,
//! and its check against the records once the phase is over: every `moved`
//! any client saw (from either instance, on a live connection or on one
//! kept open across the pause) agrees with the record at its seq, every
//! `game_over` with the record's result, and each account's rating moved
//! once per rated game recorded. A move the stopped instance accepted less
//! than 100 ms before the fault (seen then, or read a moment after it) that
//! the record contradicts is one the contract lets a crash lose: counted,
//! not failed.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::api;

/// How young a sighting at the fault may be and still be lost with it.
const YOUNG: Duration = Duration::from_millis(100);

/// One game's sightings: its `moved` and `game_over` frames as any client
/// saw them, with when, and whether from a room on the instance the fault hit.
#[derive(Default)]
pub struct Seen {
    id: Mutex<Option<String>>,
    frames: Mutex<Vec<Sighting>>,
}

/// A frame as a client saw it.
#[derive(Clone)]
struct Sighting {
    at: Instant,
    frame: Value,
    /// From a room on the instance the fault hit.
    hit: bool,
}

impl Seen {
    /// Keeps `frame` if it is a `moved` or a `game_over` (the latter names
    /// the game); `hit`: it came from a room on the instance the fault hit.
    pub fn saw(&self, frame: &Value, hit: bool) {
        if frame["type"] == "game_over"
            && let (Some(id), Ok(mut mine)) = (frame["game_id"].as_str(), self.id.lock())
        {
            mine.get_or_insert_with(|| id.to_owned());
        }
        if frame["type"] == "moved" || frame["type"] == "game_over" {
            if let Ok(mut frames) = self.frames.lock() {
                frames.push(Sighting { at: Instant::now(), frame: frame.clone(), hit });
            }
        }
    }

    /// Whether `frame` was seen before `t` (on any connection): a copy of it
    /// heard later is the same frame, sent before and delivered late.
    pub fn before(&self, frame: &Value, t: Instant) -> bool {
        let frames = self.frames.lock().map(|f| f.clone()).unwrap_or_default();
        frames.iter().any(|s| s.at < t && s.frame == *frame)
    }
}

/// Every game's sightings, and the accounts that played.
#[derive(Default)]
pub struct Witness {
    games: Mutex<Vec<Arc<Seen>>>,
    accounts: Mutex<Vec<String>>,
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Judged {
    /// Games whose every sighting was compared with their record.
    pub games: u64,
    /// `moved` frames compared.
    pub moves: u64,
    /// Sightings the record contradicts, younger than 100 ms at the fault.
    pub young: u64,
    /// Games seen but never named by a `game_over` (ended with the fault,
    /// or lost young): nothing to look up.
    pub unnamed: u64,
    /// Accounts whose rating was checked, and the rated games they played.
    pub accounts: u64,
    /// Rated games recorded for those accounts, each counted once per account.
    pub rated: u64,
    /// What contradicts the records.
    pub failures: Vec<String>,
}

impl Witness {
    /// A new game's sightings.
    pub fn game(&self) -> Arc<Seen> {
        let seen = Arc::new(Seen::default());
        if let Ok(mut games) = self.games.lock() {
            games.push(seen.clone());
        }
        seen
    }

    /// An account that plays in the phase: its ratings are checked.
    pub fn account(&self, name: &str) {
        if let Ok(mut accounts) = self.accounts.lock() {
            accounts.push(name.to_owned());
        }
    }

    /// Compares everything seen with the records `addr` serves; `fault` is
    /// when the instance stopped, `woke` when it was woken.
    pub async fn judge(&self, addr: SocketAddr, fault: Instant, woke: Instant) -> Judged {
        let mut judged = Judged::default();
        let games = self.games.lock().map(|g| g.clone()).unwrap_or_default();
        for seen in games {
            let frames = seen.frames.lock().map(|f| f.clone()).unwrap_or_default();
            let id = seen.id.lock().ok().and_then(|id| id.clone());
            match id {
                Some(id) => judge_game(addr, &id, &frames, [fault, woke], &mut judged).await,
                None if frames.is_empty() => {}
                None => judged.unnamed += 1,
            }
        }
        let accounts = self.accounts.lock().map(|a| a.clone()).unwrap_or_default();
        for name in accounts {
            match rated_once(addr, &name).await {
                Ok(rated) => {
                    judged.accounts += 1;
                    judged.rated += rated;
                }
                Err(e) => judged.failures.push(e),
            }
        }
        judged
    }
}

/// One game's sightings against its record; `[fault, woke]`: the pause.
async fn judge_game(
    addr: SocketAddr,
    id: &str,
    frames: &[Sighting],
    [fault, woke]: [Instant; 2],
    judged: &mut Judged,
) {
    let (status, record) = api(addr, &format!("/api/games/{id}")).await;
    if status != 200 {
        judged.failures.push(format!("game {id} was seen to end but has no record: {status} {record}"));
        return;
    }
    judged.games += 1;
    // Each frame once, as first seen: both players get each, and an old
    // connection may deliver one late.
    let mut firsts: Vec<&Sighting> = Vec::new();
    for sighting in frames {
        match firsts.iter_mut().find(|f| f.frame == sighting.frame) {
            Some(first) if sighting.at < first.at => *first = sighting,
            Some(_) => {}
            None => firsts.push(sighting),
        }
    }
    for Sighting { at, frame, hit } in firsts {
        let agrees = match frame["type"].as_str() {
            Some("moved") => {
                judged.moves += 1;
                let seq = frame["seq"].as_u64().unwrap_or(0) as usize;
                let kept = seq.checked_sub(1).map(|i| &record["moves"][i]);
                kept.is_some_and(|kept| kept[0] == frame["row"] && kept[1] == frame["col"])
            }
            _ => ["moves", "winner", "reason"].iter().all(|k| frame[k] == record[k]),
        };
        if agrees {
            continue;
        }
        // A frame from the paused instance read before it woke left it
        // before the fault: young if seen less than 100 ms before it, or after.
        if *hit && *at < woke && (*at > fault || fault.duration_since(*at) < YOUNG) {
            judged.young += 1;
            continue;
        }
        let when = match *at <= fault {
            true => format!("{} ms before the fault", fault.duration_since(*at).as_millis()),
            false => format!("{} ms after the fault", at.duration_since(fault).as_millis()),
        };
        judged.failures.push(format!("game {id}: a client saw {frame} {when}, but the record is {record}"));
    }
}

/// Checks that account `name`'s rating moved exactly once per rated game
/// recorded for it: its games count is the number of those games, and each
/// game's rating before is the one the pool's game before it left. Returns that number.
async fn rated_once(addr: SocketAddr, name: &str) -> Result<u64, String> {
    let mut records = Vec::new();
    let mut page = format!("/api/players/{name}/games?limit=100");
    loop {
        let (status, body) = api(addr, &page).await;
        let games = body["games"].as_array().filter(|_| status == 200);
        let games = games.ok_or_else(|| format!("the games of {name}: {status} {body}"))?;
        records.extend(games.iter().cloned());
        match games.last().and_then(|g| g["id"].as_str()) {
            Some(last) if games.len() == 100 => {
                page = format!("/api/players/{name}/games?limit=100&before={last}")
            }
            _ => break,
        }
    }
    // Oldest first; each rated game's rating of `name`, before and after.
    records.reverse();
    let mut steps = Vec::new();
    for record in records.iter().filter(|r| r["rated"] == true) {
        let players = record["players"].as_array().map(Vec::as_slice).unwrap_or_default();
        let seat = players.iter().position(|p| p["name"] == name);
        let seat = seat.ok_or_else(|| format!("{name} is not a player of its game {record}"))?;
        let pool = (record["size"].clone(), record["win"].clone());
        steps.push((pool, record["id"].clone(), record["ratings"][seat].clone()));
    }
    for (i, (pool, id, later)) in steps.iter().enumerate() {
        // The same pool's game before it.
        let Some((_, _, earlier)) = steps[..i].iter().rev().find(|(p, _, _)| p == pool) else { continue };
        if later["before"] != earlier["after"] {
            return Err(format!(
                "{name}'s rating moved between two of its games: {earlier} then {later} (game {id})"
            ));
        }
    }
    let (status, player) = api(addr, &format!("/api/players/{name}")).await;
    let pools = player["ratings"].as_object().filter(|_| status == 200);
    let pools = pools.ok_or_else(|| format!("the player {name}: {status} {player}"))?;
    let counted: u64 = pools.values().map(|p| p["games"].as_u64().unwrap_or(0)).sum();
    if counted != steps.len() as u64 {
        return Err(format!(
            "{name} has {counted} rated games counted but {} recorded: {player}",
            steps.len()
        ));
    }
    Ok(counted)
}
