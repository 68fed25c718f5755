//! Accepting one connection: TCP, TLS, the HTTP side or the WebSocket
//! handshake, under the connection cap and a deadline; then the session's
//! io loop ([`crate::session`]) serves it.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, info};

use crate::core::ids::ConnId;
use crate::net::http;
pub(crate) use crate::session::shared::Shared;

/// The kernel's send buffer per connection, in bytes (Linux doubles it for
/// its bookkeeping): far more than a game's frames in flight, and what a
/// client that does not read can hold of the kernel's memory, its queue's
/// frames apart.
pub const SEND_BUFFER: usize = 128 * 1024;

/// Starts the task serving one accepted TCP connection until it ends. The
/// task's future is the handshake-and-serve future itself, with nothing
/// wrapped around it (the span only when enabled): every byte of it is paid
/// by every idle connection, and every layer is walked on every wake-up.
pub(crate) fn spawn(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    place: crate::session::admission::AddressPlace,
    tracker: &TaskTracker,
) {
    let id = shared.next_conn_id();
    // Debug level: an enabled span per connection costs memory on every idle one.
    let span = tracing::debug_span!("conn", %id, %peer);
    let _ = stream.set_nodelay(true);
    // A fixed send buffer instead of the kernel's autotuned one (megabytes
    // each): a client that stops reading fills it, then its outbound queue,
    // and is dropped, holding little kernel memory meanwhile.
    let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER);
    // One deadline for the TLS and WebSocket handshakes together.
    let deadline = Instant::now() + shared.config.handshake_timeout();
    let conn = Handshaking { id, peer, deadline, shared, _place: place };
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
struct Handshaking {
    id: ConnId,
    peer: SocketAddr,
    deadline: Instant,
    shared: Arc<Shared>,
    /// Held for the connection's life: its place among its address's and
    /// the server's sockets.
    _place: crate::session::admission::AddressPlace,
}

/// Completes the TLS handshake by the deadline, then the WebSocket one.
async fn accept_tls(tls: tokio_rustls::TlsAcceptor, stream: TcpStream, conn: Handshaking) {
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
async fn accept<S>(stream: S, conn: Handshaking)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Handshaking { id, peer, deadline, shared, _place } = conn;
    // Boxed: hyper's buffers are needed only until the upgrade, and every
    // byte of this future is paid by every idle connection.
    let handshake = Box::pin(handshake(stream, shared.clone()));
    // The player's place under `--max-connections`, held while it plays.
    let (ws, _player) = tokio::select! {
        r = timeout_at(deadline, handshake) => match r {
            Ok(Some(ws)) => ws,
            Ok(None) => return,
            Err(_) => return debug!("handshake timed out"),
        },
        _ = shared.shutdown.started() => return,
    };
    let limits = shared.limits.clone();
    let mut conn = crate::net::ws::Connection::new(id, peer.ip(), ws, shared, limits);
    let why = conn.serve().await;
    info!(%id, %peer, why, "connection closed");
}

/// Serves HTTP on `stream` (hyper): a WebSocket upgrade at `/` gives the
/// socket back as a WebSocket, with any bytes read past the request;
/// anything else is answered (the API, `/healthz`, `/metrics`) until the
/// client closes or the deadline around this future ends it.
async fn handshake<S>(
    stream: S,
    shared: Arc<Shared>,
) -> Option<(WebSocketStream<S>, tokio::sync::OwnedSemaphorePermit)>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let slot = http::UpgradeSlot::default();
    let (svc_shared, svc_slot) = (shared.clone(), slot.clone());
    let service = service_fn(move |req| http::serve(req, svc_shared.clone(), svc_slot.clone()));
    // Kept alive (a 101 must not say `close`), under the handshake deadline:
    // an API client has that long for its requests on one connection.
    let served = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
    if let Err(e) = served {
        debug!("HTTP failed: {e}");
        return None;
    }
    let (pending, player) = slot.lock().unwrap_or_else(|p| p.into_inner()).upgrade.take()?;
    let upgraded = match pending.await {
        Ok(u) => u,
        Err(e) => {
            debug!("upgrade failed: {e}");
            return None;
        }
    };
    let parts = upgraded.downcast::<TokioIo<S>>().ok()?;
    let socket = parts.io.into_inner();
    let ws = WebSocketStream::from_partially_read(
        socket,
        parts.read_buf.to_vec(),
        Role::Server,
        Some(shared.ws_config),
    )
    .await;
    Some((ws, player))
}
