//! Holds on games in progress across a cluster: each instance says it is
//! alive every second (a row in `instances`, on the database's clock), and
//! a live instance adopts the games of one that stopped saying so (it died,
//! or was cut off) or that let them go (it stopped). Each hold takes the
//! next epoch; the database refuses any other writer's writes to a held
//! game (see the migration's triggers).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tokio_postgres::Error;

use super::live::{self, Whose};
use super::{Conn, LEASE, Link, beat};
use crate::store::Restored;
use crate::store::backend::BackendError;

/// This instance's hold: its name, and the newest epoch it took. Its
/// writer's transactions carry both.
#[derive(Debug)]
pub struct Hold {
    owner: String,
    epoch: AtomicI64,
}

impl Hold {
    /// `owner`'s hold with `epoch`.
    pub fn new(owner: &str, epoch: i64) -> Hold {
        Hold { owner: owner.to_owned(), epoch: AtomicI64::new(epoch) }
    }

    /// The instance's name.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The newest epoch this instance took.
    pub fn epoch(&self) -> i64 {
        self.epoch.load(Ordering::Acquire)
    }
}

/// Games adopted from other instances.
#[derive(Debug)]
pub struct Adopted {
    /// The instances they were held by.
    pub from: Vec<String>,
    /// The games, as of their last saved move, and their players' standings.
    pub restored: Restored,
}

/// This instance's side of the leases, on a connection of its own (the
/// writer's may be busy for seconds with a backlog; a lease must not wait).
pub struct Leases {
    link: Link,
    hold: Arc<Hold>,
}

impl Leases {
    pub(super) fn new(link: Link, hold: Arc<Hold>) -> Leases {
        Leases { link, hold }
    }

    /// Another side of the same leases, on a connection of its own.
    pub fn twin(&self) -> Result<Leases, BackendError> {
        Ok(Leases::new(Link::new(self.link.config.clone())?, self.hold.clone()))
    }

    /// This instance's name.
    pub fn owner(&self) -> &str {
        self.hold.owner()
    }

    /// Says this instance is alive.
    pub fn beat(&mut self) -> Result<(), BackendError> {
        let (owner, epoch) = (self.hold.owner(), self.hold.epoch());
        self.link.call_again(async |c| Ok(beat(c, owner, epoch).await?))
    }

    /// The instances other than this one that hold games and are not alive
    /// (their lease ran out, or they let their games go). Quick, or given
    /// up on: a stuck database must not hold up the resumes that wait for it.
    pub fn dead(&mut self) -> Result<Vec<String>, BackendError> {
        let owner = self.hold.owner();
        self.link.call(async |c| Ok(dead(c, owner).await?))
    }

    /// Adopts the games of the `dead` instances (see [`Leases::dead`]),
    /// those that are still dead: with a new epoch, which this instance's
    /// writer holds its games with from then on. Never waits on the old
    /// holder: its sessions are ended first, and a game it still locks is
    /// left for the next call.
    pub fn adopt(&mut self, dead: Vec<String>) -> Result<Option<Adopted>, BackendError> {
        let hold = self.hold.clone();
        let owner = hold.owner();
        if dead.is_empty() {
            return Ok(None);
        }
        let adopted = self.link.call_within(super::START, async |c| {
            // The dead instance's sessions, as of its last word (not those
            // of a start under its name since), end: none of its locks or
            // transactions is waited on.
            let names: Vec<String> = dead.iter().map(|d| application_name(d)).collect();
            c.client
                .execute(
                    "SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a
                     JOIN instances i ON a.application_name = 'ttt-server ' || i.name
                     WHERE a.application_name = ANY($1) AND a.datname = current_database()
                       AND a.backend_start < i.beat_at",
                    &[&names],
                )
                .await?;
            let epoch = next_epoch(c).await?;
            c.hold(owner, epoch).await?;
            let restored = live::load(c, owner, epoch, &Whose::Dead(dead.clone())).await?;
            Ok((restored, epoch))
        })?;
        let (restored, epoch) = adopted;
        // The writer holds the adopted games with the new epoch before any
        // of them can be played on.
        hold.epoch.fetch_max(epoch, Ordering::AcqRel);
        if let Err(e) = self.beat() {
            tracing::warn!("the lease could not be renewed after an adoption: {e}");
        }
        Ok(Some(Adopted { from: dead, restored }))
    }

