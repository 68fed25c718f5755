//! The baseline for the load generator: a bare tokio-tungstenite server with
//! the game server's frame pattern and no game logic. Connections are paired
//! in arrival order; every text frame from either side is answered with one
//! `moved`-sized frame to both. Same socket settings as `ttt-server`.

use std::future::Future;

use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_util::task::TaskTracker;

/// A frame the size of a typical `moved`.
const MOVED: &str =
    r#"{"type":"moved","room":"K7QM3XPA2B","row":1,"col":2,"player":1,"seq":5,"next":2,"clock_ms":30000}"#;

/// Serves the relay on `listener` until `shutdown` completes.
pub async fn serve_relay(listener: TcpListener, shutdown: impl Future<Output = ()>) {
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
            Some(first) => {
                tracker.spawn(relay_pair(first, ws));
            }
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
