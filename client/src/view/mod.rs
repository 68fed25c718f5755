//! What a client knows of its game, kept up to date from server messages.

use std::time::{Duration, Instant};

use tictactoe_protocol::{
    ClosedReason, EndReason, ErrorCode, Fischer, Game, Line, Player, PlayerInfo, ServerMessage,
};

use crate::request::RequestedRules;
use crate::say::clean;

mod clocks;
mod ending;

pub use clocks::Clocks;

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
    /// While the server holds the turn clock (a player is away): the time
    /// the player to move has left.
    pub paused: Option<Duration>,
    /// A one-line note for the status bar (errors, disconnects, offers).
    pub note: String,
    /// Set once the room has closed under us: no rematch is possible.
    pub closed: Option<ClosedReason>,
    pub connection: Connection,
    /// The game ended while we could not see it (our seat was not taken
    /// back in time): what we can tell of it, instead of a result.
    pub gone: Option<String>,
    /// The latest challenge received and still open.
    pub offer: Option<Offer>,
    /// The game's Fischer clock; `None` for the per-move timer.
    pub fischer: Option<Fischer>,
    /// Both sides' time, once a game with a Fischer clock has started.
    pub clocks: Option<Clocks>,
}

/// A challenge received, to accept or decline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub id: String,
    /// Who sent it, as the status line names players.
    pub from: String,
    pub size: usize,
    /// Marks in a row that win.
    pub win: usize,
    /// The game's Fischer clock, if it has one.
    pub clock: Option<Fischer>,
}

impl Offer {
    /// The board, as people say it: `3×3`, or `15×15, 5 in a row`, with
    /// the time control when there is one (`3×3, 3+2`).
    pub fn board(&self) -> String {
        let n = self.size;
        let mut board = match self.win == n {
            true => format!("{n}×{n}"),
            false => format!("{n}×{n}, {} in a row", self.win),
        };
        if let Some(clock) = self.clock {
            board.push_str(&format!(", {clock}"));
        }
        board
    }
}

/// What the note says while the server restarts.
pub const RESTARTING: &str = "server restarting, reconnecting…";

/// Where the connection to the server stands, as the status line shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Connection {
    /// Connected.
    #[default]
    Connected,
    /// Down, and being re-established until the grace period ends.
    Reconnecting {
        /// When the grace period ends.
        until: Instant,
        /// The server said it is restarting (the game is saved on its side).
        restart: bool,
    },
    /// Gone for good.
    Lost,
}

