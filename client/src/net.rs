//! The connection to a server: connect with clear errors, typed send and
//! receive over the protocol crate's messages, and automatic resume.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use tictactoe_protocol::{ClientFrame, ClientMessage, ErrorCode, Limits, ServerMessage};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What [`Link::next`] yields.
#[derive(Debug)]
pub enum Event {
    /// A message from the server.
    Msg(ServerMessage),
    /// The connection dropped (or the server is restarting, with `restart`)
    /// and is being re-established: the next call tries.
    Down {
        /// The server closed with 1012: it is restarting.
        restart: bool,
    },
    /// The connection is back: the seat is resumed (the room's `state`
    /// follows), or the room watched or the queue waited in is asked for again.
    Resumed,
    /// The connection is gone for good, with the reason.
    Closed(String),
}

/// A live connection to a tictactoe server.
pub struct Link {
    url: String,
    ws: Ws,
    /// The server's limits from `welcome`.
    pub limits: Limits,
    token: Option<String>,
    pace: Pace,
    /// Set while the connection is down and the seat is being resumed: when
    /// the grace period ends.
    reconnecting: Option<Instant>,
    /// The server said it is restarting (close 1012): the games go on once it is back.
    restarting: bool,
    /// Without a seat: what to ask for again on a new connection — the room
    /// being watched (`spectate`), or the queue being waited in (`quick_match`).
    rejoin: Option<ClientMessage>,
    /// [`Event::Down`] was given for the drop being repaired.
    announced: bool,
    /// The last `hello` sent: said again first on every new connection, so
    /// that the client keeps its name (and its listing for challenges).
    hello: Option<ClientMessage>,
    /// Waiting to be challenged: reason enough to reconnect.
    listed: bool,
    /// Where the seat's token is kept on disk while a game lasts, if it is.
    keep: Option<crate::seats::Seats>,
}

/// Why a request was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// The connection is down and being re-established: try again after.
    NotConnected,
    /// The connection is gone for good.
    Lost(String),
}

impl From<SendError> for String {
    fn from(e: SendError) -> String {
        match e {
            SendError::NotConnected => NOT_CONNECTED.into(),
            SendError::Lost(why) => why,
        }
    }
}

/// What a request sent while reconnecting gets.
pub const NOT_CONNECTED: &str = "not connected (reconnecting): nothing was sent; try again once reconnected";

/// Keeps our sending under the server's announced rate limit (at 90% of it,
/// for margin), so that a fast bot never meets `rate_limited`.
struct Pace {
    rate: f64,
    tokens: f64,
    last: Instant,
    /// Nothing is sent before this: the server said when to retry.
    hold: Option<Instant>,
}

impl Pace {
    fn new(per_second: u32) -> Pace {
        let rate = f64::from(per_second) * 0.9;
        Pace { rate, tokens: rate.max(1.0), last: Instant::now(), hold: None }
    }

    /// Waits until one more frame is within the limit.
    async fn take(&mut self) {
        if let Some(until) = self.hold.take() {
            tokio::time::sleep_until(until.into()).await;
        }
        if self.rate <= 0.0 {
            return;
        }
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(self.rate.max(1.0));
        self.last = now;
        if self.tokens < 1.0 {
            let wait = (1.0 - self.tokens) / self.rate;
            tokio::time::sleep(Duration::from_secs_f64(wait)).await;
            self.tokens = 1.0;
            self.last = Instant::now();
        }
        self.tokens -= 1.0;
    }
}

/// What a seat that could not be resumed within the grace says.
pub const RESUME_FAILED: &str = "the connection was down for longer than the grace period";

/// What a dropped connection with no seat to resume says.
const DROPPED: &str = "the connection dropped";

/// How long to keep trying after the server said it is restarting (1012):
/// a deploy takes seconds, and the grace starts afresh once it is back.
const RESTART_WAIT: Duration = Duration::from_secs(60);

/// The longest pause between reconnect attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// The server URL from `--server`, `TTT_SERVER`, or the default.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878";

impl Link {
    /// Connects to `url` and reads `welcome`; the error is one line for a person.
    pub async fn connect(url: &str) -> Result<Link, String> {
        let (ws, limits) = open(url).await?;
        let pace = Pace::new(limits.max_messages_per_second);
        Ok(Link {
            url: url.to_owned(),
            ws,
            limits,
            token: None,
            pace,
            reconnecting: None,
            restarting: false,
            rejoin: None,
            hello: None,
            listed: false,
            announced: false,
            keep: None,
        })
    }

    /// The command a friend runs to take the free seat of `room` on this
    /// server: this program as it was started, so that it works where `ttt`
    /// is not on `PATH`.
    pub fn join_command(&self, room: &str) -> String {
        format!("{} play --join {} --server {}", crate::say::invoked_as(), crate::say::clean(room), self.url)
    }

    /// When the grace period of a connection being re-established ends;
    /// `None` while connected.
    pub fn reconnecting(&self) -> Option<Instant> {
        self.reconnecting
    }

