//! A connection's read/write loop: frames in (limits, decoding, requests to
//! the lobby or a room), its outbound queue out, keep-alive pings, and the
//! close.

use std::future::poll_fn;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::{Instant, timeout};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};
use tracing::debug;

use tictactoe_protocol::{ClientFrame, ErrorCode, RequestId, ServerMessage, peek_id};

use super::Shared;
use super::membership::{Effect, Membership};
use crate::cluster::ConnId;
use crate::cmd::Request as RoomRequest;
use crate::cmd::encode;
use crate::cmd::{ConnHandle, LobbyCmd, Outbound, RoomCmd};
use crate::config::{CLOSE_LINGER, WRITE_BATCH};
use crate::lobby::presence::{Presence, Status};
use crate::net::queue::{self, Recv};
use crate::net::rate::{RateLimit, Verdict};
use crate::session::account::Identity;
use crate::signal::Armed;
use crate::stats::Gauge;

/// Why the read/write loop ended.
pub(super) enum End {
    /// The socket failed or ended without a close frame.
    Gone,
    /// The client sent a close frame: it is answered with its own code.
    Closed,
    /// Server shutdown: deliver what is queued, then close with 1012 (games
    /// saved, come back) or, without a database, 1001.
    Shutdown,
    /// Close with this code.
    Close(CloseCode, &'static str),
    /// Drop without ceremony (slow or silent client).
    Drop,
}

/// One open connection, owned by its task.
pub(crate) struct Connection<S> {
    pub(super) id: ConnId,
    /// The peer's address: registrations are limited per address.
    pub(super) ip: std::net::IpAddr,
    ws: WebSocketStream<S>,
    /// The outbound queue; a sender that finds it full kills it.
    rx: queue::Receiver<Outbound>,
    /// This connection's handle, cloned into lobby and room requests; dropped
    /// at shutdown so that the queue closes once every room has let go.
    pub(super) me: Option<ConnHandle>,
    /// Who the connection is: a guest's name, or a signed-in account.
    pub(super) who: Arc<Identity>,
    pub(super) membership: Membership,
    /// Where the connection is, for the lobby's directory: made when it is
    /// first listed (its `hello`).
    pub(super) presence: Option<Arc<Presence>>,
    /// The status last written to `presence`.
    pub(super) shown: Status,
    rate: RateLimit,
    pub(super) shared: Arc<Shared>,
}

impl End {
    fn describe(&self) -> &'static str {
        match self {
            End::Gone => "client left",
            End::Closed => "client closed",
            End::Shutdown => "server shutdown",
            End::Close(_, reason) => reason,
            End::Drop => "client too slow or silent",
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// A connection over an open WebSocket.
    pub(crate) fn new(id: ConnId, ip: std::net::IpAddr, ws: WebSocketStream<S>, shared: Arc<Shared>) -> Self {
        let (tx, rx) = queue::channel(shared.config.outbound_queue);
        Connection {
            id,
            ip,
            ws,
            rx,
            me: Some(ConnHandle::new(id, tx)),
            who: Identity::anonymous(),
            membership: Membership::default(),
            presence: None,
            shown: Status::Idle,
            rate: RateLimit::new(shared.config.max_messages_per_second),
            shared,
        }
    }

    /// Serves the connection until it closes; says why it ended. By
    /// reference: a connection moved into this future would be stored twice
    /// in it, and every byte of it is paid by every idle connection.
    pub(crate) async fn serve(&mut self) -> &'static str {
        let stats = self.shared.stats.clone();
        let _gauge = Gauge::up(&stats.connections);
        debug!("connected");
        let end = self.run().await;
        let why = end.describe();
        self.finish(end).await;
        why
    }