/// A player as the status line names them: the name, the rating when they
/// have one, and `(bot)` for a bot account.
fn shown(p: &PlayerInfo) -> String {
    let mut out = clean(&p.name);
    if let Some(r) = p.rating {
        out.push_str(&format!(" {r}"));
    }
    if p.bot {
        out.push_str(" (bot)");
    }
    out
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
            paused: None,
            note: String::new(),
            closed: None,
            connection: Connection::Connected,
            gone: None,
            offer: None,
            fischer: None,
            clocks: None,
        }
    }

    /// The rules of the game in view (its board and clock), for a new
    /// quick match like it.
    pub fn rules(&self) -> RequestedRules {
        RequestedRules { size: self.game.size(), win: Some(self.game.win()), clock: self.fischer }
    }

    /// The connection's state changed: while it is down the server has our
    /// clock paused, so the clock shown stops too; back, the room's `state`
    /// sets it again.
    pub fn set_connection(&mut self, now: Connection) {
        if now == self.connection {
            return;
        }
        match (self.connection, now) {
            (Connection::Connected, Connection::Reconnecting { restart, .. }) => {
                self.pause();
                self.note = if restart { RESTARTING } else { "connection lost; reconnecting…" }.into();
            }
            (
                Connection::Reconnecting { restart: false, .. },
                Connection::Reconnecting { restart: true, .. },
            ) => {
                self.note = RESTARTING.into();
            }
            (Connection::Reconnecting { .. }, Connection::Connected) => {
                self.note = "reconnected; the game goes on".into();
            }
            _ => {}
        }
        self.connection = now;
    }

    /// The server pauses the per-move timer while a player is away; a
    /// Fischer clock runs on (the first-move time with it).
    fn pause(&mut self) {
        if self.fischer.is_some() {
            return;
        }
        if let Some(deadline) = self.deadline.take() {
            self.paused = Some(deadline.saturating_duration_since(Instant::now()));
        }
    }

    /// Whether a game is in progress and it is our move.
    pub fn my_turn(&self) -> bool {
        self.over.is_none() && self.you.is_some() && self.game.turn() == self.you
    }

    /// Milliseconds left on the clock of the player to move: frozen while
    /// the server has paused it.
    pub fn clock_ms(&self) -> Option<u64> {
        let d = match (self.paused, self.deadline) {
            (Some(left), _) => left,
            (None, deadline) => deadline?.saturating_duration_since(Instant::now()),
        };
        Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    /// Folds one server message into the view. An open challenge survives
    /// the view's resets (a new queue, a room) until a game starts or it ends.
    pub fn apply(&mut self, msg: &ServerMessage) {
        let offer = self.offer.take();
        self.apply_game(msg);
        self.offer = match msg {
            ServerMessage::Challenged { challenge, from, size, win, clock, .. } => {
                let offer = Offer {
                    id: challenge.to_string(),
                    from: shown(from),
                    size: *size,
                    win: *win,
                    clock: *clock,
                };
                self.note =
                    format!("{} challenges you to {}: a: accept, d: decline", offer.from, offer.board());
                Some(offer)
            }
            ServerMessage::ChallengeEnded { challenge, message, .. } => {
                // It may carry the other player's decline reason: their text.
                self.note = clean(message);
                offer.filter(|o| *o.id != **challenge)
            }
            ServerMessage::GameStarted { .. } => None,
            _ => offer,
        };
    }

    fn apply_game(&mut self, msg: &ServerMessage) {
        match msg {
            ServerMessage::RoomCreated { room, size, win, clock, .. } => {
                *self = View::new(*size, *win);
                self.fischer = *clock;
                self.room = Some(clean(room));
                self.note = format!("room {} is open: share the code", clean(room));
            }
            ServerMessage::Queued { size, win, clock, .. } => {
                *self = View::new(*size, *win);
                self.fischer = *clock;
                self.note = "waiting for an opponent…".into();
            }
            ServerMessage::GameStarted {
                room,
                size,
                win,
                you,
                players,
                turn_timeout_ms,
                clock,
                clocks,
                running,
                moves,
                ..
            } => {
                *self = View::new(*size, *win);
                self.replay(moves); // an organised room's opening, on the board already
                self.set_clocks(*clock, *clocks, *running);
                self.room = Some(clean(room));
                self.you = Some(*you);
                self.names = players.iter().map(shown).collect();
                // On a Fischer clock `turn_timeout_ms` is 0: X's first move has its own 30 s.
                let first = clock.map(|_| Fischer::FIRST_MOVE_MS);
                self.deadline = deadline_in(first.or(Some(*turn_timeout_ms).filter(|&t| t > 0)));
                self.note = "game started".into();
            }
            ServerMessage::Moved { row, col, clock_ms, clocks, running, .. } => {
                self.set_clocks(self.fischer, *clocks, *running);
                let _ = self.game.play(*row, *col);
                self.last = Some((*row, *col));
                self.deadline = deadline_in(*clock_ms);
                self.note.clear();
            }
            ServerMessage::GameOver { winner, reason, line, moves, ratings, clocks, running, .. } => {
                self.set_clocks(self.fischer, *clocks, *running);
                self.stop_clocks();
                if moves.len() != self.game.moves().len() {
                    self.replay(moves);
                }
                // What was said during the game ("game started") is stale now.
                self.note.clear();
                if let (Some(r), Some(me)) = (ratings, self.you) {
                    let mine = r[usize::from(me.number() - 1)];
                    let delta = mine.after - mine.before;
                    self.note = format!("rating {} → {} ({delta:+})", mine.before, mine.after);
                }
                self.over = Some((*winner, *reason, *line));
                self.deadline = None;
            }
            ServerMessage::State {
                room,
                size,
                win,
                moves,
                players,
                you,
                clock_ms,
                turn,
                clock,
                clocks,
                running,
                ..
            } => {
                *self = View::new(*size, *win);
                self.set_clocks(*clock, *clocks, *running);
                self.room = Some(clean(room));
                self.replay(moves);
                self.names = players.iter().map(shown).collect();
                self.you = *you;
                self.deadline = deadline_in(*clock_ms);
                if turn.is_none() && !moves.is_empty() && !self.game.status().is_over() {
                    self.note = "the game is over".into();
                }
            }
            ServerMessage::OpponentDisconnected { grace_ms } => {
                self.pause();
                self.note = format!("opponent disconnected; they have {}s to come back", grace_ms / 1000);
            }
            ServerMessage::OpponentReconnected {} => {
                if let Some(left) = self.paused.take() {
                    self.deadline = Some(Instant::now() + left);
                }
                self.note = "opponent reconnected".into();
            }
            ServerMessage::RematchOffered {} => self.note = "opponent offers a rematch".into(),
            ServerMessage::RoomClosed { reason, .. } => {
                self.closed = Some(*reason);
                self.deadline = None;
                self.stop_clocks();
                self.note = match (reason, self.you) {
                    (ClosedReason::Left, Some(_)) => "your opponent has left the room".into(),
                    (ClosedReason::Disconnect, Some(_)) => {
                        "your opponent's connection is gone; the room has closed".into()
                    }
                    (ClosedReason::Finished, _) => {
                        "the organiser's games are played; the room has closed".into()
                    }
                    (_, None) => "the room has closed: a player left".into(),
                };
            }
            ServerMessage::Error { code: ErrorCode::InvalidToken, .. } => {
                self.seat_lost("the server no longer holds your seat");
                self.note = "n: new game, q: quit".into();
            }
            ServerMessage::Error { code, message, .. } => {
                self.note = crate::say::refusal(*code, message, None, None);
            }
            ServerMessage::ChallengeSent { name, .. } => {
                self.note = format!("challenge sent to {}; waiting for an answer…", clean(name));
            }
            ServerMessage::Welcome { .. }
            | ServerMessage::Pong { .. }
            | ServerMessage::Tournament { .. }
            | ServerMessage::Tournaments { .. }
            | ServerMessage::TournamentUpdate { .. }
            | ServerMessage::Berserked { .. }
            | ServerMessage::Registered { .. }
            | ServerMessage::Authenticated { .. }
            | ServerMessage::Challenged { .. }
            | ServerMessage::ChallengeEnded { .. }
            | ServerMessage::Online { .. } => {}
        }
    }

    /// The game's clock and both sides' time as a message reports them,
    /// counted from now; without `clocks` the last report stands.
    fn set_clocks(&mut self, fischer: Option<Fischer>, clocks: Option<[u64; 2]>, running: Option<Player>) {
        self.fischer = fischer;
        if let Some(left) = clocks.filter(|_| fischer.is_some()) {
            self.clocks = Some(Clocks::new(left, running, Instant::now()));
        }
    }

    /// No clock runs any more (the game is over, the room closed).
    fn stop_clocks(&mut self) {
        self.clocks = self.clocks.map(|c| c.stopped(Instant::now()));
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

    /// A player as the screen names them: the mark, then the name (with the
    /// rating, and `(bot)`) once known, e.g. `X (ann 1500)`.
    pub fn player(&self, p: Player) -> String {
        match self.names.get(usize::from(p.number() - 1)) {
            Some(name) => format!("{} ({name})", p.mark()),
            None => p.mark().to_string(),
        }
    }
}

fn deadline_in(ms: Option<u64>) -> Option<Instant> {
    ms.map(|ms| Instant::now() + Duration::from_millis(ms))
}

#[cfg(test)]
mod tests;
