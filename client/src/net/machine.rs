//! The connection's rules without its socket: what to send, when to
//! reconnect and with what, what to tell the UI, when to give up. It takes
//! events (a frame arrived, the socket closed or dropped, a reconnect
//! attempt ended, the user sends something) with an injected `now`, and
//! [`Machine::poll`] says what to do next, so tests drive every reconnect
//! rule without a network or a clock. [`super::Link`] is its io shell.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use tictactoe_protocol::{ClientFrame, ClientMessage, ErrorCode, Limits, Player, ServerMessage};

use super::pace::Pace;

/// What [`super::Link::next`] yields.
// Nearly every event is a message: boxing it would cost an allocation each.
#[allow(clippy::large_enum_variant)]
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
    /// The connection is gone for good, with the reason in a person's words
    /// (a [`Gone`] written out).
    Closed(Gone),
}

/// Why a connection is gone for good.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Gone {
    /// It dropped with nothing to take back.
    #[error("the connection dropped")]
    Dropped,
    /// It stayed down past the seat's grace period.
    #[error("{RESUME_FAILED}")]
    ResumeFailed,
    /// The server closed it without saying why.
    #[error("the server closed the connection")]
    ClosedSilently,
    /// The server closed it on purpose (shutdown, policy, size, takeover).
    #[error("{}", crate::say::closed(*code, reason))]
    Closed {
        /// The WebSocket close code.
        code: u16,
        /// The server's reason text.
        reason: String,
    },
    /// The server sent a frame this client cannot read.
    #[error("the server sent something this client does not understand: {0}")]
    Garbled(String),
    /// Writing to the socket failed with nothing to take back.
    #[error("lost the connection: {0}")]
    WriteFailed(String),
    /// A request could not be written as JSON.
    #[error("{0}")]
    Encode(String),
}

/// Why a request was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The connection is down and being re-established: try again after.
    #[error("{NOT_CONNECTED}")]
    NotConnected,
    /// The connection is gone for good.
    #[error(transparent)]
    Lost(#[from] Gone),
}

impl From<SendError> for String {
    fn from(e: SendError) -> String {
        e.to_string()
    }
}

/// What a request sent while reconnecting gets.
pub const NOT_CONNECTED: &str = "not connected (reconnecting): nothing was sent; try again once reconnected";

/// What a seat that could not be resumed within the grace says.
pub const RESUME_FAILED: &str = "the connection was down for longer than the grace period";

/// How long to keep trying after the server said it is restarting (1012):
/// a deploy takes seconds, and the grace starts afresh once it is back.
const RESTART_WAIT: Duration = Duration::from_secs(60);

/// The first pause between reconnect attempts.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// The longest pause between reconnect attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// The WebSocket close code of a server that is restarting.
const RESTART: u16 = 1012;

/// What happened on the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input<'a> {
    /// A text frame arrived.
    Text(&'a str),
    /// The server closed the connection, with its close code and reason if it gave them.
    Close(Option<(u16, String)>),
    /// The socket failed or ended without a close.
    Dropped,
}

/// What the seat kept on disk needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seat {
    /// A game started: keep its resume token, and the mark its seat plays.
    Keep(String, Player),
    /// The game is over or gone: forget it.
    Forget,
}

/// What the io shell does next.
// Mostly a yielded message, moved once: not worth an allocation each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Step {
    /// Connected, nothing pending: read the socket.
    Read,
    /// Hand this to the UI.
    Yield(Event),
    /// Keep or forget the seat on disk, then ask again.
    Seat(Seat),
    /// Open a new connection, send these frames on it (the last `hello`
    /// first), and report with [`Machine::reconnected`] or
    /// [`Machine::attempt_failed`].
    Reconnect(Vec<String>),
    /// Nothing to do before this instant: sleep, then ask again.
    Wait(Instant),
    /// The connection is gone for good.
    GiveUp(Gone),
}

/// A request ready for the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub text: String,
    /// Not before this (the server's rate limit).
    pub at: Instant,
}

/// The connection being re-established.
#[derive(Debug)]
struct Down {
    /// When trying stops.
    until: Instant,
    /// [`Event::Down`] was given for it.
    announced: bool,
    /// The next attempt is not before this.
    next_try: Instant,
    /// The pause after the next failed attempt (before its jitter).
    backoff: Duration,
}

