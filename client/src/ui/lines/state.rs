//! Line mode's decisions, without stdin, stdout or the socket: a link event
//! or a line typed in, the lines to print and the requests to send out.
//! [`super::run`] is the io shell that waits and does them.

use tictactoe_protocol::api::GameRecord;
use tictactoe_protocol::{ClientMessage, ErrorCode, Limits, Player, ServerMessage};

use super::super::board::{render, status};
use super::super::clocks::clock_line;
use super::super::input::{cell_name, parse_cell};
use crate::net::{Event, NOT_CONNECTED};
use crate::request::Start;
use crate::say::{clean, refusal};
use crate::session::{SessionError, challenge_over, fatal};
use crate::ui::PlayError;
use crate::view::View;

/// What the next stdin line answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Awaiting {
    /// Nothing: stdin is not read.
    Nothing,
    /// A cell to play.
    Move,
    /// y: rematch, n: new quick match, else quit.
    Rematch,
    /// The room closed after the game: n: new quick match, else quit.
    NewGame,
    /// A challenge is open: a: accept, d: decline, else as before.
    Challenge,
}

/// What the io shell does, in order.
#[derive(Debug)]
pub(super) enum Do {
    /// Print this line.
    Print(String),
    /// Send this request; if it cannot go, the session ends.
    Send(ClientMessage),
    /// Send this move; while reconnecting it is refused and asked for
    /// again ([`Lines::move_not_sent`]).
    Move(ClientMessage),
    /// Send `leave`, whatever comes of it.
    Leave,
    /// The game ended while the connection was down: fetch its record
    /// (this id) and hand it to [`Lines::ended`].
    Ended(String),
    /// End the session.
    End(Result<(), PlayError>),
}

/// The prompt for a move.
pub(super) const PROMPT: &str = "Your move (e.g. b2):";

/// A line-mode session's state.
#[derive(Debug)]
pub(super) struct Lines {
    view: View,
    awaiting: Awaiting,
    /// What was asked for.
    start: Start,
    watch: bool,
    /// Challenging: the session ends if the challenge is not accepted.
    challenging: bool,
}

impl Lines {
    /// A session that asked for `start`.
    pub(super) fn new(start: &Start) -> Lines {
        Lines {
            view: View::default(),
            awaiting: Awaiting::Nothing,
            start: start.clone(),
            watch: matches!(start, Start::Watch(_)),
            challenging: matches!(start, Start::Challenge(..)),
        }
    }

    /// Whether a stdin line is awaited.
    pub(super) fn wants_input(&self) -> bool {
        self.awaiting != Awaiting::Nothing
    }

    /// What a link event prints and does; `limits` are the server's,
    /// `servers` the `--server` list (the one connected to first).
    pub(super) fn on_link(&mut self, event: Event, limits: &Limits, servers: &str) -> Vec<Do> {
        let msg = match event {
            Event::Msg(msg) => msg,
            Event::Down { restart: true } => return vec![print("Server restarting, reconnecting…")],
            Event::Down { restart: false } => return vec![print("Connection lost; reconnecting…")],
            Event::Resumed if self.view.you.is_some() && self.view.over.is_none() => {
                return vec![print("Reconnected; the game goes on.")];
            }
            Event::Resumed => return vec![print("Reconnected.")],
            Event::Closed(why) => {
                return vec![Do::End(if self.view.over.is_some() {
                    Ok(())
                } else {
                    Err(SessionError::Closed(why).into())
                })];
            }
        };
        if let Some(why) = fatal(&msg, &self.start, limits) {
            return vec![Do::End(Err(SessionError::Refused(why).into()))];
        }
        if let Some(why) = self.challenging.then(|| challenge_over(&msg, self.view.you.is_some())).flatten() {
            return vec![Do::End(Err(SessionError::Refused(why).into()))];
        }
        if let ServerMessage::Error { code: ErrorCode::InvalidToken, game_id: Some(id), .. } = &msg {
            if self.in_game() {
                return vec![Do::Ended(id.to_string())];
            }
        }
        self.view.apply(&msg);
        let mut out = Vec::new();
        self.awaiting = show(&self.view, &msg, self.awaiting, self.watch, servers, &mut out);
        // A watcher stays for rematches, until the room closes.
        if self.watch && matches!(msg, ServerMessage::RoomClosed { .. }) {
            out.push(Do::End(Ok(())));
        }
        out
    }

