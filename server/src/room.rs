//! One room as a state machine without I/O: seats, the game, the turn timer,
//! reconnect grace, rematch and spectators.
//!
//! Every input is a method call that takes the current `Instant`; the outputs
//! are queued messages for connections ([`Room::drain`]) and the next moment
//! the room must be woken ([`Room::next_deadline`]). The async task around it
//! (`room_task`) only moves messages and sleeps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{
    ClosedReason, EndReason, ErrorCode, Game, Line, Mark, MoveError, Player, PlayerInfo, RequestId,
    ServerMessage, Status,
};

use crate::codes;
use crate::outbound::{ConnId, Outbound, encode};
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// A seated player's request, forwarded by their connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Place a mark at `(row, col)`.
    Move {
        /// 0-based row as sent (may be negative or too large).
        row: i64,
        /// 0-based column as sent.
        col: i64,
    },
    /// Concede the game.
    Resign,
    /// Ask for a new game with the seats swapped.
    Rematch,
    /// Leave the room (resigning a game in progress).
    Leave,
    /// Send me the room's `state` (seated players and spectators alike).
    Sync,
}

/// The timers a room runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Time per move; `None` = no timer.
    pub turn_timeout: Option<Duration>,
    /// How long a dropped player keeps the seat; zero = they lose at once.
    pub grace: Duration,
}

#[derive(Debug)]
struct Seat {
    conn: ConnId,
    name: Arc<str>,
    token: Arc<str>,
    /// Set while the player's connection is gone: when the seat is forfeited.
    away_until: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A private room with its creator, waiting for a second player.
    Waiting,
    Playing,
    Over,
}

/// One room. `seats[0]` is player 1 (`X`) of the current game.
#[derive(Debug)]
pub struct Room {
    code: Arc<str>,
    size: usize,
    settings: Settings,
    seats: [Option<Seat>; 2],
    game: Game,
    phase: Phase,
    /// When the player to move runs out of time, while the clock runs.
    turn_deadline: Option<Instant>,
    /// The time left to the player to move while the clock is paused.
    paused: Option<Duration>,
    rematch: [bool; 2],
    spectators: Vec<ConnId>,
    out: Vec<(ConnId, Outbound)>,
    closed: bool,
    games_started: u64,
    games_finished: u64,
}

fn seat_player(seat: usize) -> Player {
    if seat == 0 { Player::X } else { Player::O }
}

