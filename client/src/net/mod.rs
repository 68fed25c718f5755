//! The connection to a server: [`Link`] owns the socket and the timers and
//! does what its [`machine::Machine`] decides (typed send and receive over
//! the protocol crate's messages, automatic resume, reconnect backoff).

mod connect;
pub mod machine;
mod pace;
mod tls;

use std::time::Instant;

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use tictactoe_protocol::{ClientMessage, Limits};

pub use connect::ConnectError;
use connect::Ws;
pub use machine::{Event, NOT_CONNECTED, SendError};
use machine::{Input, Machine, Seat, Step};
pub use tls::{CaError, tls_config, trust_ca};

/// The server URL from `--server`, `TTT_SERVER`, or the default.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878";

/// A live connection to a tictactoe server.
pub struct Link {
    url: String,
    ws: Ws,
    /// The server's limits from `welcome`.
    pub limits: Limits,
    machine: Machine,
    /// Where the seat's token is kept on disk while a game lasts, if it is.
    keep: Option<crate::seats::Seats>,
}

impl Link {
    /// Connects to `url` and reads `welcome`; the error says what to do in one line.
    pub async fn connect(url: &str) -> Result<Link, ConnectError> {
        let (ws, limits) = connect::open(url).await?;
        let machine = Machine::new(limits.clone(), Instant::now());
        Ok(Link { url: url.to_owned(), ws, limits, machine, keep: None })
    }

    /// When the grace period of a connection being re-established ends;
    /// `None` while connected.
    pub fn reconnecting(&self) -> Option<Instant> {
        self.machine.reconnecting()
    }

    /// Whether the connection is down because the server is restarting.
    pub fn restarting(&self) -> bool {
        self.machine.restarting()
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
        self.machine.resume_seat(token.clone());
        self.send(ClientMessage::Resume { token }).await
    }

    /// Keeps this client listed (for challenges) across reconnects, with
    /// nothing else to take back: it reconnects and says `hello` again.
    pub fn stay_listed(&mut self) {
        self.machine.stay_listed();
    }

    /// Sends one request. While the connection is being re-established
    /// nothing is sent ([`SendError::NotConnected`]); a send that finds the
    /// connection dropped with a seat to resume starts that.
    pub async fn send(&mut self, message: ClientMessage) -> Result<(), SendError> {
        let out = self.machine.send(message, Instant::now())?;
        if out.at > Instant::now() {
            tokio::time::sleep_until(out.at.into()).await;
        }
        match self.ws.send(Message::text(out.text)).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.machine.send_failed(&e.to_string(), Instant::now())),
        }
    }

    /// The next event. A drop during a game is resumed with the seat's token
    /// while the grace period lasts.
    ///
    /// Cancel-safe (callers race it against keys and timers): the machine
    /// changes only once an await is over, and a new socket replaces the old
    /// one only once its frames are on their way, so a cancelled attempt
    /// leaves a dead socket and the next call tries again.
    pub async fn next(&mut self) -> Event {
        loop {
            match self.machine.poll(Instant::now()) {
                Step::Read => {
                    let input = match self.ws.next().await {
                        Some(Ok(Message::Text(text))) => {
                            self.machine.handle(Input::Text(&text), Instant::now());
                            continue;
                        }
                        Some(Ok(Message::Close(frame))) => {
                            Input::Close(frame.map(|f| (u16::from(f.code), f.reason.to_string())))
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(_)) | None => Input::Dropped,
                    };
                    self.machine.handle(input, Instant::now());
                }
                Step::Yield(event) => return event,
                Step::GiveUp(gone) => return Event::Closed(gone.to_string()),
                Step::Seat(seat) => {
                    if let Some(seats) = &self.keep {
                        match seat {
                            Seat::Keep(token) => seats.keep(&token),
                            Seat::Forget => seats.forget(),
                        }
                    }
                }
                Step::Wait(at) => tokio::time::sleep_until(at.into()).await,
                Step::Reconnect(frames) => match reopen(&self.url, frames).await {
                    Some((ws, limits)) => {
                        self.ws = ws;
                        self.limits = limits.clone();
                        self.machine.reconnected(limits);
                    }
                    None => self.machine.attempt_failed(Instant::now(), rand::random::<f64>()),
                },
            }
        }
    }
}

/// The command a friend runs to take the free seat of `room` on the server
/// at `url`: this program as it was started, so that it works where `ttt`
/// is not on `PATH`.
pub fn join_command(url: &str, room: &str) -> String {
    format!("{} play --join {} --server {url}", crate::say::invoked_as(), crate::say::clean(room))
}

/// A new connection to `url` with `frames` sent on it, if it worked.
async fn reopen(url: &str, frames: Vec<String>) -> Option<(Ws, Limits)> {
    let (mut ws, limits) = connect::open(url).await.ok()?;
    for text in frames {
        ws.feed(Message::text(text)).await.ok()?;
    }
    ws.flush().await.ok()?;
    Some((ws, limits))
}