    /// Which of `games` (their ids) another instance has adopted or recorded
    /// since this one last held them: asked after a lapse of the lease.
    pub fn lost(&mut self, games: &[std::sync::Arc<str>]) -> Result<Vec<String>, BackendError> {
        let (owner, epoch) = (self.hold.owner(), self.hold.epoch());
        let ids: Vec<&str> = games.iter().map(|g| &**g).collect();
        self.link.call(async |c| Ok(lost(c, &ids, owner, epoch).await?))
    }

    /// Lets this instance's games go (it stopped, with everything written):
    /// the next instance that looks adopts them, without waiting for the lease.
    pub fn release(&mut self) -> Result<(), BackendError> {
        let owner = self.hold.owner();
        self.link.call(async |c| {
            c.client.execute("DELETE FROM instances WHERE name = $1", &[&owner]).await?;
            Ok(())
        })
    }
}

/// The name an instance's sessions show in `pg_stat_activity`.
pub(super) fn application_name(instance: &str) -> String {
    format!("ttt-server {instance}")
}

/// The next epoch: every hold takes a newer one than any before it.
pub(super) async fn next_epoch(c: &mut Conn) -> Result<i64, Error> {
    c.client.query_one("SELECT nextval('live_epoch')", &[]).await?.try_get(0)
}

/// Waits while an instance named `owner` is alive (after a crash, this
/// instance's own last start, whose lease runs out within [`LEASE`]).
/// `false` if one stays alive past twice that: another instance runs with
/// this name.
pub(super) async fn name_free(c: &mut Conn, owner: &str) -> Result<bool, Error> {
    let lease = LEASE.as_secs_f64();
    let until = tokio::time::Instant::now() + 2 * LEASE;
    loop {
        let alive = c
            .client
            .query_opt(
                "SELECT 1 FROM instances WHERE name = $1 AND beat_at > now() - make_interval(secs => $2)",
                &[&owner, &lease],
            )
            .await?
            .is_some();
        if !alive {
            return Ok(true);
        }
        if tokio::time::Instant::now() > until {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The instances other than `me` that hold games and are not alive.
/// Each look costs a step of the owners' index per instance that holds games
/// (a skip scan), not a read of every game in progress.
async fn dead(c: &mut Conn, me: &str) -> Result<Vec<String>, Error> {
    let lease = LEASE.as_secs_f64();
    let s = c
        .statement(
            "WITH RECURSIVE owners(owner) AS (
                 (SELECT owner FROM live_games ORDER BY owner LIMIT 1)
                 UNION ALL
                 SELECT (SELECT g.owner FROM live_games g WHERE g.owner > o.owner ORDER BY g.owner LIMIT 1)
                 FROM owners o WHERE o.owner IS NOT NULL
             )
             SELECT o.owner FROM owners o WHERE o.owner IS NOT NULL AND o.owner <> $1 AND NOT EXISTS
               (SELECT 1 FROM instances i WHERE i.name = o.owner
                  AND i.beat_at > now() - make_interval(secs => $2))",
        )
        .await?;
    Ok(c.client.query(&s, &[&me, &lease]).await?.iter().map(|r| r.get(0)).collect())
}

/// Which of `rooms` this writer (`owner` with `epoch`) does not hold: another
/// instance adopted them.
pub(super) async fn not_held(
    c: &mut Conn,
    rooms: &[&str],
    owner: &str,
    epoch: i64,
) -> Result<Vec<String>, Error> {
    let s = c
        .statement("SELECT room FROM live_games WHERE room = ANY($1) AND NOT (owner = $2 AND epoch <= $3)")
        .await?;
    Ok(c.client.query(&s, &[&rooms, &owner, &epoch]).await?.iter().map(|r| r.get(0)).collect())
}

/// Which of `games` (their ids) this writer (`owner` with `epoch`) has lost:
/// another instance recorded it (it adopted and ended it), or holds it now.
pub(super) async fn lost(
    c: &mut Conn,
    games: &[&str],
    owner: &str,
    epoch: i64,
) -> Result<Vec<String>, Error> {
    let s = c
        .statement(
            "SELECT u.id FROM unnest($1::text[]) AS u(id)
             WHERE EXISTS (SELECT 1 FROM games g WHERE g.id = u.id)
                OR EXISTS (SELECT 1 FROM live_games l WHERE l.game_id = u.id AND NOT (l.owner = $2 AND l.epoch <= $3))",
        )
        .await?;
    Ok(c.client.query(&s, &[&games, &owner, &epoch]).await?.iter().map(|r| r.get(0)).collect())
}