    /// Whether a game is being played (not watched) and is not over.
    fn in_game(&self) -> bool {
        let view = &self.view;
        !self.watch && view.you.is_some() && view.over.is_none() && view.game.turn().is_some()
    }

    /// The record of the game that ended while the connection was down, or
    /// why it could not be had: the final board and how it ended are
    /// printed (else that the seat is gone), and a new game offered.
    /// `name` is who plays.
    pub(super) fn ended(&mut self, record: Result<GameRecord, String>, name: &str) -> Vec<Do> {
        let mut out = Vec::new();
        if !record.is_ok_and(|record| self.view.ended(&record, name, None)) {
            let gone =
                ServerMessage::error(ErrorCode::InvalidToken, "the server no longer holds your seat", None);
            self.view.apply(&gone);
            self.awaiting = show(&self.view, &gone, self.awaiting, self.watch, "", &mut out);
            return out;
        }
        out.push(print("Your game ended while you were away:"));
        out.extend(render(&self.view, None, false).into_iter().map(Do::Print));
        out.extend(self.view.result_line().map(Do::Print));
        out.push(print("New game? [n: new quick match, anything else: quit]"));
        self.awaiting = Awaiting::NewGame;
        out
    }

    /// What a line typed in does; `None` when stdin ended.
    pub(super) fn on_line(&mut self, line: Option<String>) -> Vec<Do> {
        let Some(line) = line else {
            // Leaving a game in progress resigns it: say so, and fail.
            let mid_game = self.in_game();
            return vec![Do::Leave, Do::End(if mid_game { Err(PlayError::InputEnded) } else { Ok(()) })];
        };
        match self.awaiting {
            Awaiting::Move => match parse_cell(&line, self.view.game.size()) {
                Ok((r, c)) if self.view.game.is_occupied(r, c) => {
                    vec![
                        Do::Print(format!("! {} is taken; choose an empty cell", cell_name(r, c))),
                        print(PROMPT),
                    ]
                }
                Ok((row, col)) => {
                    self.awaiting = Awaiting::Nothing;
                    vec![Do::Move(ClientMessage::Move { row: row as i64, col: col as i64 })]
                }
                Err(e) => vec![Do::Print(format!("! {e}")), print(PROMPT)],
            },
            Awaiting::Rematch | Awaiting::NewGame => {
                let answer = line.trim().to_ascii_lowercase();
                let rematch = self.awaiting == Awaiting::Rematch;
                self.awaiting = Awaiting::Nothing;
                if answer == "y" && rematch {
                    vec![Do::Send(ClientMessage::Rematch {}), print("Waiting for the opponent to accept…")]
                } else if answer == "n" {
                    vec![Do::Send(self.view.rules().quick_match())]
                } else {
                    vec![Do::Leave, Do::End(Ok(()))]
                }
            }
            Awaiting::Challenge => {
                self.awaiting = Awaiting::Nothing;
                let id = self.view.offer.as_ref().map(|o| o.id.clone()).unwrap_or_default();
                match line.trim() {
                    "a" => vec![Do::Send(ClientMessage::Accept { challenge: id })],
                    "d" => {
                        self.view.offer = None;
                        vec![
                            Do::Send(ClientMessage::Decline { challenge: id, reason: None }),
                            print("Declined."),
                        ]
                    }
                    _ => vec![print("! a: accept, d: decline")],
                }
            }
            Awaiting::Nothing => Vec::new(),
        }
    }

