//! What the lobby and rooms send to a connection, and the handle they send it by.

use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use futures::task::AtomicWaker;

use crate::room_task::RoomCmd;

/// A connection's unique number for the server's lifetime.
pub type ConnId = u64;

/// One item of a connection's outbound queue.
#[derive(Debug)]
pub enum Outbound {
    /// A serialized server message; shared by all its recipients.
    Frame(Utf8Bytes),
    /// The lobby put the connection in the matchmaking queue.
    Queued,
    /// The lobby refused the request (its `error` frame precedes this).
    Refused,
    /// The connection now belongs to this room.
    Entered {
        /// The room code.
        room: Arc<str>,
        /// The room's inbox.
        tx: mpsc::Sender<RoomCmd>,
    },
    /// A game in the room started (`true`) or ended (`false`).
    Live {
        /// The room code.
        room: Arc<str>,
        /// Whether a game is in progress.
        live: bool,
    },
    /// The room no longer holds the connection.
    Released {
        /// The room code.
        room: Arc<str>,
    },
}

/// How the lobby and rooms reach one connection: a bounded queue, never awaited.
#[derive(Debug, Clone)]
pub struct ConnHandle {
    /// The connection's number.
    pub id: ConnId,
    tx: mpsc::Sender<Outbound>,
    kill: Arc<KillSwitch>,
}

impl ConnHandle {
    /// A handle on the queue `tx`; `kill` fires when the client falls behind.
    pub fn new(id: ConnId, tx: mpsc::Sender<Outbound>, kill: Arc<KillSwitch>) -> Self {
        ConnHandle { id, tx, kill }
    }

    /// Queues `item` without waiting. A full queue means a client that cannot
    /// keep up: it is dropped. Returns false when the connection is gone.
    pub fn send(&self, item: Outbound) -> bool {
        match self.tx.try_send(item) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                tracing::debug!(conn = self.id, "outbound queue full; dropping the client");
                self.kill.fire();
                false
            }
            Err(TrySendError::Closed(_)) => false,
        }
    }

    /// Whether the connection's task has ended.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Queues one serialized message.
    pub fn frame(&self, frame: &Utf8Bytes) -> bool {
        self.send(Outbound::Frame(frame.clone()))
    }
}

/// Serializes a message once into a shareable frame.
pub fn encode(message: &tictactoe_protocol::ServerMessage) -> Utf8Bytes {
    Utf8Bytes::from(message.to_json())
}

/// Tells one connection's task to drop its client. Lock-free, unlike a
/// `CancellationToken`: the task checks it on every turn of its loop in which
/// nothing else is ready, and only that one task ever waits on it.
#[derive(Debug, Default)]
pub struct KillSwitch {
    fired: AtomicBool,
    waker: AtomicWaker,
}

impl KillSwitch {
    /// Fires the switch and wakes the connection's task.
    pub fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Completes once the switch has fired. For the connection's own task only:
    /// a second waiter would take the first one's place.
    pub async fn fired(&self) {
        poll_fn(|cx| {
            if self.fired.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            self.waker.register(cx.waker());
            if self.fired.load(Ordering::Acquire) { Poll::Ready(()) } else { Poll::Pending }
        })
        .await
    }
}
