//! The connection to a server: [`Link`] owns the socket and the timers and
//! does what its [`machine::Machine`] decides (typed send and receive over
//! the protocol crate's messages, automatic resume, reconnect backoff).

mod connect;
pub mod machine;
mod pace;

use std::time::Instant;

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use tictactoe_protocol::{ClientMessage, Limits};

pub use connect::ConnectError;
use connect::Ws;
/// Opens a bare WebSocket to one server, past its `welcome`, for a caller
/// that speaks the protocol itself (the arena's host, whose requests are
/// newer than this client's typed messages).
pub use connect::open as open_ws;
pub use machine::{Event, Gone, NOT_CONNECTED, SendError};
use machine::{Input, Machine, Seat, Step};

/// A live connection to a tictactoe server.
pub struct Link {
    /// The servers to try, in turn (the `--server` list).
    servers: Vec<String>,
    /// Which of them this connection is to.
    at: usize,
    ws: Ws,
    /// The server's limits from `welcome`.
    pub limits: Limits,
    machine: Machine,
    /// Where the seat's token is kept on disk while a game lasts, if it is.
    keep: Option<crate::seats::Seats>,
    /// A reconnect under way: kept across calls, so that a caller that
    /// races [`Link::next`] against a short timer (the screen redraws every
    /// 200 ms) does not restart a slow handshake each time and never finish.
    attempt: Option<Attempt>,
}

/// A new connection being opened, with its first frames: the socket, the
/// server's limits, and which of the servers answered.
type Attempt = std::pin::Pin<Box<dyn std::future::Future<Output = Option<(Ws, Limits, usize)>> + Send>>;

impl Link {
    /// Connects to the first of `servers` (a comma-separated list of URLs)
    /// that answers, trying them in turn, and reads `welcome`; the error
    /// says what to do in one line.
    pub async fn connect(servers: &str) -> Result<Link, ConnectError> {
        let servers = crate::servers::urls(servers);
        let (ws, limits, at) = open_any(&servers).await?;
        let machine = Machine::new(limits.clone(), Instant::now());
        Ok(Link { servers, at, ws, limits, machine, keep: None, attempt: None })
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

    /// All the servers to try, as `--server` takes them (comma-separated),
    /// the one this connection is to first.
    pub fn servers(&self) -> String {
        let (before, from) = self.servers.split_at(self.at);
        from.iter().chain(before).cloned().collect::<Vec<_>>().join(",")
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
    /// changes only once an await is over, and a reconnect under way is
    /// kept, so the next call goes on with it.
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
                Step::GiveUp(gone) => return Event::Closed(gone),
                Step::Seat(seat) => {
                    if let Some(seats) = &self.keep {
                        match seat {
                            Seat::Keep(token, mark) => seats.keep(&token, Some(mark)),
                            Seat::Forget => seats.forget(),
                        }
                    }
                }
                Step::Wait(at) => tokio::time::sleep_until(at.into()).await,
                Step::Reconnect(frames) => {
                    let (servers, at) = (self.servers.clone(), self.at);
                    let attempt = self.attempt.get_or_insert_with(|| Box::pin(reopen(servers, at, frames)));
                    let opened = attempt.await;
                    self.attempt = None;
                    match opened {
                        Some((ws, limits, at)) => {
                            self.ws = ws;
                            self.at = at;
                            self.limits = limits.clone();
                            self.machine.reconnected(limits);
                        }
                        None => self.machine.attempt_failed(Instant::now(), rand::random::<f64>()),
                    }
                }
            }
        }
    }
}

/// Opens a connection to the first of `servers` that answers, trying each
/// in turn: the socket, the limits, and which answered.
async fn open_any(servers: &[String]) -> Result<(Ws, Limits, usize), ConnectError> {
    let mut failed = Vec::new();
    for (at, url) in servers.iter().enumerate() {
        match connect::open(url).await {
            Ok((ws, limits)) => return Ok((ws, limits, at)),
            Err(e) => failed.push(e),
        }
    }
    Err(ConnectError::all(failed))
}

/// A new connection to the first of `servers` that answers (from the one
/// at `from`, the last one used) with `frames` sent on it, if one worked.
async fn reopen(servers: Vec<String>, from: usize, frames: Vec<String>) -> Option<(Ws, Limits, usize)> {
    for i in 0..servers.len() {
        let at = (from + i) % servers.len();
        let Ok((mut ws, limits)) = connect::open(&servers[at]).await else { continue };
        let mut sent = true;
        for text in &frames {
            sent = sent && ws.feed(Message::text(text.clone())).await.is_ok();
        }
        if sent && ws.flush().await.is_ok() {
            return Some((ws, limits, at));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tictactoe_protocol::{PROTOCOL_VERSION, ServerMessage};
    use tokio::net::TcpListener;

    /// A server whose first connection drops once the client said hello,
    /// and whose handshakes after that take `slow`.
    async fn flaky_server(slow: Duration) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("ws://{}", listener.local_addr().expect("addr"));
        let welcome = serde_json::to_string(&ServerMessage::Welcome {
            protocol: PROTOCOL_VERSION,
            server: "flaky".into(),
            limits: crate::fixtures::limits(Duration::from_secs(30)),
        })
        .expect("welcome");
        tokio::spawn(async move {
            let mut first = true;
            while let Ok((tcp, _)) = listener.accept().await {
                let (welcome, drop_it) = (welcome.clone(), std::mem::replace(&mut first, false));
                tokio::spawn(async move {
                    if !drop_it {
                        tokio::time::sleep(slow).await;
                    }
                    let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else { return };
                    let _ = ws.send(Message::text(welcome)).await;
                    // Reads until the client goes; the first connection goes after one frame.
                    while let Some(Ok(_)) = ws.next().await {
                        if drop_it {
                            return;
                        }
                    }
                });
            }
        });
        url
    }

    #[tokio::test]
    async fn a_slow_reconnect_survives_a_caller_that_stops_waiting_every_200_ms() {
        let url = flaky_server(Duration::from_millis(700)).await;
        let mut link = Link::connect(&url).await.expect("connect");
        link.stay_listed();
        link.send(ClientMessage::Hello { name: "ann".into(), protocol: None, token: None })
            .await
            .expect("hello");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut events = Vec::new();
        while tokio::time::Instant::now() < deadline {
            // As the screen does: the next event, or a redraw after 200 ms.
            tokio::select! {
                event = link.next() => {
                    let back = matches!(event, Event::Resumed);
                    events.push(format!("{event:?}"));
                    if back {
                        return;
                    }
                }
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
        }
        panic!("never reconnected through a 700 ms handshake: {events:?}");
    }
}
