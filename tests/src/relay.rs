//! The baselines for the load generator: bare tokio-tungstenite servers with
//! the game server's frame pattern and no game logic. Connections are paired
//! in arrival order and sent the frames the game server would send them:
//! each `move` is answered with one `moved`-sized frame to both; a move the
//! load generator marks as a game's last (`"last":true`) adds a
//! `game_over`-sized frame to both; of the two `rematch` frames that follow,
//! the first gets the other side a `rematch_offered`, the second gets both a
//! `game_started` (seats swapped, as the server swaps them). Same socket
//! settings as `ttt-server`.
//!
//! [`Relay::Bare`] is the stack's ceiling: one task per pair, no hand-offs.
//! [`Relay::Tasks`] has the game server's data flow: a task per connection
//! and per pair, and the server's bounded queues between them, so that the
//! cost of that shape is measured apart from the game's own work (the frames
//! are still static strings: encoding them is the game's work).

use std::future::Future;

use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_util::task::TaskTracker;

use tictactoe_server::core::queue::{self, Recv, TrySendError};

/// A frame the size of a typical `moved`.
const MOVED: &str =
    r#"{"type":"moved","room":"K7QM3XPA2B","row":1,"col":2,"player":1,"seq":5,"next":2,"clock_ms":30000}"#;
/// A 3×3 game's `game_over` as the server sends it with its default database.
const GAME_OVER: &str = r#"{"type":"game_over","room":"K7QM3XPA2B","winner":1,"reason":"line","line":{"kind":"row","index":0,"cells":[[0,0],[0,1],[0,2]]},"moves":[[0,0],[1,0],[0,1],[1,1],[2,2],[2,0],[0,2]],"game_id":"K7QM3XPA2B-0123456789abcdef","ratings":null}"#;
/// `rematch_offered`.
const REMATCH_OFFERED: &str = r#"{"type":"rematch_offered"}"#;
/// A guests' `game_started` for the player who moves first, and for the other.
const STARTED: [&str; 2] = [
    r#"{"type":"game_started","room":"K7QM3XPA2B","size":3,"win":3,"you":1,"mark":"X","players":[{"name":"load-a","account":false,"bot":false,"rating":null},{"name":"load-b","account":false,"bot":false,"rating":null}],"turn":1,"resume_token":"K7QM3XPA2B82a078239b51d775a15a0535fd82a0d4","turn_timeout_ms":30000}"#,
    r#"{"type":"game_started","room":"K7QM3XPA2B","size":3,"win":3,"you":2,"mark":"O","players":[{"name":"load-a","account":false,"bot":false,"rating":null},{"name":"load-b","account":false,"bot":false,"rating":null}],"turn":1,"resume_token":"K7QM3XPA2Bcf71bbe4e2d289b334de27594e6e7676","turn_timeout_ms":30000}"#,
];

/// What one text frame from a side asks of its pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// A move; `true` if it ends the game.
    Move(bool),
    /// A rematch.
    Rematch,
}

impl Ask {
    fn of(text: &str) -> Ask {
        if text.starts_with(r#"{"type":"rematch""#) {
            Ask::Rematch
        } else {
            Ask::Move(text.ends_with(r#","last":true}"#))
        }
    }
}

/// A pair's part of the game server's flow: which side moves first, and
/// whether one side asked for a rematch.
#[derive(Debug, Default)]
struct PairState {
    /// Side b moves first (the seats swap at every rematch).
    b_first: bool,
    /// One `rematch` of two has come in.
    rematch_asked: bool,
}

impl PairState {
    /// The frames `ask` from side `from_b` gets the sides: `(to a, to b)`, in order.
    fn answer(&mut self, ask: Ask, from_b: bool) -> (Frames, Frames) {
        const NONE: Frames = &[];
        match ask {
            Ask::Move(false) => (&[MOVED], &[MOVED]),
            Ask::Move(true) => (&[MOVED, GAME_OVER], &[MOVED, GAME_OVER]),
            Ask::Rematch if !self.rematch_asked => {
                self.rematch_asked = true;
                if from_b { (&[REMATCH_OFFERED], NONE) } else { (NONE, &[REMATCH_OFFERED]) }
            }
            Ask::Rematch => {
                self.rematch_asked = false;
                self.b_first = !self.b_first;
                let (first, second): (Frames, Frames) = (&[STARTED[0]], &[STARTED[1]]);
                if self.b_first { (second, first) } else { (first, second) }
            }
        }
    }
}

/// Frames for one side, in order.
type Frames = &'static [&'static str];

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
    let mut pair = PairState::default();
    loop {
        let (from_b, msg) = tokio::select! {
            m = a.next() => (false, m),
            m = b.next() => (true, m),
        };
        match msg {
            Some(Ok(Message::Text(text))) => {
                // The sender's frames first, as the server sends them.
                let (to_a, to_b) = pair.answer(Ask::of(&text), from_b);
                let order =
                    if from_b { [(&mut b, to_b), (&mut a, to_a)] } else { [(&mut a, to_a), (&mut b, to_b)] };
                for (ws, frames) in order {
                    for &frame in frames {
                        if ws.feed(Message::Text(Utf8Bytes::from_static(frame))).await.is_err() {
                            return;
                        }
                    }
                    if ws.flush().await.is_err() {
                        return;
                    }
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
    let (inbox_tx, mut inbox) = queue::channel::<(bool, Ask)>(tictactoe_server::config::ROOM_INBOX);
    let (a_tx, a_rx) = queue::channel(outbound);
    let (b_tx, b_rx) = queue::channel(outbound);
    tracker.spawn(connection(a, false, inbox_tx.clone(), a_rx));
    tracker.spawn(connection(b, true, inbox_tx, b_rx));
    tracker.spawn(async move {
        let mut pair = PairState::default();
        while let Recv::Item((from_b, ask)) = inbox.recv().await {
            let (to_a, to_b) = pair.answer(ask, from_b);
            for (tx, frames) in [(&a_tx, to_a), (&b_tx, to_b)] {
                for &frame in frames {
                    if tx.try_send(Utf8Bytes::from_static(frame)).is_err() {
                        return;
                    }
                }
            }
        }
    });
}

/// One connection of the tasks relay: frames in go to the pair's inbox,
/// frames queued for it are written in a batch with one flush.
async fn connection(
    mut ws: WebSocketStream<TcpStream>,
    is_b: bool,
    pair: queue::Sender<(bool, Ask)>,
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
                Some(Ok(Message::Text(text))) => {
                    let ask = (is_b, Ask::of(&text));
                    if let Err(TrySendError::Full(ask)) = pair.try_send(ask) {
                        if pair.send(ask).await.is_err() {
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
