//! What a client knows of its game, kept up to date from server messages.

use std::time::{Duration, Instant};

use tictactoe_protocol::api::GameRecord;
use tictactoe_protocol::{ClosedReason, EndReason, ErrorCode, Game, Line, Player, PlayerInfo, ServerMessage};

use crate::say::clean;

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
    /// Where the connection stands.
    pub connection: Connection,
    /// The game ended while we could not see it (our seat was not taken
    /// back in time): what we can tell of it, instead of a result.
    pub gone: Option<String>,
    /// The latest challenge received and still open.
    pub offer: Option<Offer>,
}

/// A challenge received, to accept or decline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The challenge's id.
    pub id: String,
    /// Who sent it, as the status line names players.
    pub from: String,
    /// Board size.
    pub size: usize,
    /// Marks in a row that win.
    pub win: usize,
}

impl Offer {
    /// The board, as people say it: `3×3`, or `15×15, 5 in a row`.
    pub fn board(&self) -> String {
        let n = self.size;
        match self.win == n {
            true => format!("{n}×{n}"),
            false => format!("{n}×{n}, {} in a row", self.win),
        }
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
        }
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
                if let Some(deadline) = self.deadline.take() {
                    self.paused = Some(deadline.saturating_duration_since(Instant::now()));
                }
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

    /// Our seat could not be taken back (`why`): a game in progress ended
    /// while we were away, and we say so instead of showing a live board.
    pub fn seat_lost(&mut self, why: &str) {
        let playing = self.you.is_some() && self.over.is_none() && self.game.turn().is_some();
        if playing {
            self.over = Some((None, EndReason::Disconnect, None));
            self.gone = Some(format!(
                "Game over while you were away: {why}. A seat not taken back within the grace period is lost by disconnect."
            ));
        }
        self.deadline = None;
        self.paused = None;
    }

    /// Our seat's game ended while we were away, and the server's record of
    /// it (`GET /api/games/{id}`) says how: the final board and the result
    /// take the place of the live game. Our mark is the one we had, else
    /// `kept` (a seat file's, for a client started again), else the seat
    /// named `name` (who we play as) if only one is; the room is gone for
    /// us, so no rematch is offered. `false`, and nothing changed, for a
    /// record of a board no game can have.
    pub fn ended(&mut self, record: &GameRecord, name: &str, kept: Option<Player>) -> bool {
        let Ok(game) = Game::with_win(record.size, record.win) else { return false };
        let named: Vec<Player> = [Player::X, Player::O]
            .into_iter()
            .zip(&record.players)
            .filter(|(_, p)| p.name.eq_ignore_ascii_case(name))
            .map(|(mark, _)| mark)
            .collect();
        let by_name = if let [mark] = named[..] { Some(mark) } else { None };
        self.you = self.you.or(kept).or(by_name);
        self.game = game;
        self.replay(&record.moves);
        self.names = record
            .players
            .iter()
            .map(|p| {
                let info = PlayerInfo {
                    name: p.name.as_str().into(),
                    account: p.account,
                    bot: p.bot,
                    rating: p.rating,
                };
                shown(&info)
            })
            .collect();
        let winner = match record.winner {
            1 => Some(Player::X),
            2 => Some(Player::O),
            _ => None,
        };
        self.over = Some((winner, record.reason, record.line));
        self.room = Some(clean(&record.room));
        self.closed = Some(ClosedReason::Disconnect);
        self.gone = None;
        self.deadline = None;
        self.paused = None;
        self.note = "your game ended while you were away; n: new game, q: quit".into();
        true
    }

    /// Whether a game is in progress and it is our move.
    pub fn my_turn(&self) -> bool {
        self.over.is_none() && self.you.is_some() && self.game.turn() == self.you
    }