    async fn run(&mut self) -> End {
        if self.ws.send(Message::Text(self.shared.welcome.clone())).await.is_err() {
            return End::Gone;
        }
        let interval = self.shared.config.ping_interval();
        // The first ping comes at a random point of the second half of the
        // interval: connections opened together (a reconnect storm, a load
        // test) must not all be pinged in the same instant ever after.
        let first = interval.mul_f64(0.5 + rand::random::<f64>() / 2.0);
        let ping = tokio::time::sleep_until(Instant::now() + first);
        let mut last_heard = Instant::now();
        // Created once: a fresh waiter per turn would register (and remove)
        // itself under a lock on every message.
        let shutdown = self.shared.shutdown.waiter();
        tokio::pin!(ping, shutdown);
        let (mut ping_armed, mut shutdown_armed) = (Armed::default(), Armed::default());
        loop {
            let end = tokio::select! {
                // Work first, and tokio's co-operative budget makes ready work
                // yield within 128 operations; the timer and shutdown are
                // polled only when they may have fired.
                biased;
                item = self.rx.recv() => match item {
                    Recv::Item(item) => self.write_batch(item).await,
                    Recv::Ended => Some(End::Gone),
                    Recv::Killed => Some(End::Drop),
                },
                msg = self.ws.next() => {
                    last_heard = Instant::now();
                    match msg {
                        Some(Ok(msg)) => self.on_message(msg, last_heard).await,
                        Some(Err(WsError::Capacity(_))) => Some(End::Close(CloseCode::Size, "message too big")),
                        Some(Err(WsError::Utf8(_))) => Some(End::Close(CloseCode::Invalid, "text frame is not valid UTF-8")),
                        Some(Err(_)) | None => Some(End::Gone),
                    }
                }
                _ = poll_fn(|cx| {
                    let due = ping.is_elapsed();
                    ping_armed.poll(ping.as_mut(), due, cx)
                }) => {
                    let next = ping.deadline() + interval;
                    ping.as_mut().reset(next);
                    if last_heard.elapsed() >= 2 * interval {
                        debug!("no answer to pings; dropping");
                        Some(End::Drop)
                    } else {
                        self.write(Message::Ping(Default::default())).await
                    }
                }
                _ = poll_fn(|cx| shutdown_armed.poll(shutdown.as_mut(), self.shared.shutdown.is_stopping(), cx)) => {
                    Some(End::Shutdown)
                }
            };
            if let Some(end) = end {
                return end;
            }
        }
    }

    /// Writes `first` and whatever else is queued, then flushes once.
    async fn write_batch(&mut self, first: Outbound) -> Option<End> {
        let mut item = first;
        for n in 1..=WRITE_BATCH {
            match item {
                Outbound::Frame(frame) => {
                    if let Err(end) = self.guarded(|ws| ws.feed(Message::Text(frame))).await {
                        return Some(end);
                    }
                }
                signal => {
                    if let Some(end) = self.on_signal(signal) {
                        return Some(end);
                    }
                }
            }
            if n == WRITE_BATCH {
                break;
            }
            // A killed queue is noticed by the next `recv`.
            match self.rx.try_recv() {
                Some(Recv::Item(next)) => item = next,
                _ => break,
            }
        }
        self.guarded(|ws| ws.flush()).await.err()
    }

