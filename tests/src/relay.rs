//! The baselines for the load generator: bare tokio-tungstenite servers with
//! the game server's frame pattern and no game logic. Connections are paired
//! in arrival order; every text frame from either side is answered with one
//! `moved`-sized frame to both. Same socket settings as `ttt-server`.
//!
//! [`Relay::Bare`] is the stack's ceiling: one task per pair, no hand-offs.
//! [`Relay::Tasks`] has the game server's data flow: a task per connection
//! and per pair, and the server's bounded queues between them, so that the
//! cost of that shape is measured apart from the game's own work (the frame
//! is still a static string: encoding it is the game's work).

use std::future::Future;

use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_util::task::TaskTracker;

use tictactoe_server::net::queue::{self, Recv, TrySendError};

/// A frame the size of a typical `moved`.
const MOVED: &str =
    r#"{"type":"moved","room":"K7QM3XPA2B","row":1,"col":2,"player":1,"seq":5,"next":2,"clock_ms":30000}"#;

/// Which relay to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relay {
    /// One task per pair reads both sockets and writes both.
    Bare,
    /// The game server's shape: connection tasks hand each frame to a pair
    /// task over a bounded queue, which queues the answer to both.
    Tasks,
}

/// Serves `relay` on `listener` until `shutdown` completes.
pub async fn serve_relay(listener: TcpListener, relay: Relay, shutdown: impl Future<Output = ()>) {
    let config = tictactoe_server::Config::default().ws_config();
    let tracker = TaskTracker::new();
    let mut waiting: Option<WebSocketStream<TcpStream>> = None;
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let _ = stream.set_nodelay(true);
        let Ok(mut ws) = tokio_tungstenite::accept_async_with_config(stream, Some(config)).await else {
            continue;
        };
        // Greet like the server does, so clients can treat both alike.
        if ws.send(Message::text(r#"{"type":"welcome","protocol":1}"#)).await.is_err() {
            continue;
        }
        match waiting.take() {
            None => waiting = Some(ws),
            Some(first) => match relay {
                Relay::Bare => {
                    tracker.spawn(relay_pair(first, ws));
                }
                Relay::Tasks => spawn_pair_tasks(&tracker, first, ws),
            },
        }
    }
    tracker.close();
    tracker.wait().await;
}

async fn relay_pair(mut a: WebSocketStream<TcpStream>, mut b: WebSocketStream<TcpStream>) {
    let moved = Utf8Bytes::from_static(MOVED);
    loop {
        let from_a = tokio::select! {
            m = a.next() => (true, m),
            m = b.next() => (false, m),
        };
        match from_a.1 {
            Some(Ok(Message::Text(_))) => {
                // One frame in, two out: to the sender and to its partner.
                let (own, other) = if from_a.0 { (&mut a, &mut b) } else { (&mut b, &mut a) };
                if own.send(Message::Text(moved.clone())).await.is_err()
                    || other.send(Message::Text(moved.clone())).await.is_err()
                {
                    return;
                }
            }
            Some(Ok(_)) => {}
            _ => return,
        }
    }
}

/// Spawns a task per connection and one for the pair, joined by bounded queues.
fn spawn_pair_tasks(tracker: &TaskTracker, a: WebSocketStream<TcpStream>, b: WebSocketStream<TcpStream>) {
    let outbound = tictactoe_server::Config::default().outbound_queue;
    let (inbox_tx, mut inbox) = queue::channel::<()>(tictactoe_server::config::ROOM_INBOX);
    let (a_tx, a_rx) = queue::channel(outbound);
    let (b_tx, b_rx) = queue::channel(outbound);
    tracker.spawn(connection(a, inbox_tx.clone(), a_rx));
    tracker.spawn(connection(b, inbox_tx, b_rx));
    tracker.spawn(async move {
        let moved = Utf8Bytes::from_static(MOVED);
        while let Recv::Item(()) = inbox.recv().await {
            if a_tx.try_send(moved.clone()).is_err() || b_tx.try_send(moved.clone()).is_err() {
                return;
            }
        }
    });
}

/// One connection of the tasks relay: frames in go to the pair's inbox,
/// frames queued for it are written in a batch with one flush.
async fn connection(
    mut ws: WebSocketStream<TcpStream>,
    pair: queue::Sender<()>,
    mut out: queue::Receiver<Utf8Bytes>,
) {
    loop {
        tokio::select! {
            biased;
            item = out.recv() => {
                let Recv::Item(mut frame) = item else { return };
                loop {
                    if ws.feed(Message::Text(frame)).await.is_err() {
                        return;
                    }
                    match out.try_recv() {
                        Some(Recv::Item(next)) => frame = next,
                        _ => break,
                    }
                }
                if ws.flush().await.is_err() {
                    return;
                }
            }
            msg = ws.next() => match msg {
                Some(Ok(Message::Text(_))) => {
                    if let Err(TrySendError::Full(())) = pair.try_send(()) {
                        if pair.send(()).await.is_err() {
                            return;
                        }
                    }
                }
                Some(Ok(_)) => {}
                _ => return,
            },
        }
    }
}