/// A resume token: the room code, so the lobby can route it, then 128 random bits.
fn new_token(code: &str) -> Arc<str> {
    format!("{code}{}", codes::resume_token()).into()
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Room {
    fn empty(code: Arc<str>, size: usize, settings: Settings) -> Result<Room, ErrorCode> {
        let game = Game::new(size).map_err(|_| ErrorCode::InvalidSize)?;
        Ok(Room {
            code,
            size,
            settings,
            seats: [None, None],
            game,
            phase: Phase::Waiting,
            turn_deadline: None,
            paused: None,
            rematch: [false; 2],
            spectators: Vec::new(),
            out: Vec::new(),
            closed: false,
            games_started: 0,
            games_finished: 0,
        })
    }

    fn seat(&self, conn: ConnId, name: Arc<str>) -> Seat {
        Seat { conn, name, token: new_token(&self.code), away_until: None }
    }

    /// A private room held by its creator, who is told the code (`room_created`).
    pub fn private(
        code: Arc<str>,
        size: usize,
        settings: Settings,
        creator: ConnId,
        name: Arc<str>,
        id: Option<RequestId>,
    ) -> Result<Room, ErrorCode> {
        let mut room = Room::empty(code, size, settings)?;
        room.seats[0] = Some(room.seat(creator, name));
        let msg = ServerMessage::RoomCreated { room: room.code.clone(), size, id };
        room.send(creator, &msg);
        Ok(room)
    }

    /// A room for two matched players; `first` is player 1. The game starts now.
    pub fn paired(
        code: Arc<str>,
        size: usize,
        settings: Settings,
        first: (ConnId, Arc<str>),
        second: (ConnId, Arc<str>),
        now: Instant,
    ) -> Result<Room, ErrorCode> {
        let mut room = Room::empty(code, size, settings)?;
        room.seats = [Some(room.seat(first.0, first.1)), Some(room.seat(second.0, second.1))];
        room.start(now);
        Ok(room)
    }

    /// The room's code.
    pub fn code(&self) -> &Arc<str> {
        &self.code
    }

    /// True once the room holds nobody and its task should end.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Games started and finished in this room so far.
    pub fn game_counts(&self) -> (u64, u64) {
        (self.games_started, self.games_finished)
    }

    /// The messages produced since the last call, in order.
    pub fn drain(&mut self) -> std::vec::Drain<'_, (ConnId, Outbound)> {
        self.out.drain(..)
    }

    /// When the room next needs [`Room::tick`]: a turn running out or a grace ending.
    pub fn next_deadline(&self) -> Option<Instant> {
        let away = self.seats.iter().flatten().filter_map(|s| s.away_until);
        away.chain(self.turn_deadline).min()
    }

    /// A second player takes the empty seat of a private room; with `swap` the
    /// newcomer is player 1. Refused with `room_full` when no seat is free.
    pub fn join(&mut self, conn: ConnId, name: Arc<str>, id: Option<RequestId>, swap: bool, now: Instant) {
        if self.refused_closed(conn, ErrorCode::RoomNotFound, id.clone()) {
            return;
        }
        if self.phase != Phase::Waiting || self.seats[1].is_some() {
            self.refuse(
                conn,
                ErrorCode::RoomFull,
                "both seats of this room are taken; spectate it, or create your own room",
                id,
            );
            self.release(conn);
            return;
        }
        self.seats[1] = Some(self.seat(conn, name));
        if swap {
            self.seats.swap(0, 1);
        }
        self.start(now);
    }

    /// A spectator starts watching: `state` now, then every `moved` and `game_over`.
    pub fn spectate(&mut self, conn: ConnId, id: Option<RequestId>, now: Instant) {
        if self.refused_closed(conn, ErrorCode::RoomNotFound, id.clone()) {
            return;
        }
        self.spectators.push(conn);
        let state = self.state(None, id, now);
        self.send(conn, &state);
    }

    /// A connection takes back a seat with its resume token.
    pub fn resume(&mut self, conn: ConnId, token: &str, id: Option<RequestId>, now: Instant) {
        if self.refused_closed(conn, ErrorCode::InvalidToken, id.clone()) {
            return;
        }
        let seat = match self.phase {
            Phase::Playing => self.seats.iter().position(|s| s.as_ref().is_some_and(|s| &*s.token == token)),
            _ => None,
        };
        let Some(index) = seat else {
            self.refuse(
                conn,
                ErrorCode::InvalidToken,
                "this resume token is not valid (wrong, or its game is over); start a new game",
                id,
            );
            self.release(conn);
            return;
        };
        let Some(s) = self.seats[index].as_mut() else {
            return;
        };
        let old = std::mem::replace(&mut s.conn, conn);
        let was_away = s.away_until.take().is_some();
        if !was_away {
            // The old connection may be half-open, or a second client with
            // the same token: either way this one replaces it.
            self.push(old, Outbound::Replaced { room: self.code.clone() });
        }
        let state = self.state(Some(index), id, now);
        self.send(conn, &state);
        self.signal(conn, true);
        if was_away {
            self.send_seat(1 - index, &ServerMessage::OpponentReconnected {});
            self.unpause(now);
        }
    }

    /// A seated player's request.
    pub fn request(&mut self, conn: ConnId, request: Request, id: Option<RequestId>, now: Instant) {
        let watching = self.spectators.contains(&conn);
        if request == Request::Leave && watching {
            self.spectators.retain(|&c| c != conn);
            return self.release(conn);
        }
        if request == Request::Sync && watching {
            let state = self.state(None, id, now);
            return self.send(conn, &state);
        }
        let Some(seat) = self.seat_of(conn) else {
            let msg = if watching {
                "spectators cannot play; join a game with quick_match or join_room"
            } else if self.closed {
                "this room has closed; send quick_match, create_room or join_room for a new game"
            } else {
                "you have no seat in this room"
            };
            return self.refuse(conn, ErrorCode::NotInGame, msg, id);
        };
        match request {
            Request::Move { row, col } => self.play(seat, row, col, id, now),
            Request::Resign => match self.phase {
                Phase::Playing => {
                    self.finish(2 - seat as u8, EndReason::Resign, None);
                    self.close_if_away();
                }
                Phase::Over => self.refuse(conn, ErrorCode::GameOver, "the game is already over", id),
                Phase::Waiting => self.refuse(
                    conn,
                    ErrorCode::NotInGame,
                    "no game yet: waiting for an opponent to join",
                    id,
                ),
            },
            Request::Rematch => self.rematch(seat, id, now),
            Request::Leave => {
                if self.phase == Phase::Playing {
                    self.finish(2 - seat as u8, EndReason::Resign, None);
                }
                self.close_because(ClosedReason::Left, Some(conn));
            }
            Request::Sync => {
                let state = self.state(Some(seat), id, now);
                self.send(conn, &state);
            }
        }
    }

    /// A connection dropped. A seated player keeps the seat for the grace
    /// period while a game is in progress; otherwise the room closes.
    pub fn disconnect(&mut self, conn: ConnId, now: Instant) {
        self.spectators.retain(|&c| c != conn);
        let Some(seat) = self.seat_of(conn) else {
            return;
        };
        if self.phase != Phase::Playing {
            // Nobody to wait for: the room ends with its pairing.
            self.mark_away(seat, now);
            return self.close_because(ClosedReason::Disconnect, None);
        }
        if self.settings.grace.is_zero() {
            self.mark_away(seat, now);
            self.finish(2 - seat as u8, EndReason::Disconnect, None);
            return self.close_because(ClosedReason::Disconnect, None);
        }
        self.mark_away(seat, now + self.settings.grace);
        self.pause(now);
        let grace_ms = ms(self.settings.grace);
        self.send_seat(1 - seat, &ServerMessage::OpponentDisconnected { grace_ms });
    }

    /// Time passes: forfeits seats whose grace ended and players out of time.
    pub fn tick(&mut self, now: Instant) {
        if self.phase != Phase::Playing {
            return;
        }
        let expired = (0..2)
            .filter_map(|i| {
                let until = self.seats[i].as_ref()?.away_until?;
                (until <= now).then_some((until, i))
            })
            .min();
        if let Some((_, seat)) = expired {
            self.finish(2 - seat as u8, EndReason::Disconnect, None);
            return self.close_because(ClosedReason::Disconnect, None);
        }
        if self.turn_deadline.is_some_and(|d| d <= now) {
            let loser = self.game.turn().map_or(0, |p| usize::from(p.number() - 1));
            self.finish(2 - loser as u8, EndReason::Timeout, None);
        }
    }

    /// The server is stopping: a game in progress ends with `shutdown`.
    pub fn shutdown(&mut self) {
        if self.phase == Phase::Playing {
            self.finish(0, EndReason::Shutdown, None);
        }
        self.close();
    }

    fn play(&mut self, seat: usize, row: i64, col: i64, id: Option<RequestId>, now: Instant) {
        let conn = self.seats[seat].as_ref().map_or(0, |s| s.conn);
        match self.phase {
            Phase::Waiting => {
                return self.refuse(
                    conn,
                    ErrorCode::NotInGame,
                    "no game yet: waiting for an opponent to join",
                    id,
                );
            }
            Phase::Over => {
                return self.refuse(conn, ErrorCode::GameOver, "the game is over; send rematch or leave", id);
            }
            Phase::Playing => {}
        }
        let player = seat_player(seat);
        // Negative or huge coordinates are off the board, like any other.
        let cell = (usize::try_from(row), usize::try_from(col));
        let (r, c) = match cell {
            (Ok(r), Ok(c)) => (r, c),
            _ => (usize::MAX, usize::MAX),
        };
        let status = match self.game.play_as(player, r, c) {
            Ok(status) => status,
            Err(e) => {
                let n = self.size;
                let (code, msg) = match e {
                    MoveError::NotYourTurn => (
                        ErrorCode::NotYourTurn,
                        "it is your opponent's turn; wait for their moved".to_owned(),
                    ),
                    MoveError::OutOfBounds => (
                        ErrorCode::OutOfBounds,
                        format!("row and col must be within 0..{n} on this {n}x{n} board"),
                    ),
                    MoveError::Occupied => (
                        ErrorCode::CellOccupied,
                        format!("cell ({row}, {col}) is taken; choose an empty cell"),
                    ),
                    MoveError::GameOver => (ErrorCode::GameOver, "the game is over".to_owned()),
                };
                return self.refuse(conn, code, msg, id);
            }
        };
        let next = self.game.turn().map(Player::number);
        let clock_ms = next.and(self.settings.turn_timeout).map(ms);
        if next.is_some() {
            self.restart_clock(now);
        }
        let mut moved = ServerMessage::Moved {
            room: self.code.clone(),
            row: r,
            col: c,
            player: player.number(),
            seq: self.game.moves().len(),
            next,
            clock_ms,
            id: None,
        };
        let shared = encode(&moved);
        if id.is_some() {
            if let ServerMessage::Moved { id: slot, .. } = &mut moved {
                *slot = id;
            }
            let own = encode(&moved);
            self.broadcast_except(&shared, Some(conn));
            self.push(conn, Outbound::Frame(own));
        } else {
            self.broadcast_except(&shared, None);
        }
        match status {
            Status::Won { winner, line } => self.finish(winner.number(), EndReason::Line, Some(line)),
            Status::Draw => self.finish(0, EndReason::Draw, None),
            Status::InProgress { .. } => return,
        }
        self.close_if_away();
    }

    fn rematch(&mut self, seat: usize, id: Option<RequestId>, now: Instant) {
        let conn = self.seats[seat].as_ref().map_or(0, |s| s.conn);
        match self.phase {
            Phase::Waiting => {
                self.refuse(conn, ErrorCode::NotInGame, "no game yet: waiting for an opponent to join", id)
            }
            Phase::Playing => self.refuse(
                conn,
                ErrorCode::Busy,
                "the game is still in progress; rematch after game_over",
                id,
            ),
            Phase::Over => {
                if self.rematch[seat] {
                    return;
                }
                self.rematch[seat] = true;
                if self.rematch[1 - seat] {
                    self.seats.swap(0, 1);
                    for s in self.seats.iter_mut().flatten() {
                        s.token = new_token(&self.code);
                    }
                    self.start(now);
                } else {
                    self.send_seat(1 - seat, &ServerMessage::RematchOffered {});
                }
            }
        }
    }

    fn start(&mut self, now: Instant) {
        self.game = match Game::new(self.size) {
            Ok(g) => g,
            Err(_) => return self.close(),
        };
        self.phase = Phase::Playing;
        self.rematch = [false; 2];
        self.paused = None;
        self.turn_deadline = self.settings.turn_timeout.map(|t| now + t);
        self.games_started += 1;
        let players = self.players();
        tracing::debug!(size = self.size, x = %players.first().map_or("", |p| &p.name), o = %players.get(1).map_or("", |p| &p.name), "game started");
        for i in 0..2 {
            let Some(seat) = &self.seats[i] else { continue };
            let (conn, token) = (seat.conn, seat.token.clone());
            let msg = ServerMessage::GameStarted {
                room: self.code.clone(),
                size: self.size,
                you: i as u8 + 1,
                mark: if i == 0 { Mark::X } else { Mark::O },
                players: players.clone(),
                turn: 1,
                resume_token: token,
                turn_timeout_ms: self.settings.turn_timeout.map_or(0, ms),
            };
            // The signal first: a client that reads `game_started` and at
            // once sends a request finds its connection already in the game.
            self.signal(conn, true);
            self.send(conn, &msg);
        }
        for conn in self.spectators.clone() {
            let state = self.state(None, None, now);
            self.send(conn, &state);
        }
    }

    fn finish(&mut self, winner: u8, reason: EndReason, line: Option<Line>) {
        self.phase = Phase::Over;
        self.turn_deadline = None;
        self.paused = None;
        self.games_finished += 1;
        tracing::info!(winner, ?reason, moves = self.game.moves().len(), "game over");
        let msg = ServerMessage::GameOver {
            room: self.code.clone(),
            winner,
            reason,
            line,
            moves: self.game.moves().to_vec(),
        };
        // The signals first: a client that reads `game_over` and at once asks
        // for something new finds its connection already free to go.
        for conn in self.present_seats() {
            self.signal(conn, false);
        }
        let frame = encode(&msg);
        self.broadcast_except(&frame, None);
    }

    /// After a game ends: a seat whose player is gone cannot rematch, so the
    /// pairing ends and whoever is still here is told.
    fn close_if_away(&mut self) {
        if self.anyone_away() {
            self.close_because(ClosedReason::Disconnect, None);
        }
    }

    /// Closes the room, telling everyone still attached but `leaver` why.
    fn close_because(&mut self, reason: ClosedReason, leaver: Option<ConnId>) {
        if self.closed {
            return;
        }
        let frame = encode(&ServerMessage::RoomClosed { room: self.code.clone(), reason });
        let seats = self.seats.iter().flatten().filter(|s| s.away_until.is_none()).map(|s| s.conn);
        let told: Vec<ConnId> =
            seats.chain(self.spectators.iter().copied()).filter(|&c| Some(c) != leaver).collect();
        // Released before told: a client that reads `room_closed` and at once
        // asks for something new finds its connection already out of the room.
        self.close();
        for conn in told {
            self.push(conn, Outbound::Frame(frame.clone()));
        }
    }

    /// Refuses an entry request to a room that has closed; true if it did.
    fn refused_closed(&mut self, conn: ConnId, code: ErrorCode, id: Option<RequestId>) -> bool {
        if self.closed {
            self.refuse(conn, code, "that room has closed; start a new game", id);
            self.release(conn);
        }
        self.closed
    }

    /// Ends the room without a word (shutdown, or nobody left to tell).
    fn close(&mut self) {
        if self.closed {
            return;
        }
        for conn in self.present_seats() {
            self.release(conn);
        }
        for conn in std::mem::take(&mut self.spectators) {
            self.release(conn);
        }
        self.seats = [None, None];
        self.turn_deadline = None;
        self.closed = true;
    }

    fn mark_away(&mut self, seat: usize, until: Instant) {
        if let Some(s) = self.seats[seat].as_mut() {
            s.away_until = Some(until);
        }
    }

    fn restart_clock(&mut self, now: Instant) {
        let Some(timeout) = self.settings.turn_timeout else {
            return;
        };
        if self.anyone_away() {
            self.paused = Some(timeout);
            self.turn_deadline = None;
        } else {
            self.turn_deadline = Some(now + timeout);
        }
    }

    fn pause(&mut self, now: Instant) {
        if let Some(deadline) = self.turn_deadline.take() {
            self.paused = Some(deadline.saturating_duration_since(now));
        }
    }

    fn unpause(&mut self, now: Instant) {
        if !self.anyone_away() {
            if let Some(left) = self.paused.take() {
                self.turn_deadline = Some(now + left);
            }
        }
    }

    fn anyone_away(&self) -> bool {
        self.seats.iter().flatten().any(|s| s.away_until.is_some())
    }

    fn clock(&self, now: Instant) -> Option<u64> {
        if self.phase != Phase::Playing {
            return None;
        }
        let left = match self.turn_deadline {
            Some(d) => d.saturating_duration_since(now),
            None => self.paused?,
        };
        Some(ms(left))
    }

    fn state(&self, you: Option<usize>, id: Option<RequestId>, now: Instant) -> ServerMessage {
        ServerMessage::State {
            room: self.code.clone(),
            size: self.size,
            board: self.game.board(),
            moves: self.game.moves().to_vec(),
            turn: if self.phase == Phase::Playing { self.game.turn().map(Player::number) } else { None },
            players: self.players(),
            you: you.map(|i| i as u8 + 1),
            clock_ms: self.clock(now),
            id,
        }
    }

    fn players(&self) -> Vec<PlayerInfo> {
        self.seats.iter().flatten().map(|s| PlayerInfo { name: s.name.clone() }).collect()
    }

    fn seat_of(&self, conn: ConnId) -> Option<usize> {
        (0..2).find(|&i| self.seats[i].as_ref().is_some_and(|s| s.conn == conn && s.away_until.is_none()))
    }

    /// Connections of seats whose player is connected.
    fn present_seats(&self) -> Vec<ConnId> {
        self.seats.iter().flatten().filter(|s| s.away_until.is_none()).map(|s| s.conn).collect()
    }

    /// Queues `frame` for every present player and spectator but `skip`;
    /// no allocation beyond the queue itself.
    fn broadcast_except(&mut self, frame: &Utf8Bytes, skip: Option<ConnId>) {
        let seats = self.seats.iter().flatten().filter(|s| s.away_until.is_none());
        let recipients = seats.map(|s| s.conn).chain(self.spectators.iter().copied());
        for conn in recipients.filter(|&c| Some(c) != skip) {
            self.out.push((conn, Outbound::Frame(frame.clone())));
        }
    }

    fn send_seat(&mut self, seat: usize, msg: &ServerMessage) {
        if let Some(s) = self.seats[seat].as_ref().filter(|s| s.away_until.is_none()) {
            let conn = s.conn;
            self.send(conn, msg);
        }
    }

    fn send(&mut self, conn: ConnId, msg: &ServerMessage) {
        self.push(conn, Outbound::Frame(encode(msg)));
    }

    fn refuse(&mut self, conn: ConnId, code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) {
        self.send(conn, &ServerMessage::error(code, message, id));
    }

    fn signal(&mut self, conn: ConnId, live: bool) {
        self.push(conn, Outbound::Live { room: self.code.clone(), live });
    }

    fn release(&mut self, conn: ConnId) {
        self.push(conn, Outbound::Released { room: self.code.clone() });
    }

    fn push(&mut self, conn: ConnId, item: Outbound) {
        self.out.push((conn, item));
    }
}

#[cfg(test)]
mod tests;