    /// Runs a write, giving up when the client is dropped (a write blocks only
    /// when the client stops reading).
    async fn guarded<'a, F, Fut>(&'a mut self, op: F) -> Result<(), End>
    where
        F: FnOnce(&'a mut WebSocketStream<S>) -> Fut,
        Fut: Future<Output = Result<(), WsError>> + 'a,
    {
        let (ws, rx) = (&mut self.ws, &self.rx);
        tokio::select! {
            biased;
            r = op(ws) => r.map_err(|_| End::Gone),
            _ = rx.killed() => Err(End::Drop),
        }
    }

    /// Writes one message and flushes.
    async fn write(&mut self, msg: Message) -> Option<End> {
        self.guarded(|ws| ws.send(msg)).await.err()
    }

    /// Writes one server message, serialized by the caller: a message kept
    /// across the write would make every connection's future larger.
    pub(super) async fn reply(&mut self, frame: Utf8Bytes) -> Option<End> {
        self.write(Message::Text(frame)).await
    }

    /// Applies a lobby or room signal to the connection's membership and
    /// carries out what follows, never waiting (this runs inside a write batch).
    fn on_signal(&mut self, item: Outbound) -> Option<End> {
        let effect = self.membership.signal(item);
        self.sync_presence();
        match effect {
            Effect::Replaced => Some(End::Close(CloseCode::Library(4000), "replaced")),
            effect => {
                self.tell_room(effect);
                None
            }
        }
    }

    /// Claims the connection for a request of its own that puts it in a
    /// game; false when the lobby has just claimed it for a challenge it
    /// sent. Unlisted connections cannot be claimed by the lobby.
    pub(super) fn claim(&mut self) -> bool {
        let Some(p) = &self.presence else { return true };
        if self.membership.status() != Status::Idle {
            return true;
        }
        match p.swap(Status::Idle, Status::Pending) {
            Ok(()) => {
                self.shown = Status::Pending;
                self.report(Status::Idle, Status::Pending);
                true
            }
            Err(found) => {
                self.shown = found;
                found != Status::Drafted
            }
        }
    }

    /// The connection moved from `old` to `new`: with open challenges, the
    /// lobby hears it and ends those that cannot be played now: all of
    /// them when a game starts, those it sent when it leaves idle (a
    /// challenger is drafted only from idle; a player waiting for a game
    /// may still accept). Statuses are written before the count is read,
    /// as the lobby counts a challenge before it reads statuses.
    fn report(&self, old: Status, new: Status) {
        use tictactoe_protocol::OnlineStatus::Playing;
        let all = new.shown() == Playing && old.shown() != Playing;
        let left_idle = old == Status::Idle && new != Status::Idle;
        if !all && !left_idle {
            return;
        }
        if self.presence.as_ref().is_some_and(|p| p.challenges() > 0) {
            // Lost only when the lobby is overwhelmed; an accept then finds
            // the challenger busy and ends the challenge.
            let _ = self.shared.lobby.try_send(LobbyCmd::Engaged { conn: self.id, all });
        }
    }

    /// Writes where the connection now is for the lobby; one that left idle
    /// with open challenges tells the lobby, which ends them.
    pub(super) fn sync_presence(&mut self) {
        let Some(p) = &self.presence else { return };
        let now = self.membership.status();
        if now == self.shown {
            return;
        }
        match p.swap(self.shown, now) {
            Ok(()) => {
                let old = std::mem::replace(&mut self.shown, now);
                self.report(old, now);
            }
            // Drafted: the room's signal is on its way, and this runs again.
            Err(found) => self.shown = found,
        }
    }

    /// Carries out a room's part of an effect without waiting: a room's inbox
    /// takes a connection's last word past its capacity.
    fn tell_room(&self, effect: Effect) {
        let conn = self.id;
        let _ = match effect {
            Effect::Leave(tx) => {
                tx.force_send(RoomCmd::Request { conn, request: RoomRequest::Leave, id: None })
            }
            Effect::Disconnect(tx) => tx.force_send(RoomCmd::Disconnected { conn }),
            Effect::None | Effect::Replaced | Effect::Cancel(_) => Ok(()),
        };
    }

    /// Carries out an effect of `leave` or of the connection's end.
    pub(super) async fn apply(&self, effect: Effect) {
        match effect {
            Effect::Cancel(rules) => self.send_lobby(LobbyCmd::Cancel { conn: self.id, rules }).await,
            effect => self.tell_room(effect),
        }
    }

    /// Handles one message from the client, received at `now`.
    async fn on_message(&mut self, msg: Message, now: Instant) -> Option<End> {
        // tungstenite answers pings itself; pongs only prove the client is
        // alive. Both count toward the limit (a ping flood costs as much as
        // any other), but a refused one gets no `error`.
        let (text, control) = match msg {
            Message::Text(text) => (Some(text), false),
            Message::Binary(_) => (None, false),
            Message::Close(_) => return Some(End::Closed),
            Message::Ping(_) | Message::Pong(_) => (None, true),
            Message::Frame(_) => return None,
        };
        match self.rate.check(now) {
            Verdict::Allow | Verdict::Refuse(_) if control => return None,
            Verdict::Allow => {}
            Verdict::Refuse(wait) => {
                let id = text.as_deref().and_then(peek_id);
                let rate = self.shared.config.max_messages_per_second;
                let retry_after_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
                let message = format!(
                    "more than {rate} messages per second; wait {retry_after_ms} ms, slow down, or be disconnected"
                );
                let error = ServerMessage::Error {
                    code: ErrorCode::RateLimited,
                    message,
                    id,
                    retry_after_ms: Some(retry_after_ms),
                };
                return self.reply(encode(&error)).await;
            }
            Verdict::Close => return Some(End::Close(CloseCode::Policy, "rate limit exceeded")),
        }
        let Some(text) = text else {
            let text = "binary frames are not supported; send JSON text frames";
            return self.reply(refusal(ErrorCode::BadMessage, text, None)).await;
        };
        match ClientFrame::decode(&text) {
            Ok(frame) => {
                let end = self.on_request(frame.message, frame.id).await;
                self.sync_presence();
                end
            }
            Err(e) => self.reply(refusal(ErrorCode::BadMessage, e.message, e.id)).await,
        }
    }

    /// Leaves the lobby and rooms, then closes the socket as `end` says.
    async fn finish(&mut self, end: End) {
        if let End::Shutdown = end {
            // Rooms end their games and let go; deliver their last words.
            self.me = None;
            let deadline = Instant::now() + self.shared.config.shutdown_grace();
            while let Ok(Recv::Item(item)) = tokio::time::timeout_at(deadline, self.rx.recv()).await {
                if let Outbound::Frame(frame) = item {
                    if self.ws.feed(Message::Text(frame)).await.is_err() {
                        break;
                    }
                }
            }
            // With a database that works the games go on after the restart:
            // 1012 says to come back; otherwise 1001 says the server is going away.
            return if self.shared.store.healthy() {
                self.close(CloseCode::Restart, "server restarting").await
            } else {
                self.close(CloseCode::Away, "server shutting down").await
            };
        }
        // Signals that arrived too late to be read still say where it is.
        for item in self.rx.close() {
            let effect = self.membership.signal(item);
            self.tell_room(effect);
        }
        let effect = self.membership.close();
        self.apply(effect).await;
        if self.presence.is_some() {
            self.send_lobby(LobbyCmd::Offline { conn: self.id }).await;
        }
        match end {
            End::Close(code, reason) => self.close(code, reason).await,
            // tungstenite queued the reply (the client's own code) when it
            // read the close frame: sending it completes the handshake.
            End::Closed => {
                let _ = timeout(CLOSE_LINGER, self.ws.flush()).await;
                let _ = timeout(CLOSE_LINGER, self.ws.get_mut().shutdown()).await;
            }
            End::Gone | End::Drop | End::Shutdown => {}
        }
    }

    /// Sends a close frame, then lingers briefly so the peer reads it before
    /// the socket goes (closing with unread input would reset the connection).
    async fn close(&mut self, code: CloseCode, reason: &'static str) {
        let frame = CloseFrame { code, reason: reason.into() };
        let _ = timeout(CLOSE_LINGER, self.ws.close(Some(frame))).await;
        let tcp = self.ws.get_mut();
        let _ = tcp.shutdown().await;
        let mut buf = [0u8; 1024];
        let deadline = Instant::now() + CLOSE_LINGER;
        while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, tcp.read(&mut buf)).await {
            if n == 0 {
                break;
            }
        }
    }
}

/// An `error` reply, serialized.
pub(super) fn refusal(code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) -> Utf8Bytes {
    crate::net::metrics::refused(code);
    encode(&ServerMessage::error(code, message, id))
}
