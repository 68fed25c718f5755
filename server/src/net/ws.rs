//! A connection's shell: the WebSocket read/write loop around its
//! [`Session`]. Frames in go to the session; what it says comes out as
//! frames written, requests handed to the lobby or a room, and questions to
//! the store; its outbound queue out, keep-alive pings, and the close.

use std::future::poll_fn;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::{Instant, timeout};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tracing::debug;

use tictactoe_protocol::ServerMessage;

use crate::cmd::{ConnHandle, LobbyCmd, Outbound, encode};
use crate::config::{CLOSE_LINGER, HANDOVER, WRITE_BATCH};
use crate::core::ids::ConnId;
use crate::core::queue::{self, Recv};
use crate::core::signal::Armed;
use crate::core::stats::Gauge;
use crate::session::{Action, End, Frame, Limits, Session, Shared, World};

mod actions;

use actions::send_lobby;

/// One open connection, owned by its task.
pub(crate) struct Connection<S> {
    session: Session,
    ws: WebSocketStream<S>,
    /// The outbound queue; a sender that finds it full kills it.
    rx: queue::Receiver<Outbound>,
    /// This connection's handle, cloned into lobby and room requests; dropped
    /// at shutdown so that the queue closes once every room has let go.
    me: Option<ConnHandle>,
    shared: Arc<Shared>,
    /// When the unanswered ping went out: its pong measures the lag a
    /// Fischer clock credits this connection's moves.
    ping_sent: Option<Instant>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// A connection over an open WebSocket.
    pub(crate) fn new(
        id: ConnId,
        ip: std::net::IpAddr,
        ws: WebSocketStream<S>,
        shared: Arc<Shared>,
        limits: Arc<Limits>,
    ) -> Self {
        let (tx, rx) = queue::channel(shared.config.outbound_queue);
        Connection {
            session: Session::new(id, ip, limits, Instant::now()),
            ws,
            rx,
            me: Some(ConnHandle::new(id, tx).with_ip(ip)),
            shared,
            ping_sent: None,
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
                        Some(Err(WsError::Capacity(_))) => Some(End::Close(1009, "message too big")),
                        Some(Err(WsError::Utf8(_))) => Some(End::Close(1007, "text frame is not valid UTF-8")),
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
                        // The oldest unanswered ping: its pong comes first.
                        self.ping_sent.get_or_insert_with(Instant::now);
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

    /// What the session reads about the world.
    fn world(&self) -> World {
        World { can_write: self.shared.store.can_write(), store_enabled: self.shared.store.enabled() }
    }

    /// Handles one message from the client, received at `now`.
    async fn on_message(&mut self, msg: Message, now: Instant) -> Option<End> {
        // tungstenite answers pings itself.
        let frame = match &msg {
            Message::Text(text) => Frame::Text(text.as_str()),
            Message::Binary(_) => Frame::Binary,
            Message::Close(_) => return Some(End::Closed),
            Message::Pong(_) => {
                if let Some(sent) = self.ping_sent.take() {
                    self.session.measured(now.saturating_duration_since(sent));
                }
                Frame::Control
            }
            Message::Ping(_) => Frame::Control,
            Message::Frame(_) => return None,
        };
        let store = &self.shared.store;
        let world = || World { can_write: store.can_write(), store_enabled: store.enabled() };
        let actions = self.session.on_frame(frame, now, world);
        drop(msg);
        self.carry_out(actions).await
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
                    let actions = self.session.on_signal(signal);
                    if let Some(end) = self.signal_actions(actions) {
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
    /// when the client stops reading), or when one write has waited two ping
    /// intervals: a client that stops reading holds its send buffer and
    /// queue no longer than a silent one holds its place.
    async fn guarded<'a, F, Fut>(&'a mut self, op: F) -> Result<(), End>
    where
        F: FnOnce(&'a mut WebSocketStream<S>) -> Fut,
        Fut: Future<Output = Result<(), WsError>> + 'a,
    {
        let stall = 2 * self.shared.config.ping_interval();
        let (ws, rx) = (&mut self.ws, &self.rx);
        let mut op = std::pin::pin!(op(ws));
        // The usual case, a socket with room: no timer armed.
        if let std::task::Poll::Ready(r) = futures::poll!(op.as_mut()) {
            return r.map_err(|_| End::Gone);
        }
        tokio::select! {
            biased;
            r = op => r.map_err(|_| End::Gone),
            _ = rx.killed() => Err(End::Drop),
            _ = tokio::time::sleep(stall) => {
                debug!("the client took nothing for two ping intervals; dropping");
                Err(End::Drop)
            }
        }
    }

    /// Writes one message and flushes.
    async fn write(&mut self, msg: Message) -> Option<End> {
        self.guarded(|ws| ws.send(msg)).await.err()
    }

    /// Writes one server message (an error is counted by its code).
    async fn reply(&mut self, msg: &ServerMessage) -> Option<End> {
        if let ServerMessage::Error { code, .. } = msg {
            crate::metrics::refused(*code);
        }
        self.write(Message::Text(encode(msg))).await
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
            // In a cluster, another instance holds the games before this
            // connection is told to come back.
            if let Some(handed_over) = &self.shared.handed_over {
                let _ = tokio::time::timeout(HANDOVER, handed_over.cancelled()).await;
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
            let actions = self.session.on_signal(item);
            let _ = self.signal_actions(actions);
        }
        let actions = self.session.close();
        for action in actions {
            match action {
                Action::Lobby(ask) => {
                    if let Some(conn) = self.me.clone() {
                        send_lobby(&self.shared.lobby, LobbyCmd::Ask { conn, ask }).await;
                    }
                }
                Action::RoomLastWord(link, cmd) => {
                    let _ = link.force_send(cmd);
                }
                other => debug!(?other, "closing asked for what it never asks"),
            }
        }
        match end {
            End::Close(code, reason) => self.close(CloseCode::from(code), reason).await,
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
