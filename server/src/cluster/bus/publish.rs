//! The publisher: the task that carries messages to other instances (the
//! relayed moves, frames and asks) on a Redis connection of its own, so
//! that nothing else the bus asks of Redis (lookups, presence, the
//! matchmaker's and the tournaments' passes, `PING`) is ever in front of
//! them.

use std::convert::Infallible;
use std::sync::Arc;

use redis::aio::MultiplexedConnection;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

use super::calls::BATCH;
use super::{PING, channel};
use crate::cluster::relay::{Envelope, Outgoing, pack};

/// The queue of messages for other instances: the publisher holds it while
/// the bus is up; while it is down the bus's task drains it, each message
/// to the router as undeliverable.
pub(super) type Outbox = Arc<Mutex<mpsc::Receiver<Outgoing>>>;

/// The publisher's task, aborted when this is dropped: it lives exactly as
/// long as the bus's connection it was started for.
pub(super) struct Publisher(pub(super) JoinHandle<Result<Infallible, String>>);

impl Drop for Publisher {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts publishing what `outgoing` holds on `conn`, as instance `me` in
/// its `run`; the task ends only when Redis fails it (saying why).
pub(super) fn start(me: Arc<str>, run: u64, conn: MultiplexedConnection, outgoing: Outbox) -> Publisher {
    Publisher(tokio::spawn(publish(me, run, conn, outgoing)))
}

async fn publish(
    me: Arc<str>,
    run: u64,
    mut conn: MultiplexedConnection,
    outgoing: Outbox,
) -> Result<Infallible, String> {
    let mut outgoing = outgoing.lock().await;
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        // Idle, its connection is checked as the worker's is: one that
        // died alone is found before a message is lost to it.
        let Ok(n) = tokio::time::timeout(PING, outgoing.recv_many(&mut batch, BATCH)).await else {
            let pong: redis::RedisResult<String> = redis::cmd("PING").query_async(&mut conn).await;
            pong.map_err(|e| e.to_string())?;
            continue;
        };
        if n == 0 {
            return Err("the relay's queue closed".into());
        }
        // A batch lost to a failing Redis is not handed back as
        // undeliverable: part of it may have gone out (an ask answered
        // both there and here). It is healed as anything else lost while
        // Redis is down is (see `relay`), as it was when one task carried
        // everything.
        relay_out((&me, run), &mut conn, std::mem::take(&mut batch)).await.map_err(|e| e.to_string())?;
    }
}

/// Publishes `batch` on the channels of the instances they are for: one
/// envelope per instance, a frame for several of its connections once
/// (see [`pack`]).
async fn relay_out(
    (me, run): (&Arc<str>, u64),
    conn: &mut MultiplexedConnection,
    batch: Vec<Outgoing>,
) -> redis::RedisResult<()> {
    let mut pipe = redis::pipe();
    let (items, mut published) = (batch.len(), 0);
    for (to, msgs) in pack(batch) {
        let env = Envelope { from: me.clone(), run, msgs };
        let Ok(text) = serde_json::to_vec(&env) else { continue };
        pipe.cmd("PUBLISH").arg(channel(&to)).arg(text).ignore();
        published += 1;
    }
    ::metrics::counter!("ttt_relay_messages_total", "way" => "out").increment(published);
    ::metrics::counter!("ttt_relay_items_total", "way" => "out").increment(items as u64);
    pipe.query_async::<()>(conn).await
}