    /// Milliseconds left on the clock of the player to move.
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
            ServerMessage::Challenged { challenge, from, size, win, .. } => {
                let offer = Offer { id: challenge.to_string(), from: shown(from), size: *size, win: *win };
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
            ServerMessage::RoomCreated { room, size, win, .. } => {
                *self = View::new(*size, *win);
                self.room = Some(clean(room));
                self.note = format!("room {} is open: share the code", clean(room));
            }
            ServerMessage::Queued { size, win, .. } => {
                *self = View::new(*size, *win);
                self.note = "waiting for an opponent…".into();
            }
            ServerMessage::GameStarted { room, size, win, you, players, turn_timeout_ms, .. } => {
                *self = View::new(*size, *win);
                self.room = Some(clean(room));
                self.you = Some(*you);
                self.names = players.iter().map(shown).collect();
                self.deadline = clock(Some(*turn_timeout_ms).filter(|&t| t > 0));
                self.note = "game started".into();
            }
            ServerMessage::Moved { row, col, clock_ms, .. } => {
                let _ = self.game.play(*row, *col);
                self.last = Some((*row, *col));
                self.deadline = clock(*clock_ms);
                self.note.clear();
            }
            ServerMessage::GameOver { winner, reason, line, moves, ratings, .. } => {
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
            ServerMessage::State { room, size, win, moves, players, you, clock_ms, turn, .. } => {
                *self = View::new(*size, *win);
                self.room = Some(clean(room));
                self.replay(moves);
                self.names = players.iter().map(shown).collect();
                self.you = *you;
                self.deadline = clock(*clock_ms);
                if turn.is_none() && !moves.is_empty() && !self.game.status().is_over() {
                    self.note = "the game is over".into();
                }
            }
            ServerMessage::OpponentDisconnected { grace_ms } => {
                // The server pauses the turn clock while a player is away.
                if let Some(deadline) = self.deadline.take() {
                    self.paused = Some(deadline.saturating_duration_since(Instant::now()));
                }
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
                self.note = match (reason, self.you) {
                    (ClosedReason::Left, Some(_)) => "your opponent has left the room".into(),
                    (ClosedReason::Disconnect, Some(_)) => {
                        "your opponent's connection is gone; the room has closed".into()
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
            | ServerMessage::Registered { .. }
            | ServerMessage::Authenticated { .. }
            | ServerMessage::Challenged { .. }
            | ServerMessage::ChallengeEnded { .. }
            | ServerMessage::Online { .. } => {}
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

    /// A player as the screen names them: the mark, then the name (with the
    /// rating, and `(bot)`) once known, e.g. `X (ann 1500)`.
    pub fn player(&self, p: Player) -> String {
        match self.names.get(usize::from(p.number() - 1)) {
            Some(name) => format!("{} ({name})", p.mark()),
            None => p.mark().to_string(),
        }
    }

    /// One line saying how the game ended, in a player's words: from our
    /// seat's point of view, or, watching, by the players' marks and names.
    pub fn result_line(&self) -> Option<String> {
        if let Some(gone) = &self.gone {
            return Some(gone.clone());
        }
        let (winner, reason, _) = self.over?;
        let Some(winner) = winner else {
            let why = match reason {
                EndReason::Draw => "Draw — the board is full",
                EndReason::Shutdown => "No winner — the server shut down",
                EndReason::Aborted => "Aborted — the game ended before both players had moved",
                _ => "No winner",
            };
            return Some(format!("Result: {why}"));
        };
        let loser = winner.other();
        let (head, them) = match self.you {
            Some(me) if me == winner => ("You won".to_owned(), "your opponent".to_owned()),
            Some(_) => ("You lost".to_owned(), "you".to_owned()),
            None => (format!("{} won", self.player(winner)), loser.mark().to_string()),
        };
        let how = match reason {
            EndReason::Resign => format!(" — {them} resigned"),
            EndReason::Timeout => format!(" — {them} ran out of time"),
            EndReason::Disconnect if them == "you" => " — your connection was gone too long".to_owned(),
            EndReason::Disconnect => format!(" — {them} did not come back"),
            _ => String::new(),
        };
        Some(format!("Result: {head}{how}"))
    }
}

fn clock(ms: Option<u64>) -> Option<Instant> {
    ms.map(|ms| Instant::now() + Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tictactoe_protocol::PlayerInfo;

    fn started(you: Player, clock_ms: u64) -> View {
        let mut v = View::default();
        v.apply(&ServerMessage::GameStarted {
            room: Arc::from("R"),
            size: 3,
            win: 3,
            you,
            mark: you,
            players: vec![PlayerInfo::guest("ann"), PlayerInfo::guest("bob")],
            turn: Player::X,
            resume_token: Arc::from("t"),
            turn_timeout_ms: clock_ms,
        });
        v
    }

    /// The room's `state` on an empty 3×3 board, X (us) to move with `clock_ms` left.
    fn state(clock_ms: Option<u64>) -> ServerMessage {
        ServerMessage::State {
            room: Arc::from("R"),
            size: 3,
            win: 3,
            board: vec!["...".into(); 3],
            moves: vec![],
            turn: Some(Player::X),
            players: vec![PlayerInfo::guest("ann"), PlayerInfo::guest("bob")],
            you: Some(Player::X),
            clock_ms,
            id: None,
        }
    }

    #[test]
    fn our_own_connection_down_freezes_the_clock_and_says_so() {
        let mut v = started(Player::X, 30_000);
        let until = Instant::now() + Duration::from_secs(20);
        v.set_connection(Connection::Reconnecting { until, restart: false });
        assert_eq!(v.connection, Connection::Reconnecting { until, restart: false });
        assert!(v.note.contains("reconnecting"), "{}", v.note);
        let frozen = v.clock_ms().expect("a clock");
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(v.clock_ms(), Some(frozen), "the server pauses our clock while we are away");
        v.set_connection(Connection::Connected);
        assert!(v.note.contains("reconnected"), "{}", v.note);
        // Back, the room's `state` sets the clock from the server's count.
        v.apply(&state(Some(12_000)));
        assert!(v.clock_ms().is_some_and(|ms| ms <= 12_000 && ms > 11_000));
    }

    #[test]
    fn a_seat_not_taken_back_ends_the_game_in_words() {
        let mut v = started(Player::O, 0);
        assert!(v.result_line().is_none());
        v.apply(&ServerMessage::error(ErrorCode::InvalidToken, "this resume token is not valid", None));
        assert!(v.over.is_some() && !v.my_turn());
        let said = v.result_line().expect("a result");
        assert!(said.starts_with("Game over while you were away"), "{said}");
        assert!(v.note.contains("n: new game"), "{}", v.note);
        // Between games, an invalid token changes nothing of a finished game.
        let mut idle = View::default();
        idle.seat_lost("gone");
        assert!(idle.result_line().is_none());
    }

    #[test]
    fn the_clock_stops_while_the_opponent_is_away_and_goes_on_after() {
        let mut v = started(Player::X, 30_000);
        v.apply(&ServerMessage::OpponentDisconnected { grace_ms: 30_000 });
        let frozen = v.clock_ms().expect("a clock");
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(v.clock_ms(), Some(frozen), "paused: it does not count down");
        v.apply(&ServerMessage::OpponentReconnected {});
        std::thread::sleep(Duration::from_millis(30));
        assert!(v.clock_ms().is_some_and(|ms| ms < frozen), "running again");
        // A snapshot from the server sets it anew.
        v.apply(&state(Some(5_000)));
        assert!(v.clock_ms().is_some_and(|ms| ms <= 5_000 && ms > 4_000));
    }

    #[test]
    fn an_open_challenge_is_kept_until_a_game_starts_or_it_ends() {
        let mut v = View::default();
        let offer = |id: &str| ServerMessage::Challenged {
            challenge: Arc::from(id),
            from: PlayerInfo { name: "ann".into(), account: true, bot: false, rating: Some(1500) },
            size: 15,
            win: 5,
            expires_ms: 30_000,
        };
        v.apply(&offer("c1"));
        assert_eq!(v.note, "ann 1500 challenges you to 15×15, 5 in a row: a: accept, d: decline");
        v.apply(&ServerMessage::Queued { size: 3, win: 3, id: None });
        assert_eq!(v.offer.as_ref().map(|o| o.id.as_str()), Some("c1"), "kept while queued");
        let ended = |id: &str| ServerMessage::ChallengeEnded {
            challenge: Arc::from(id),
            reason: tictactoe_protocol::ChallengeEndReason::Expired,
            message: "nobody answered".into(),
        };
        v.apply(&ended("other"));
        assert!(v.offer.is_some(), "another challenge's end");
        v.apply(&ended("c1"));
        assert!(v.offer.is_none());
        v.apply(&offer("c2"));
        v.apply(&crate::fixtures::game_started("t"));
        assert!(v.offer.is_none(), "a game started: the server ended it");
    }

    #[test]
    fn results_are_told_in_words() {
        let cases = [
            (Player::X, Some(Player::X), EndReason::Line, "Result: You won"),
            (Player::O, Some(Player::X), EndReason::Line, "Result: You lost"),
            (Player::X, None, EndReason::Draw, "Result: Draw — the board is full"),
            (Player::X, Some(Player::X), EndReason::Resign, "Result: You won — your opponent resigned"),
            (Player::O, Some(Player::X), EndReason::Resign, "Result: You lost — you resigned"),
            (Player::X, Some(Player::O), EndReason::Timeout, "Result: You lost — you ran out of time"),
            (
                Player::O,
                Some(Player::O),
                EndReason::Disconnect,
                "Result: You won — your opponent did not come back",
            ),
            (
                Player::O,
                Some(Player::X),
                EndReason::Disconnect,
                "Result: You lost — your connection was gone too long",
            ),
            (Player::X, None, EndReason::Shutdown, "Result: No winner — the server shut down"),
        ];
        for (you, winner, reason, want) in cases {
            let mut v = started(you, 0);
            v.over = Some((winner, reason, None));
            assert_eq!(v.result_line().as_deref(), Some(want), "{you:?} {winner:?} {reason:?}");
        }
        let mut watching = started(Player::X, 0);
        watching.you = None;
        watching.over = Some((Some(Player::X), EndReason::Resign, None));
        assert_eq!(watching.result_line().as_deref(), Some("Result: X (ann) won — O resigned"));
    }
}
