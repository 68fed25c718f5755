//! The worker: the part of the bus's task that waits for Redis on what is
//! not a relayed message (the directory's lookups and writes, `PING`, who
//! is online, who waits, the matchmaker's lead and pass, the tournaments'
//! pass), one after another on the bus's command connection. The router
//! hands it what to do and reads its answers through channels, so that
//! while it waits, messages from other instances are still delivered.

use std::convert::Infallible;
use std::sync::Arc;

use redis::aio::MultiplexedConnection;
use tokio::sync::{mpsc, watch};

use super::calls::{self, BATCH, found, lead, pair, query, tell_waiting, tell_who};
use super::{BusState, PING, WhoLists};
use crate::cluster::matchmaker::{Matchmaker, PASS, Waiting};
use crate::cluster::relay::ToInstances;
use crate::cluster::route::{Input, Output};
use crate::cluster::tournaments::{FreePlayer, Pairing, TOURNAMENT_PASS};

/// What the router asks of the worker.
#[derive(Debug)]
pub(super) enum Job {
    /// Outputs of the router for Redis (never [`Output::Lobby`]).
    Redis(Vec<Output>),
    /// Who waits here now, to be written.
    Waiting(Vec<Waiting>),
}

/// What the worker works with; the references outlive its connection.
pub(super) struct Worker<'a> {
    /// This instance.
    pub me: Arc<str>,
    /// The bus's command connection.
    pub conn: MultiplexedConnection,
    /// Set up at each answer to `PING`.
    pub state: &'a BusState,
    /// Who is online here and elsewhere.
    pub presence: &'a mut WhoLists,
    /// The lead and the pass over who waits.
    pub matchmaker: &'a mut Matchmaker,
    /// What the router asks.
    pub jobs: &'a mut mpsc::UnboundedReceiver<Job>,
    /// Where Redis's answers go back to the router.
    pub answers: mpsc::UnboundedSender<Input>,
    /// What was taken from `jobs` and not carried out yet: if the worker
    /// is dropped (Redis failed) the bus's task answers it without Redis.
    pub pending: &'a mut Vec<Output>,
    /// Where the leader's pairings go, to be published in order with the rest.
    pub outbox: ToInstances,
    /// This instance's tournament players free now.
    pub tournament_free: watch::Receiver<Vec<FreePlayer>>,
}

impl Worker<'_> {
    /// Works until Redis fails (says why).
    pub(super) async fn run(mut self) -> Result<Infallible, String> {
        let conn = &mut self.conn;
        let mut every = tokio::time::interval(PING);
        let mut pass = tokio::time::interval(PASS);
        pass.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut tournaments = tokio::time::interval(TOURNAMENT_PASS);
        tournaments.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut pairing = Pairing::default();
        let mut instances: Vec<Arc<str>> = Vec::new();
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            tokio::select! {
                _ = every.tick() => {
                    let pong: redis::RedisResult<String> = redis::cmd("PING").query_async(conn).await;
                    pong.map_err(|e| e.to_string())?;
                    self.state.set(true);
                    lead(self.matchmaker, &self.me, conn).await.map_err(|e| e.to_string())?;
                }
                _ = pass.tick(), if self.matchmaker.leading => {
                    let moves = pair(self.matchmaker, &instances, conn).await.map_err(|e| e.to_string())?;
                    for m in moves {
                        let _ = self.outbox.send(m).await;
                    }
                }
                _ = tournaments.tick() => {
                    let free = self.tournament_free.borrow().clone();
                    let leading = self.matchmaker.leading.then_some((&mut pairing, &instances[..]));
                    let moves = calls::tournament_pass(&self.me, &free, leading, conn)
                        .await
                        .map_err(|e| e.to_string())?;
                    for m in moves {
                        let _ = self.outbox.send(m).await;
                    }
                }
                Some(here) = self.presence.here.recv() => {
                    let (elsewhere, names) =
                        tell_who(conn, &self.presence.instance, &here).await.map_err(|e| e.to_string())?;
                    let _ = self.answers.send(Input::Listed(names.clone()));
                    instances = names;
                    let _ = self.presence.elsewhere.try_send(elsewhere);
                }
                n = self.jobs.recv_many(&mut batch, BATCH) => {
                    if n == 0 {
                        return Err("the router's jobs closed".into());
                    }
                    let mut waiting = None;
                    for job in batch.drain(..) {
                        match job {
                            Job::Redis(asks) => self.pending.extend(asks),
                            Job::Waiting(w) => waiting = Some(w),
                        }
                    }
                    // Lookups first: someone waits for each.
                    if !self.pending.is_empty() {
                        let (owners, done) = query(&self.me, self.pending.as_slice(), conn).await;
                        for input in found(std::mem::take(&mut *self.pending), owners) {
                            let _ = self.answers.send(input);
                        }
                        done.map_err(|e| e.to_string())?;
                    }
                    if let Some(waiting) = waiting {
                        tell_waiting(&self.me, &waiting, conn).await.map_err(|e| e.to_string())?;
                    }
                }
            }
        }
    }
}