    /// The move of [`Do::Move`] was not sent (reconnecting): say so and ask again.
    pub(super) fn move_not_sent(&mut self) -> Vec<Do> {
        self.awaiting = Awaiting::Move;
        vec![Do::Print(format!("! {NOT_CONNECTED}")), print(PROMPT)]
    }
}

fn print(line: &str) -> Do {
    Do::Print(line.to_owned())
}

/// What changed, as lines to print, and what the next stdin line answers.
fn show(
    view: &View,
    msg: &ServerMessage,
    awaiting: Awaiting,
    watch: bool,
    servers: &str,
    out: &mut Vec<Do>,
) -> Awaiting {
    let mut say = |line: String| out.push(Do::Print(line));
    match msg {
        ServerMessage::RoomCreated { room, .. } => {
            say(format!("Room code: {}", clean(room)));
            say(format!("Your friend joins with: {}", crate::servers::join_command(servers, room)));
            say(format!("or opens in a browser: {}", crate::servers::room_page(servers, room)));
            say("Waiting for an opponent to join…".into());
        }
        ServerMessage::Queued { .. } => say("Waiting for an opponent…".into()),
        ServerMessage::GameStarted { .. } | ServerMessage::State { .. } | ServerMessage::Moved { .. } => {
            match msg {
                ServerMessage::Moved { row, col, player, .. } => {
                    say(format!("{} played {}", view.player(*player), cell_name(*row, *col)));
                }
                ServerMessage::GameStarted { room, .. } => say(format!(
                    "Game started in room {}: {} against {}",
                    clean(room),
                    view.player(Player::X),
                    view.player(Player::O)
                )),
                _ => {}
            }
            render(view, None, false).into_iter().for_each(&mut say);
            say(status(view));
            if let Some(clocks) = clock_line(view, std::time::Instant::now(), false) {
                say(format!("Clocks: {}", clocks.trim()));
            }
            if view.my_turn() && !watch {
                say(PROMPT.into());
                return Awaiting::Move;
            }
        }
        ServerMessage::GameOver { .. } => {
            // The board, then the result once (the status line would repeat it).
            render(view, None, false).into_iter().for_each(&mut say);
            if let Some(result) = view.result_line() {
                say(result);
            }
            if !view.note.is_empty() {
                say(view.note.clone());
            }
            if !watch && view.closed.is_none() {
                say("Rematch? [y: rematch, n: new opponent, anything else: quit]".into());
                return Awaiting::Rematch;
            }
        }
        ServerMessage::Error { code, message, .. } => {
            say(format!("! {}", refusal(*code, message, None, None)));
            if view.my_turn() {
                say(PROMPT.into());
                return Awaiting::Move;
            }
        }
        ServerMessage::OpponentDisconnected { .. }
        | ServerMessage::OpponentReconnected {}
        | ServerMessage::RematchOffered {} => say(view.note.clone()),
        ServerMessage::RoomClosed { .. } => {
            say(view.note.clone());
            if !watch && view.over.is_some() {
                say("New game? [n: new quick match, anything else: quit]".into());
                return Awaiting::NewGame;
            }
        }
        ServerMessage::Challenged { .. } => {
            say(view.note.clone());
            if view.you.is_none() || view.over.is_some() {
                return Awaiting::Challenge;
            }
        }
        ServerMessage::ChallengeSent { .. } | ServerMessage::ChallengeEnded { .. } => say(view.note.clone()),
        ServerMessage::Welcome { .. }
        | ServerMessage::Pong { .. }
        | ServerMessage::Tournament { .. }
        | ServerMessage::Tournaments { .. }
        | ServerMessage::TournamentUpdate { .. }
        | ServerMessage::Berserked { .. }
        | ServerMessage::Registered { .. }
        | ServerMessage::Authenticated { .. }
        | ServerMessage::Online { .. } => {}
    }
    awaiting
}

#[cfg(test)]
mod tests;