/// The state of one connection, without its socket.
#[derive(Debug)]
pub struct Machine {
    /// The server's limits from its last `welcome`.
    limits: Limits,
    /// The seat's resume token while a game lasts.
    token: Option<String>,
    /// Without a seat: what to ask for again on a new connection — the room
    /// being watched (`spectate`), or the queue being waited in (`quick_match`).
    rejoin: Option<ClientMessage>,
    /// The last `hello` sent: said again first on every new connection, so
    /// that the client keeps its name (and its listing for challenges).
    hello: Option<ClientMessage>,
    /// Waiting to be challenged: reason enough to reconnect.
    listed: bool,
    /// Set while the connection is down and being re-established.
    down: Option<Down>,
    /// The server said it is restarting (close 1012): the games go on once it is back.
    restarting: bool,
    pace: Pace,
    /// What [`Machine::poll`] hands out before anything else.
    out: VecDeque<Step>,
}

impl Machine {
    /// A connection just opened, whose server greeted with `limits`.
    pub fn new(limits: Limits, now: Instant) -> Machine {
        Machine {
            pace: Pace::new(limits.max_messages_per_second, now),
            limits,
            token: None,
            rejoin: None,
            hello: None,
            listed: false,
            down: None,
            restarting: false,
            out: VecDeque::new(),
        }
    }

    /// When the grace period of a connection being re-established ends;
    /// `None` while connected.
    pub fn reconnecting(&self) -> Option<Instant> {
        self.down.as_ref().map(|d| d.until)
    }

    /// Whether the connection is down because the server is restarting.
    pub fn restarting(&self) -> bool {
        self.restarting && self.down.is_some()
    }

    /// Remembers the seat of `token` (a game from before this process), to
    /// take back on a new connection; the `resume` itself is sent as usual.
    pub fn resume_seat(&mut self, token: String) {
        self.token = Some(token);
    }

    /// Keeps this client listed (for challenges) across reconnects, with
    /// nothing else to take back: it reconnects and says `hello` again.
    pub fn stay_listed(&mut self) {
        self.listed = true;
    }