    /// Whether the connection is down because the server is restarting.
    pub fn restarting(&self) -> bool {
        self.restarting && self.reconnecting.is_some()
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Keeps the seat's token in `seats` while each game lasts.
    pub fn keep_seats(&mut self, seats: crate::seats::Seats) {
        self.keep = Some(seats);
    }

    /// Asks for the seat of `token` back (a game from before this process).
    pub async fn resume_seat(&mut self, token: String) -> Result<(), SendError> {
        self.token = Some(token.clone());
        self.send(ClientMessage::Resume { token }).await
    }

    /// Sends one request. While the connection is being re-established
    /// nothing is sent ([`SendError::NotConnected`]); a send that finds the
    /// connection dropped with a seat to resume starts that.
    pub async fn send(&mut self, message: ClientMessage) -> Result<(), SendError> {
        if self.reconnecting.is_some() {
            return Err(SendError::NotConnected);
        }
        match &message {
            ClientMessage::Hello { .. } => self.hello = Some(message.clone()),
            ClientMessage::Spectate { .. } | ClientMessage::QuickMatch { .. } => {
                self.rejoin = Some(message.clone());
            }
            ClientMessage::Leave {} | ClientMessage::CreateRoom { .. } | ClientMessage::JoinRoom { .. } => {
                self.rejoin = None;
            }
            _ => {}
        }
        let frame = ClientFrame { id: None, message };
        let text = serde_json::to_string(&frame).map_err(|e| SendError::Lost(e.to_string()))?;
        self.pace.take().await;
        match self.ws.send(Message::text(text)).await {
            Ok(()) => Ok(()),
            Err(_) if self.can_rejoin() => {
                self.dropped(self.grace());
                Err(SendError::NotConnected)
            }
            Err(e) => Err(SendError::Lost(format!("lost the connection: {e}"))),
        }
    }

    /// Whether there is a seat to resume, a room to watch again or a queue
    /// to wait in again.
    fn can_rejoin(&self) -> bool {
        self.token.is_some() || self.rejoin.is_some() || self.listed
    }

    /// Keeps this client listed (for challenges) across reconnects, with
    /// nothing else to take back: it reconnects and says `hello` again.
    pub fn stay_listed(&mut self) {
        self.listed = true;
    }

    fn grace(&self) -> Duration {
        Duration::from_millis(self.limits.reconnect_grace_ms)
    }

    /// The connection dropped with a seat to resume: trying stops `wait`
    /// from now (set once, however many attempts are cancelled and started again).
    fn dropped(&mut self, wait: Duration) {
        self.reconnecting.get_or_insert_with(|| Instant::now() + wait);
    }

    /// The next event. A drop during a game is resumed with the seat's token
    /// while the grace period lasts.
    pub async fn next(&mut self) -> Event {
        while self.reconnecting.is_none() {
            match self.ws.next().await {
                Some(Ok(Message::Text(text))) => match ServerMessage::decode(&text) {
                    Ok(Some(msg)) => {
                        self.track(&msg);
                        return Event::Msg(msg);
                    }
                    // A newer server's message this client does not know.
                    Ok(None) => continue,
                    Err(e) => {
                        return Event::Closed(format!(
                            "the server sent something this client does not understand: {e}"
                        ));
                    }
                },
                Some(Ok(Message::Close(frame))) => {
                    if frame.as_ref().is_some_and(|f| f.code == CloseCode::Restart) && self.can_rejoin() {
                        // The game is saved and goes on once the server is back.
                        self.restarting = true;
                        self.dropped(RESTART_WAIT.max(self.grace()));
                        continue;
                    }
                    let why = frame.map_or_else(
                        || "the server closed the connection".to_owned(),
                        |f| crate::say::closed(u16::from(f.code), &f.reason),
                    );
                    // A deliberate close (shutdown, policy, size) is not a drop: no resume.
                    self.token = None;
                    return Event::Closed(why);
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => {
                    if !self.can_rejoin() {
                        return Event::Closed(DROPPED.into());
                    }
                    self.dropped(self.grace());
                }
            }
        }
        // Dropped with a seat to go back to (now, or in an attempt that was cancelled).
        if !self.announced {
            self.announced = true;
            return Event::Down { restart: self.restarting };
        }
        match self.resume().await {
            Ok(()) => Event::Resumed,
            Err(e) => Event::Closed(e),
        }
    }

    fn track(&mut self, msg: &ServerMessage) {
        match msg {
            ServerMessage::GameStarted { resume_token, .. } => {
                // A queue's wait is over: the seat is what comes back now.
                self.rejoin = None;
                self.token = Some(resume_token.to_string());
                if let Some(seats) = &self.keep {
                    seats.keep(resume_token);
                }
            }
            ServerMessage::RoomClosed { .. } | ServerMessage::Error { code: ErrorCode::RoomNotFound, .. } => {
                self.rejoin = None;
                self.forget_seat();
            }
            ServerMessage::GameOver { .. } | ServerMessage::Error { code: ErrorCode::InvalidToken, .. } => {
                self.forget_seat();
            }
            ServerMessage::Error { code: ErrorCode::RateLimited, retry_after_ms, .. } => {
                let wait = Duration::from_millis(retry_after_ms.unwrap_or(1000));
                self.pace.hold = Some(Instant::now() + wait);
            }
            _ => {}
        }
    }

    fn forget_seat(&mut self) {
        self.token = None;
        if let Some(seats) = &self.keep {
            seats.forget();
        }
    }

    /// Reconnects, says its last `hello` again (its name, and its listing
    /// for challenges), and sends `resume` (or, without a seat, `spectate` or
    /// `quick_match` again: a restart keeps no queue) until it works or the
    /// grace period ends, pausing between attempts for a
    /// random part of a doubling backoff, so that many clients do not come
    /// back in step.
    /// Cancel-safe (callers race [`Link::next`] against keys and timers): the
    /// new socket replaces the old one only once `resume` is on its way, so a
    /// cancelled attempt leaves a dead socket and the token, and the next call
    /// tries again.
    async fn resume(&mut self) -> Result<(), String> {
        let message = match (&self.token, &self.rejoin) {
            (Some(token), _) => Some(ClientMessage::Resume { token: token.clone() }),
            (None, Some(again)) => Some(again.clone()),
            (None, None) if self.listed => None,
            (None, None) => return Err(DROPPED.into()),
        };
        let frame = |message: &ClientMessage| {
            serde_json::to_string(&ClientFrame { id: None, message: message.clone() })
                .map_err(|e| e.to_string())
        };
        let texts: Vec<String> =
            self.hello.iter().chain(message.iter()).map(frame).collect::<Result<_, _>>()?;
        let until = self.reconnecting.unwrap_or_else(Instant::now);
        let mut wait = Duration::from_millis(100);
        while Instant::now() < until {
            if let Ok((mut ws, limits)) = open(&self.url).await {
                let mut sent = true;
                for text in &texts {
                    sent = sent && ws.feed(Message::text(text.clone())).await.is_ok();
                }
                if sent && ws.flush().await.is_ok() {
                    self.ws = ws;
                    self.limits = limits;
                    self.reconnecting = None;
                    self.restarting = false;
                    self.announced = false;
                    return Ok(());
                }
            }
            tokio::time::sleep(wait.mul_f64(0.5 + rand::random::<f64>() / 2.0)).await;
            wait = (wait * 2).min(MAX_BACKOFF);
        }
        let seated = self.token.is_some();
        self.token = None;
        self.rejoin = None;
        self.reconnecting = None;
        self.announced = false;
        Err(if seated { RESUME_FAILED.into() } else { DROPPED.into() })
    }
}

/// The TLS set-up for `wss://` when `--ca-cert` names a private CA; without
/// it, `wss://` trusts the public web PKI (webpki roots).
static CONNECTOR: OnceLock<Connector> = OnceLock::new();

/// Trusts only the CA certificate(s) in the PEM file at `path` for `wss://`.
pub fn trust_ca(path: &Path) -> Result<(), String> {
    let bad = |e: &dyn std::fmt::Display| format!("--ca-cert {}: {e}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| bad(&e))?;
    if certs.is_empty() {
        return Err(bad(&"no certificate in the file"));
    }
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|e| bad(&e))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(&e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let _ = CONNECTOR.set(Connector::Rustls(Arc::new(config)));
    Ok(())
}

/// The TLS client configuration for `https://` API calls: the private CA of
/// `--ca-cert` if given, else the public web PKI.
pub fn tls_config() -> Result<rustls::ClientConfig, String> {
    if let Some(Connector::Rustls(config)) = CONNECTOR.get() {
        return Ok((**config).clone());
    }
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

async fn open(url: &str) -> Result<(Ws, Limits), String> {
    if !url.starts_with("ws://") && !url.starts_with("wss://") {
        return Err(format!("{url:?} is not a server URL; use ws://HOST:PORT or wss://HOST:PORT"));
    }
    let connect = tokio_tungstenite::connect_async_tls_with_config(url, None, true, CONNECTOR.get().cloned());
    let (mut ws, _) = connect.await.map_err(|e| match e {
        WsError::Io(io) if io.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) => {
            format!("cannot connect to {url}: TLS: {io} (a server with a private CA needs --ca-cert)")
        }
        WsError::Tls(e) => format!("cannot connect to {url}: TLS: {e}"),
        WsError::Io(io) => {
            format!("cannot reach the server at {url}: {io} (is ttt-server running?)")
        }
        WsError::Http(resp) => {
            format!("{url} is not a tictactoe server (HTTP {})", resp.status())
        }
        WsError::Url(e) => format!("{url:?} is not a valid server URL: {e}"),
        other => format!("cannot connect to {url}: {other}"),
    })?;
    let first = tokio::time::timeout(Duration::from_secs(10), ws.next())
        .await
        .map_err(|_| format!("{url} did not greet us within 10 s"))?;
    match first {
        Some(Ok(Message::Text(text))) => match ServerMessage::decode(&text) {
            Ok(Some(ServerMessage::Welcome { limits, .. })) => Ok((ws, limits)),
            _ => Err(format!("{url} is not a tictactoe server (no welcome)")),
        },
        _ => Err(format!("{url} closed the connection before greeting")),
    }
}
