//! The Postgres backend: the connection string, the links to the database
//! (one per thread, each with a small runtime of its own: the store's
//! threads are not the server's), the migrations, and the writer's side
//! ([`PgBackend`]); the readers' side is [`PgReader`].
//!
//! A commit's statements are pipelined, from `BEGIN` to `COMMIT`, each
//! writing many rows at once (`unnest` of arrays): one round trip, and one
//! more before it when the commit writes records (`opening`: it checks them
//! and locks the standings they move).

mod lease;
mod link;
mod live;
mod opening;
mod pipeline;
mod read;
mod records;
mod rounds;
mod tournaments;
mod write;

pub use lease::{Adopted, Hold, Leases};
pub use read::PgReader;

use link::{Conn, Link};

use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::Config;

use crate::core::account::AccountId;
use crate::ratings::Standing;
use crate::store::Restored;
use crate::store::backend::{Backend, BackendError, Commit, Committed};
use crate::store::record::{GameRecord, unix_ms};
use crate::store::row;
use tictactoe_protocol::Rules;

/// The schema's versions, in order, each a numbered file in
/// `server/migrations/postgres/`: version N is the first N applied. The
/// table `ttt_schema` records the version of a database; a newer one than
/// this list is refused.
const MIGRATIONS: [(&str, &str); 5] = [
    ("0001_schema.sql", include_str!("../../../migrations/postgres/0001_schema.sql")),
    ("0002_record_holder.sql", include_str!("../../../migrations/postgres/0002_record_holder.sql")),
    ("0003_fischer_clock.sql", include_str!("../../../migrations/postgres/0003_fischer_clock.sql")),
    ("0004_organised_rooms.sql", include_str!("../../../migrations/postgres/0004_organised_rooms.sql")),
    ("0005_tournaments.sql", include_str!("../../../migrations/postgres/0005_tournaments.sql")),
];

/// How long an instance that stopped saying it is alive still holds its
/// games: past it, another adopts them. Well inside the 10 s the contract
/// gives adoption, and long enough that a database slow for a few seconds
/// does not hand a live instance's games away.
pub const LEASE: Duration = Duration::from_secs(4);

/// Says an instance (`$1`, with epoch `$2`) is alive, now on the database's clock.
const BEAT: &str = "INSERT INTO instances (name, epoch, beat_at) VALUES ($1, $2, now())
     ON CONFLICT (name) DO UPDATE SET epoch = excluded.epoch, beat_at = now()";

/// Says `owner` (with `epoch`) is alive.
async fn beat(c: &mut Conn, owner: &str, epoch: i64) -> Result<(), tokio_postgres::Error> {
    let s = c.statement(BEAT).await?;
    c.client.execute(&s, &[&owner, &epoch]).await?;
    Ok(())
}

/// Says `owner` (with `epoch`) is alive, in the transaction `tx`.
async fn beat_in(
    tx: &tokio_postgres::Transaction<'_>,
    owner: &str,
    epoch: i64,
) -> Result<(), tokio_postgres::Error> {
    tx.execute(BEAT, &[&owner, &epoch]).await?;
    Ok(())
}

/// Longest a connection attempt waits.
const CONNECT: Duration = Duration::from_secs(2);

/// Longest a commit, a read or a check waits for its answer: a database
/// that stopped answering is given up on (the link is dropped and made
/// again at the next call). The writer is blocked meanwhile while moves
/// keep coming: 3 s of a busy server's moves fit in its queue, so a hung
/// Postgres makes writes fail (and wait in memory) rather than the queue
/// overflow.
pub(super) const ANSWER: Duration = Duration::from_secs(3);

/// Longest the start's work waits (migrations, reading the games in
/// progress, importing a spill file): it can be long on a big database.
const START: Duration = Duration::from_secs(120);

/// Advisory lock key held while migrating: two servers starting at once on
/// one database migrate it one after the other.
const MIGRATION_LOCK: i64 = 0x0074_7474_5f6d_6967;

impl From<tokio_postgres::Error> for BackendError {
    fn from(e: tokio_postgres::Error) -> BackendError {
        // The server's own words (a constraint, a refused epoch) say more than the driver's.
        match e.as_db_error() {
            Some(db) => BackendError(format!("{}: {}", db.code().code(), db.message())),
            None => BackendError(e.to_string()),
        }
    }
}

/// Reads a `--database` value that starts with `postgres://` or
/// `postgresql://`: libpq's URL form, with the host a Unix socket's
/// directory as `?host=/dir`. Without a host, the Unix socket in
/// `/var/run/postgresql` (as libpq on Debian); without a user, `postgres`.
pub fn config(url: &str) -> Result<Config, String> {
    let mut config: Config =
        url.parse().map_err(|e| format!("{:?} is not a Postgres URL: {e}", redacted(url)))?;
    if config.get_hosts().is_empty() {
        config.host_path("/var/run/postgresql");
    }
    if config.get_user().is_none() {
        config.user("postgres");
    }
    if matches!(config.get_ssl_mode(), tokio_postgres::config::SslMode::Require) {
        return Err(format!(
            "{:?} asks for TLS (sslmode=require), which this server does not speak to Postgres: \
             use a Unix socket, a private network or a TLS tunnel",
            redacted(url)
        ));
    }
    config.connect_timeout(CONNECT);
    config.application_name("ttt-server");
    Ok(config)
}