    /// A request the user makes: its frame and when it may go, or why it
    /// cannot (while reconnecting nothing is sent).
    pub fn send(&mut self, message: ClientMessage, now: Instant) -> Result<Outgoing, SendError> {
        if self.down.is_some() {
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
        let text = encode(message)?;
        Ok(Outgoing { text, at: self.pace.take(now) })
    }

    /// Writing a request failed with `why`: with something to take back the
    /// connection is re-established (nothing was sent), else it is lost.
    pub fn send_failed(&mut self, why: &str, now: Instant) -> SendError {
        if self.can_rejoin() {
            self.dropped(self.grace(), now);
            SendError::NotConnected
        } else {
            SendError::Lost(Gone::WriteFailed(why.to_owned()))
        }
    }

    /// Takes in what happened on the socket; [`Machine::poll`] says what follows.
    pub fn handle(&mut self, input: Input<'_>, now: Instant) {
        match input {
            Input::Text(text) => match ServerMessage::decode(text) {
                Ok(Some(msg)) => {
                    self.track(&msg, now);
                    self.out.push_back(Step::Yield(Event::Msg(msg)));
                }
                // A newer server's message this client does not know.
                Ok(None) => {}
                Err(e) => self.out.push_back(Step::GiveUp(Gone::Garbled(e.to_string()))),
            },
            Input::Close(Some((RESTART, _))) if self.can_rejoin() => {
                // The game is saved and goes on once the server is back.
                self.restarting = true;
                self.dropped(RESTART_WAIT.max(self.grace()), now);
            }
            Input::Close(frame) => {
                // A deliberate close (shutdown, policy, size) is not a drop: no resume.
                self.token = None;
                let gone = frame.map_or(Gone::ClosedSilently, |(code, reason)| Gone::Closed { code, reason });
                self.out.push_back(Step::GiveUp(gone));
            }
            Input::Dropped if !self.can_rejoin() => self.out.push_back(Step::GiveUp(Gone::Dropped)),
            Input::Dropped => self.dropped(self.grace(), now),
        }
    }

    /// What to do next at `now`.
    pub fn poll(&mut self, now: Instant) -> Step {
        if let Some(step) = self.out.pop_front() {
            return step;
        }
        let Some(down) = self.down.as_mut() else {
            return Step::Read;
        };
        // Dropped with a seat to go back to (now, or in an attempt that was cancelled).
        if !down.announced {
            down.announced = true;
            return Step::Yield(Event::Down { restart: self.restarting });
        }
        let (until, next_try) = (down.until, down.next_try);
        let again = match (&self.token, &self.rejoin) {
            (Some(token), _) => Some(ClientMessage::Resume { token: token.clone() }),
            (None, Some(again)) => Some(again.clone()),
            (None, None) if self.listed => None,
            (None, None) => {
                self.down = None;
                return Step::GiveUp(Gone::Dropped);
            }
        };
        if now >= until {
            let seated = self.token.is_some();
            self.token = None;
            self.rejoin = None;
            self.down = None;
            return Step::GiveUp(if seated { Gone::ResumeFailed } else { Gone::Dropped });
        }
        if now < next_try {
            return Step::Wait(next_try);
        }
        let frames = self.hello.iter().cloned().chain(again).map(encode).collect::<Result<Vec<_>, _>>();
        match frames {
            Ok(frames) => Step::Reconnect(frames),
            Err(gone) => Step::GiveUp(gone),
        }
    }

    /// The frames of [`Step::Reconnect`] are on their way over a new
    /// connection, whose server greeted with `limits`.
    pub fn reconnected(&mut self, limits: Limits) {
        self.limits = limits;
        self.down = None;
        self.restarting = false;
        self.out.push_back(Step::Yield(Event::Resumed));
    }

    /// A reconnect attempt failed at `now`: the next waits for a random part
    /// (`jitter`, 0 to 1) of a doubling backoff, so that many clients do not
    /// come back in step.
    pub fn attempt_failed(&mut self, now: Instant, jitter: f64) {
        if let Some(down) = self.down.as_mut() {
            down.next_try = now + down.backoff.mul_f64(0.5 + jitter.clamp(0.0, 1.0) / 2.0);
            down.backoff = (down.backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Whether there is a seat to resume, a room to watch again or a queue
    /// to wait in again.
    fn can_rejoin(&self) -> bool {
        self.token.is_some() || self.rejoin.is_some() || self.listed
    }

    fn grace(&self) -> Duration {
        Duration::from_millis(self.limits.reconnect_grace_ms)
    }

    /// The connection dropped with something to take back: trying stops
    /// `wait` from now (set once, however many attempts are cancelled and
    /// started again).
    fn dropped(&mut self, wait: Duration, now: Instant) {
        self.down.get_or_insert(Down {
            until: now + wait,
            announced: false,
            next_try: now,
            backoff: FIRST_BACKOFF,
        });
    }

    fn track(&mut self, msg: &ServerMessage, now: Instant) {
        match msg {
            ServerMessage::GameStarted { resume_token, you, .. } => {
                // A queue's wait is over: the seat is what comes back now.
                self.rejoin = None;
                self.token = Some(resume_token.to_string());
                self.out.push_back(Step::Seat(Seat::Keep(resume_token.to_string(), *you)));
            }
            ServerMessage::RoomClosed { .. } | ServerMessage::Error { code: ErrorCode::RoomNotFound, .. } => {
                self.rejoin = None;
                self.forget_seat();
            }
            ServerMessage::GameOver { .. } | ServerMessage::Error { code: ErrorCode::InvalidToken, .. } => {
                self.forget_seat();
            }
            ServerMessage::Error { code: ErrorCode::RateLimited, retry_after_ms, .. } => {
                self.pace.hold(now + Duration::from_millis(retry_after_ms.unwrap_or(1000)));
            }
            _ => {}
        }
    }

    fn forget_seat(&mut self) {
        self.token = None;
        self.out.push_back(Step::Seat(Seat::Forget));
    }
}

/// A request as a frame's text.
fn encode(message: ClientMessage) -> Result<String, Gone> {
    serde_json::to_string(&ClientFrame { id: None, message }).map_err(|e| Gone::Encode(e.to_string()))
}

#[cfg(test)]
mod tests;
