//! The full-screen session's decisions, without the terminal or the
//! socket: a key or a link event in, what to send or whether to end out.
//! [`super::run`] is the io shell that draws, waits and dispatches.

use tictactoe_protocol::api::GameRecord;
use tictactoe_protocol::{ClientMessage, ErrorCode, Limits, Player, ServerMessage};

mod keys;
mod tournament;

use super::super::board::Window;
use crate::net::{Event, NOT_CONNECTED, SendError};
use crate::request::{RequestedRules, Start};
use crate::session::{SessionError, TakingBack, challenge_over, fatal};
use crate::ui::PlayError;
use crate::view::{Connection, View};

/// The full-screen session: the game, the cursor, typed text, and what the next key answers.
pub(super) struct Screen {
    /// The game as the player sees it, and the note under the board.
    pub(super) view: View,
    pub(super) cursor: (usize, usize),
    /// A cell being typed (`b2`).
    pub(super) typed: String,
    /// Watching, not playing.
    pub(super) watch: bool,
    /// Challenging: the session ends if the challenge is not accepted.
    challenging: bool,
    /// What was asked for.
    start: Start,
    /// Leaving was asked for mid-game: the next `y` (or a second Ctrl-C) resigns.
    confirming: bool,
    /// Ctrl-R asked to resign and stay: the next `y` resigns.
    resigning: bool,
    /// The connection is gone for good: only `n` (a new connection) or `q`.
    pub(super) lost: bool,
    /// Taking back a seat kept on disk: what to ask for if it is gone.
    fallback: Option<Start>,
    /// The mark of that seat, as the earlier run kept it.
    kept_mark: Option<Player>,
    /// The part of the board on screen, for boards bigger than the terminal.
    pub(super) window: Window,
    /// It was our turn at the last draw (the cue is given once per turn).
    pub(super) cued: bool,
    /// The low-time warning was given this turn.
    pub(super) warned: bool,
    /// The tournament played in, if one is.
    pub(super) tournament: Option<crate::tournament::follow::Following>,
    /// Paused in the tournament: not paired until joining again.
    paused: bool,
}

/// What the io shell does after an event.
#[derive(Debug)]
pub(super) enum Do {
    /// Nothing more: draw and wait for the next event.
    Wait,
    /// Send this request; if it went, [`Screen::after_send`] says so.
    Send(ClientMessage),
    /// The seat kept on disk is gone: ask for this instead (if anything),
    /// then say so.
    Fallback(Option<ClientMessage>),
    /// The seat's game ended while the player was away: fetch its record
    /// (this id) and hand it to [`Screen::ended`].
    Ended(String),
    /// Open a new connection that looks for a quick match with these rules.
    NewConnection(RequestedRules),
    /// Resign a game in progress (waiting a little for its result), leave, and end.
    Quit,
    /// End the session with this.
    End(Result<Option<String>, PlayError>),
}

/// What the screen says once the seat kept on disk turned out to be gone.
pub(super) const GAME_WAS_OVER: &str =
    "the game you were playing is over (it ended while you were away); starting a new one";

impl Screen {
    /// A screen for the session `start`; with `resumed`, the link is taking
    /// back a seat kept from an earlier run, and `start` is asked for if
    /// that game is over (and not shown from its record).
    pub(super) fn new(start: &Start, resumed: Option<TakingBack>) -> Screen {
        let mut s = Screen {
            view: View::default(),
            cursor: (0, 0),
            typed: String::new(),
            watch: matches!(start, Start::Watch(_)),
            challenging: matches!(start, Start::Challenge(..)),
            start: start.clone(),
            confirming: false,
            resigning: false,
            lost: false,
            fallback: resumed.map(|_| start.clone()),
            kept_mark: resumed.and_then(|r| r.mark),
            window: Window::whole(0),
            cued: false,
            warned: false,
            tournament: None,
            paused: false,
        };
        if s.fallback.is_some() {
            s.view.note = "taking back your seat in the game you were playing…".into();
        }
        s
    }

    /// What a link event asks for; `limits` are the server's, `servers`
    /// the `--server` list (the one connected to first).
    pub(super) fn on_link(&mut self, event: Event, limits: &Limits, servers: &str) -> Do {
        if let Some(todo) = self.tournament_link(&event) {
            return todo;
        }
        let msg = match event {
            Event::Msg(msg) => msg,
            // The status line follows the link before each draw.
            Event::Down { .. } => return Do::Wait,
            Event::Resumed => {
                self.view.set_connection(Connection::Connected);
                return Do::Wait;
            }
            Event::Closed(why) => return self.closed(why),
        };
        if let Some(why) = fatal(&msg, &self.start, limits) {
            return Do::End(Err(SessionError::Refused(why).into()));
        }
        if let Some(why) = self.challenging.then(|| challenge_over(&msg, self.view.you.is_some())).flatten() {
            return Do::End(Err(SessionError::Refused(why).into()));
        }
        if let ServerMessage::Error { code: ErrorCode::InvalidToken, game_id: Some(id), .. } = &msg {
            if self.fallback.is_some() || self.in_game() {
                return Do::Ended(id.to_string());
            }
        }
        let mut took_back = false;
        if let Some(start) = self.fallback.take() {
            if matches!(msg, ServerMessage::Error { code: ErrorCode::InvalidToken, .. }) {
                return Do::Fallback(start.request());
            }
            took_back = matches!(msg, ServerMessage::State { .. });
            if !took_back {
                self.fallback = Some(start);
            }
        }
        self.view.apply(&msg);
        if let ServerMessage::RoomCreated { room, .. } = &msg {
            let invite = crate::servers::invite(servers, room);
            self.view.note = format!("room {room} is open; your friend joins with: {invite}");
        }
        if let ServerMessage::GameStarted { size, .. } | ServerMessage::State { size, .. } = msg {
            self.cursor = (size / 2, size / 2);
        }
        if took_back {
            self.view.note = "took your seat back: the game goes on".into();
        }
        if self.tournament.is_some() && matches!(msg, ServerMessage::GameOver { .. }) {
            return self.if_over(std::time::Instant::now());
        }
        if self.watch && matches!(msg, ServerMessage::RoomClosed { .. }) {
            return Do::End(Ok(Some(self.view.note.clone())));
        }
        Do::Wait
    }