/// `url` with its password, if any, replaced by `***`: what logs and
/// error messages show of it. The password may be in the user part (up to
/// the last `@`) or a `password=` parameter.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let shown = match rest.rsplit_once('@') {
        Some((userinfo, after)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{after}")
        }
        _ => url.to_owned(),
    };
    match shown.split_once('?') {
        Some((head, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => p.to_owned(),
                })
                .collect();
            format!("{head}?{}", params.join("&"))
        }
        None => shown,
    }
}

/// The writer's connection to a Postgres database, holding games in
/// progress for this instance with its newest epoch.
pub struct PgBackend {
    link: Link,
    /// The URL's address, for readers and the leases.
    config: Config,
    /// This instance's name and epoch, saved as the holder of its games.
    hold: Arc<Hold>,
    /// In a cluster a start takes over only this instance's own games;
    /// alone, every saved game.
    cluster: bool,
}

impl PgBackend {
    /// Connects to the database at `url`, migrates it and takes this
    /// start's epoch. An error says what is wrong and what to do.
    pub fn open(url: &str, instance: &str, cluster: bool) -> Result<PgBackend, String> {
        let mut config = config(url)?;
        // Named, so that the instance that adopts this one's games can end
        // its sessions (and never wait on their locks).
        config.application_name(lease::application_name(instance));
        let mut link = Link::new(config.clone()).map_err(|e| e.0)?;
        link.call_within(START, async |c| Ok(migrate(c).await?)).map_err(|e| {
            format!("cannot reach or migrate it ({e}); check that Postgres runs, and the URL")
        })??;
        let epoch = link
            .call(async |c| Ok(lease::next_epoch(c).await?))
            .map_err(|e| format!("cannot take an epoch: {e}"))?;
        let hold = Arc::new(Hold::new(instance, epoch));
        Ok(PgBackend { link, config, hold, cluster })
    }

    /// The leases of this instance, on a connection of their own.
    pub fn leases(&self) -> Result<Leases, BackendError> {
        Ok(Leases::new(Link::new(self.config.clone())?, self.hold.clone()))
    }
}

/// Applies the migrations the database lacks, in one transaction under
/// an advisory lock. A schema newer than this server's is refused: the
/// inner error says so.
async fn migrate(c: &mut Conn) -> Result<Result<(), String>, tokio_postgres::Error> {
    let tx = c.client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await?;
    // Asked first: `CREATE TABLE IF NOT EXISTS` on every start would make
    // Postgres send a notice ("already exists, skipping") logged each time.
    let schema: Option<String> = tx.query_one("SELECT to_regclass('ttt_schema')::text", &[]).await?.get(0);
    if schema.is_none() {
        tx.batch_execute("CREATE TABLE ttt_schema (version INTEGER NOT NULL)").await?;
    }
    let applied: i32 =
        tx.query_opt("SELECT version FROM ttt_schema", &[]).await?.map_or(0, |r| r.get::<_, i32>(0));
    let known = MIGRATIONS.len() as i32;
    if applied > known {
        return Ok(Err(format!(
            "its schema is version {applied}, newer than this server's {known}; run a newer ttt-server"
        )));
    }
    for (file, sql) in MIGRATIONS.iter().skip(usize::try_from(applied).unwrap_or(0)) {
        tracing::info!(migration = file, "migrating the database");
        tx.batch_execute(sql).await?;
    }
    tx.execute("DELETE FROM ttt_schema", &[]).await?;
    tx.execute("INSERT INTO ttt_schema (version) VALUES ($1)", &[&known]).await?;
    tx.commit().await?;
    Ok(Ok(()))
}

impl Backend for PgBackend {
    type Reader = PgReader;

    fn commit(&mut self, batch: &Commit<'_>) -> Result<Committed, BackendError> {
        let (owner, epoch) = (self.hold.owner(), self.hold.epoch());
        // A backlog's commit (after an outage) is given 50 µs more per thing
        // it writes: it must not time out every time it is tried.
        let limit = ANSWER + Duration::from_micros(50 * batch.size() as u64);
        self.link.call_within(limit, async |c| {
            c.hold(owner, epoch).await?;
            write::commit(c, batch, owner, epoch).await
        })
    }

