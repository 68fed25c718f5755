//! What a client knows of its game, kept up to date from server messages.

use std::time::{Duration, Instant};

use tictactoe_protocol::{ClosedReason, EndReason, Game, Line, Player, ServerMessage};

/// One client's picture of the room it is in.
#[derive(Debug, Clone)]
pub struct View {
    /// The room code, once known.
    pub room: Option<String>,
    /// The game as replayed from the server's moves.
    pub game: Game,
    /// Our seat, or `None` when watching.
    pub you: Option<Player>,
    /// Players' names; index 0 is player 1.
    pub names: Vec<String>,
    /// The last move played.
    pub last: Option<(usize, usize)>,
    /// Winner (if any), reason and line, once the game is over.
    pub over: Option<(Option<Player>, EndReason, Option<Line>)>,
    /// When the player to move runs out of time, if there is a timer.
    pub deadline: Option<Instant>,
    /// A one-line note for the status bar (errors, disconnects, offers).
    pub note: String,
    /// Set once the room has closed under us: no rematch is possible.
    pub closed: Option<ClosedReason>,
}

impl Default for View {
    fn default() -> Self {
        View::new(3, 3)
    }
}

impl View {
    /// An empty view of a `size` board won by `win` in a row.
    pub fn new(size: usize, win: usize) -> View {
        View {
            room: None,
            game: Game::with_win(size, win).unwrap_or_default(),
            you: None,
            names: Vec::new(),
            last: None,
            over: None,
            deadline: None,
            note: String::new(),
            closed: None,
        }
    }

    /// Whether a game is in progress and it is our move.
    pub fn my_turn(&self) -> bool {
        self.over.is_none() && self.you.is_some() && self.game.turn() == self.you
    }

    /// Milliseconds left on the clock of the player to move.
    pub fn clock_ms(&self) -> Option<u64> {
        let d = self.deadline?.saturating_duration_since(Instant::now());
        Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    /// Folds one server message into the view.
    pub fn apply(&mut self, msg: &ServerMessage) {
        match msg {
            ServerMessage::RoomCreated { room, size, win, .. } => {
                *self = View::new(*size, *win);
                self.room = Some(room.to_string());
                self.note = format!("room {room} is open: share the code");
            }
            ServerMessage::Queued { size, win, .. } => {
                *self = View::new(*size, *win);
                self.note = "waiting for an opponent…".into();
            }
            ServerMessage::GameStarted { room, size, win, you, players, turn_timeout_ms, .. } => {
                *self = View::new(*size, *win);
                self.room = Some(room.to_string());
                self.you = Some(*you);
                self.names = players.iter().map(|p| p.name.to_string()).collect();
                self.deadline = clock(Some(*turn_timeout_ms).filter(|&t| t > 0));
                self.note = "game started".into();
            }
            ServerMessage::Moved { row, col, clock_ms, .. } => {
                let _ = self.game.play(*row, *col);
                self.last = Some((*row, *col));
                self.deadline = clock(*clock_ms);
                self.note.clear();
            }
            ServerMessage::GameOver { winner, reason, line, moves, .. } => {
                if moves.len() != self.game.moves().len() {
                    self.replay(moves);
                }
                self.over = Some((*winner, *reason, *line));
                self.deadline = None;
            }
            ServerMessage::State { room, size, win, moves, players, you, clock_ms, turn, .. } => {
                *self = View::new(*size, *win);
                self.room = Some(room.to_string());
                self.replay(moves);
                self.names = players.iter().map(|p| p.name.to_string()).collect();
                self.you = *you;
                self.deadline = clock(*clock_ms);
                if turn.is_none() && !moves.is_empty() && !self.game.status().is_over() {
                    self.note = "the game is over".into();
                }
            }
            ServerMessage::OpponentDisconnected { grace_ms } => {
                self.note = format!("opponent disconnected; they have {}s to come back", grace_ms / 1000);
            }
            ServerMessage::OpponentReconnected {} => self.note = "opponent reconnected".into(),
            ServerMessage::RematchOffered {} => self.note = "opponent offers a rematch".into(),
            ServerMessage::RoomClosed { reason, .. } => {
                self.closed = Some(*reason);
                self.deadline = None;
                self.note = match (reason, self.you) {
                    (ClosedReason::Left, Some(_)) => "your opponent has left the room".into(),
                    (ClosedReason::Disconnect, Some(_)) => {
                        "your opponent's connection is gone; the room has closed".into()
                    }
                    (_, None) => "the room has closed: a player left".into(),
                };
            }
            ServerMessage::Error { message, .. } => self.note = message.clone(),
            ServerMessage::Welcome { .. } | ServerMessage::Pong { .. } => {}
        }
    }

    fn replay(&mut self, moves: &[[u16; 2]]) {
        let Ok(mut game) = Game::with_win(self.game.size(), self.game.win()) else {
            return;
        };
        for m in moves {
            let _ = game.play(usize::from(m[0]), usize::from(m[1]));
        }
        self.last = moves.last().map(|m| (usize::from(m[0]), usize::from(m[1])));
        self.game = game;
    }

    /// One line saying how the game ended, from our seat's point of view.
    pub fn result_line(&self) -> Option<String> {
        let (winner, reason, _) = self.over?;
        let reason_text = serde_json::to_value(reason).ok()?.as_str()?.to_owned();
        let who = match (winner, self.you) {
            (None, _) if reason == EndReason::Draw => "Draw".to_owned(),
            (None, _) => "No winner".to_owned(),
            (Some(w), Some(me)) if w == me => "You won".to_owned(),
            (Some(_), Some(_)) => "You lost".to_owned(),
            (Some(w), None) => format!("Player {} won", w.number()),
        };
        Some(format!("Result: {who} ({reason_text})"))
    }
}

fn clock(ms: Option<u64>) -> Option<Instant> {
    ms.map(|ms| Instant::now() + Duration::from_millis(ms))
}
