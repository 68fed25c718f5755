//! One thread's way to Postgres: a runtime of its own (the store's
//! threads are not the server's), a connection made when first needed and
//! made again after it is lost, and the statements prepared on it.

use std::time::Duration;

use rustc_hash::FxHashMap;
use tokio_postgres::{Client, Config, NoTls, Statement};

use crate::store::backend::BackendError;
use crate::store::postgres::ANSWER;

/// A connection and the statements prepared on it.
pub(in crate::store) struct Conn {
    pub(super) client: Client,
    statements: FxHashMap<&'static str, Statement>,
    /// The epoch this session's transactions hold games with (0: none yet).
    epoch: i64,
}

impl Conn {
    /// Makes this session's transactions carry `owner` and `epoch`: the
    /// database refuses writes to games it does not hold with them. A round
    /// trip only when the epoch changed (an adoption took a newer one).
    pub(super) async fn hold(&mut self, owner: &str, epoch: i64) -> Result<(), tokio_postgres::Error> {
        if self.epoch != epoch {
            let e = epoch.to_string();
            self.client
                .execute(
                    "SELECT set_config('ttt.owner', $1, false), set_config('ttt.epoch', $2, false)",
                    &[&owner, &e],
                )
                .await?;
            self.epoch = epoch;
        }
        Ok(())
    }

    /// The statement of `sql`, prepared once per connection.
    pub(super) async fn statement(&mut self, sql: &'static str) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).await?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }
}

/// One thread's way to the database: a runtime of its own, and a
/// connection made when first needed and made again after it is lost.
pub(in crate::store) struct Link {
    rt: tokio::runtime::Runtime,
    pub(super) config: Config,
    conn: Option<Conn>,
}

impl Link {
    pub(super) fn new(config: Config) -> Result<Link, BackendError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BackendError(format!("cannot start a runtime for the database: {e}")))?;
        Ok(Link { rt, config, conn: None })
    }

    /// Like [`Link::call`], trying once more on a new connection when the
    /// one it had turned out closed (Postgres restarted meanwhile): for
    /// what may run twice.
    pub(super) fn call_again<T>(
        &mut self,
        f: impl AsyncFn(&mut Conn) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        let had = self.conn.is_some();
        match self.call(&f) {
            Err(_) if had && self.conn.is_none() => self.call(&f),
            done => done,
        }
    }

    /// Runs `f` on the connection (made first if there is none), waiting
    /// at most [`ANSWER`]. A connection that failed or did not answer is
    /// dropped: the next call makes a new one.
    pub(super) fn call<T>(
        &mut self,
        f: impl AsyncFnOnce(&mut Conn) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.call_within(ANSWER, f)
    }

    /// [`Link::call`], waiting at most `limit`.
    pub(super) fn call_within<T>(
        &mut self,
        limit: Duration,
        f: impl AsyncFnOnce(&mut Conn) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        let Link { rt, config, conn } = self;
        rt.block_on(async {
            let answer = tokio::time::timeout(limit, async {
                if conn.as_ref().is_none_or(|c| c.client.is_closed()) {
                    *conn = None;
                    let (client, connection) = config.connect(NoTls).await.map_err(BackendError::from)?;
                    tokio::spawn(async move {
                        if let Err(e) = connection.await {
                            tracing::debug!("a connection to the database ended: {e}");
                        }
                    });
                    *conn = Some(Conn { client, statements: FxHashMap::default(), epoch: 0 });
                }
                let Some(c) = conn.as_mut() else {
                    return Err(BackendError("no connection to the database".into()));
                };
                f(c).await
            })
            .await;
            match answer {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => {
                    if conn.as_ref().is_some_and(|c| c.client.is_closed()) {
                        *conn = None;
                    }
                    Err(e)
                }
                Err(_) => {
                    *conn = None;
                    Err(BackendError(format!("the database did not answer within {} s", limit.as_secs())))
                }
            }
        })
    }
}