    /// The record of the seat's game that ended while the player (`name`)
    /// was away, or why it could not be had: the final board and result
    /// are shown; without them, the seat kept on disk falls back to what
    /// was asked for, and a game in progress ends in words.
    pub(super) fn ended(&mut self, record: Result<GameRecord, String>, name: &str) -> Do {
        match record {
            Ok(record) if self.view.ended(&record, name, self.kept_mark) => {
                self.fallback = None;
                Do::Wait
            }
            _ => match self.fallback.take() {
                Some(start) => Do::Fallback(start.request()),
                None => {
                    self.view.apply(&ServerMessage::error(ErrorCode::InvalidToken, "", None));
                    Do::Wait
                }
            },
        }
    }

    /// The connection is gone for good: after a game, or watching, the
    /// session ends; mid-game it says what became of the game and stays for
    /// `n` or `q`.
    fn closed(&mut self, why: crate::net::Gone) -> Do {
        if self.view.over.is_some() && !self.watch {
            return Do::End(Ok(self.view.result_line()));
        }
        if self.watch || self.view.you.is_none() {
            return Do::End(Err(SessionError::Closed(why).into()));
        }
        self.view.seat_lost(&why.to_string());
        self.lost = true;
        self.view.note = "n: new game (a new connection), q: quit".into();
        Do::Wait
    }

    /// A request of [`Do::Send`] went out.
    pub(super) fn after_send(&mut self, request: &ClientMessage) {
        match request {
            ClientMessage::Rematch {} => self.view.note = "rematch asked; waiting for the opponent".into(),
            ClientMessage::Decline { .. } => {
                self.view.offer = None;
                self.view.note = "challenge declined".into();
            }
            _ => {}
        }
    }

    /// A new connection replaced the lost one.
    pub(super) fn reconnected(&mut self) {
        self.lost = false;
        self.view = View::default();
        self.view.note = "connected again; looking for an opponent".into();
    }

    /// The connection as the status line shows it, given when the link's
    /// grace ends if it is reconnecting.
    pub(super) fn connection(&self, reconnecting: Option<std::time::Instant>, restart: bool) -> Connection {
        match (self.lost, reconnecting) {
            (true, _) => Connection::Lost,
            (false, Some(until)) => Connection::Reconnecting { until, restart },
            (false, None) => Connection::Connected,
        }
    }

    /// The keys that do something now.
    pub(super) fn help(&self) -> &'static str {
        if self.between_games() {
            "p: pause   j: join again   q: quit"
        } else if self.tournament.is_some() && self.view.over.is_none() {
            "arrows + Enter, or type a cell (b2)   b Enter: berserk   Esc: leave (asks)"
        } else if self.answerable().is_some() {
            "a: accept the challenge   d: decline it   q: quit"
        } else if self.watch {
            "q: quit"
        } else if self.view.over.is_some() && self.view.closed.is_some() {
            "n: new game   q: quit"
        } else if self.view.over.is_some() {
            "r: rematch   n: new game   q: quit"
        } else {
            "arrows + Enter, or type a cell (b2)   Ctrl-R: resign   Esc: leave (both ask)"
        }
    }

    /// Whether a request went out; while reconnecting it did not, and the
    /// player is told so. A connection gone for good ends the session.
    pub(super) fn sent(&mut self, result: Result<(), SendError>) -> Result<bool, SendError> {
        match result {
            Ok(()) => Ok(true),
            Err(SendError::NotConnected) => {
                self.view.note = NOT_CONNECTED.into();
                Ok(false)
            }
            Err(lost) => Err(lost),
        }
    }

    /// The open challenge that `a` and `d` answer: one is shown while no
    /// game is in progress.
    fn answerable(&self) -> Option<&str> {
        let offer =
            self.view.offer.as_ref().filter(|_| !self.watch && !self.in_game() && self.typed.is_empty());
        offer.map(|o| o.id.as_str())
    }

    /// Whether leaving now would resign a game in progress.
    pub(super) fn in_game(&self) -> bool {
        !self.watch && self.view.you.is_some() && self.view.over.is_none() && self.view.game.turn().is_some()
    }
}

#[cfg(test)]
mod tests;