    fn not_held(&mut self, rooms: &[Arc<str>]) -> Result<Vec<Arc<str>>, BackendError> {
        let (owner, epoch) = (self.hold.owner(), self.hold.epoch());
        let names: Vec<&str> = rooms.iter().map(|r| &**r).collect();
        let gone: Vec<String> =
            self.link.call(async |c| Ok(lease::not_held(c, &names, owner, epoch).await?))?;
        Ok(rooms.iter().filter(|r| gone.iter().any(|g| g == &***r)).cloned().collect())
    }

    fn probe(&mut self) -> Result<(), BackendError> {
        let now = unix_ms(std::time::SystemTime::now());
        self.link.call_again(async |c| {
            let s = c
                .statement(
                    "INSERT INTO heartbeat (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = $1",
                )
                .await?;
            c.client.execute(&s, &[&now]).await?;
            Ok(())
        })
    }

    fn standing(&mut self, account: AccountId, rules: Rules) -> Result<Option<Standing>, BackendError> {
        let (size, win) = (rules.size as i32, rules.win as i32);
        self.link.call(async |c| {
            let s = c
                .statement(
                    "SELECT rating, rd, volatility, games FROM ratings WHERE account = $1 AND size = $2 AND win = $3",
                )
                .await?;
            let Some(r) = c.client.query_opt(&s, &[&account, &size, &win]).await? else { return Ok(None) };
            Ok(Some(row::standing(&r)?))
        })
    }

    fn import(&mut self, games: &[GameRecord]) -> Result<usize, BackendError> {
        let (owner, epoch) = (self.hold.owner(), self.hold.epoch());
        self.link.call_within(START, async |c| {
            c.hold(owner, epoch).await?;
            Ok(write::import(c, games, owner, epoch).await?)
        })
    }

    fn load(&mut self) -> Result<Restored, BackendError> {
        let (owner, epoch) = (self.hold.owner(), self.hold.epoch());
        // Alone on its database a start holds every saved game; in a
        // cluster, its own (a restart under the same name), and the leases
        // adopt the dead instances'.
        let whose = match self.cluster {
            true => live::Whose::Own,
            false => live::Whose::All,
        };
        let cluster = self.cluster;
        self.link.call_within(START, async |c| {
            c.hold(owner, epoch).await?;
            if cluster && !lease::name_free(c, owner).await? {
                return Err(BackendError(format!(
                    "another instance named {owner:?} is running on this database: give each its own --instance"
                )));
            }
            Ok(live::load(c, owner, epoch, &whose).await?)
        })
    }

    fn reader(&self) -> Result<PgReader, BackendError> {
        Ok(PgReader::new(Link::new(self.config.clone())?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_postgres::config::Host;

    #[test]
    fn urls_read_as_libpq_reads_them() {
        let c = config("postgres://ttt@/games?host=/run/pg&port=5433").expect("libpq's socket form");
        assert_eq!(c.get_hosts(), [Host::Unix("/run/pg".into())]);
        assert_eq!(c.get_ports(), [5433]);
        assert_eq!((c.get_user(), c.get_dbname()), (Some("ttt"), Some("games")));
        let c = config("postgresql://ann:secret@db.example:6000/ttt").expect("a host and a port");
        assert_eq!(c.get_hosts(), [Host::Tcp("db.example".into())]);
        assert_eq!(c.get_ports(), [6000]);
        // No host: Debian's socket; no user: postgres.
        let c = config("postgres:///ttt").expect("nothing but the database");
        assert_eq!(c.get_hosts(), [Host::Unix("/var/run/postgresql".into())]);
        assert_eq!(c.get_user(), Some("postgres"));
        let bad = config("postgres://ann:secret@db/ttt?port=notaport").expect_err("a bad port");
        assert!(!bad.contains("secret"), "{bad}");
    }

    /// Every file in `server/migrations/postgres/` is in the list, in order,
    /// numbered from 1 without a gap.
    #[test]
    fn the_migration_files_are_numbered_and_all_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
        crate::store::tests::assert_migrations(&dir, &MIGRATIONS.map(|(name, _)| name));
    }

    #[test]
    fn passwords_never_show() {
        assert_eq!(redacted("postgres://ann:s3cr%40t@db:5432/ttt"), "postgres://ann:***@db:5432/ttt");
        assert_eq!(redacted("postgres://ann@/ttt?host=/run/pg"), "postgres://ann@/ttt?host=/run/pg");
        assert_eq!(redacted("postgresql://db/ttt"), "postgresql://db/ttt");
        assert_eq!(redacted("postgres://ann:a/b?c@db/ttt"), "postgres://ann:***@db/ttt");
        assert_eq!(
            redacted("postgres:///ttt?user=ann&password=pw&host=/run"),
            "postgres:///ttt?user=ann&password=***&host=/run"
        );
        assert!(config("postgres://db/ttt?sslmode=require").is_err());
        let shown = crate::store::Database::Postgres("postgres://ann:pw@db/ttt".into()).to_string();
        assert_eq!(shown, "postgres://ann:***@db/ttt");
    }
}
