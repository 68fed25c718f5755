//! One WebSocket connection: accepting it (TCP, TLS, the WebSocket handshake,
//! under the connection cap and a deadline) here; where it is between lobby
//! and rooms in [`membership`]; its read/write loop in `io`; its requests in
//! `request`.

mod io;
pub mod membership;
mod request;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::time::{Instant, timeout_at};
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, info};

use crate::cmd::LobbyCmd;
use crate::config::Config;
use crate::room::ConnId;
use crate::signal::Shutdown;
use crate::stats::Stats;

/// What every connection task shares: configuration, the lobby's inbox, counters.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) ws_config: WebSocketConfig,
    pub(crate) lobby: mpsc::Sender<LobbyCmd>,
    pub(crate) stats: Arc<Stats>,
    pub(crate) shutdown: Shutdown,
    /// The `welcome` frame, serialized once.
    pub(crate) welcome: Utf8Bytes,
    pub(crate) next_id: AtomicU64,
    /// Present when the server speaks `wss://`.
    pub(crate) tls: Option<tokio_rustls::TlsAcceptor>,
    /// Accounts and records.
    pub(crate) store: crate::store::Store,
    /// Ratings of the accounts signed in since the server started.
    pub(crate) book: Arc<crate::ratings::RatingBook>,
}

impl Shared {
    fn next_conn_id(&self) -> ConnId {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// Starts the task serving one accepted TCP connection until it ends. The
/// task's future is the handshake-and-serve future itself, with nothing
/// wrapped around it (the span only when enabled): every byte of it is paid
/// by every idle connection, and every layer is walked on every wake-up.
pub(crate) fn spawn(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    permit: OwnedSemaphorePermit,
    tracker: &TaskTracker,
) {
    let id = shared.next_conn_id();
    // Debug level: an enabled span per connection costs memory on every idle one.
    let span = tracing::debug_span!("conn", id, %peer);
    let _ = stream.set_nodelay(true);
    // One deadline for the TLS and WebSocket handshakes together.
    let deadline = Instant::now() + shared.config.handshake_timeout();
    let conn = Accepted { id, peer, deadline, shared, _permit: permit };
    // Each kind spawned as itself: every wrapper around the future is a
    // layer more to walk, and a cache line more to miss, on every wake-up.
    match (conn.shared.tls.clone(), span.is_disabled()) {
        (None, true) => tracker.spawn(accept(stream, conn)),
        (None, false) => tracker.spawn(accept(stream, conn).instrument(span)),
        // Boxed: a TLS session is several KB, which plain connections must
        // not carry in their futures.
        (Some(tls), true) => tracker.spawn(Box::pin(accept_tls(tls, stream, conn))),
        (Some(tls), false) => tracker.spawn(Box::pin(accept_tls(tls, stream, conn)).instrument(span)),
    };
}

/// An accepted connection on its way through the handshakes.
struct Accepted {
    id: ConnId,
    peer: SocketAddr,
    deadline: Instant,
    shared: Arc<Shared>,
    /// Held for the connection's life: its place under `--max-connections`.
    _permit: OwnedSemaphorePermit,
}

/// Completes the TLS handshake by the deadline, then the WebSocket one.
async fn accept_tls(tls: tokio_rustls::TlsAcceptor, stream: TcpStream, conn: Accepted) {
    let stream = tokio::select! {
        r = timeout_at(conn.deadline, tls.accept(stream)) => match r {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return debug!("TLS handshake failed: {e}"),
            Err(_) => return debug!("TLS handshake timed out"),
        },
        _ = conn.shared.shutdown.started() => return,
    };
    accept(stream, conn).await
}

/// Completes the WebSocket handshake on `stream` by the deadline, then serves it.
async fn accept<S>(stream: S, conn: Accepted)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Accepted { id, peer, deadline, shared, _permit } = conn;
    let handshake =
        tokio_tungstenite::accept_hdr_async_with_config(stream, check_path, Some(shared.ws_config));
    let ws = tokio::select! {
        r = timeout_at(deadline, handshake) => match r {
            Ok(Ok(ws)) => ws,
            Ok(Err(e)) => return debug!("handshake failed: {e}"),
            Err(_) => return debug!("handshake timed out"),
        },
        _ = shared.shutdown.started() => return,
    };
    let mut conn = io::Connection::new(id, ws, shared);
    let why = conn.serve().await;
    info!(id, %peer, why, "connection closed");
}

#[allow(clippy::result_large_err)]
fn check_path(req: &Request, resp: Response) -> Result<Response, ErrorResponse> {
    if req.uri().path() == "/" {
        return Ok(resp);
    }
    let mut err = ErrorResponse::new(Some("tictactoe speaks WebSocket at path /\n".into()));
    *err.status_mut() = http::StatusCode::NOT_FOUND;
    Err(err)
}
