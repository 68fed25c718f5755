//! One room as a state machine without I/O: seats, the game, the turn timer,
//! reconnect grace, rematch and spectators.
//!
//! Every input is a method call that takes the current `Instant`; the outputs
//! are [`Output`]s for the task around it ([`Room::drain`]) and the next
//! moment the room must be woken ([`Room::next_deadline`]), in the shape of
//! quinn-proto's `poll_transmit` / `poll_timeout`. The room knows nothing of
//! tokio, sockets, queues or serialization: its task (`room::task`) encodes
//! the messages and delivers them.

mod clock;
mod output;
mod play;
mod seat;
pub mod task;

pub use output::{ConnId, Outbox, Output};
pub use seat::{INVALID_TOKEN, token_room};

use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{
    ClosedReason, EndReason, ErrorCode, Game, Outcome, Player, PlayerInfo, RequestId, ServerMessage,
};

use clock::TurnClock;
use seat::Seat;

/// A player's request to the room it is in, forwarded by their connection.
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A private room with its creator, waiting for a second player.
    Waiting,
    Playing,
    Over,
}

/// The refusal for a request that needs a game when the room has none yet.
const NO_GAME_YET: &str = "no game yet: waiting for an opponent to join";

/// The refusal for any request that reaches a room after it closed.
pub const ROOM_CLOSED: &str =
    "this room has closed; send quick_match, create_room or join_room for a new game";

/// One room. `seats[0]` is player 1 (`X`) of the current game.
#[derive(Debug)]
pub struct Room {
    code: Arc<str>,
    size: usize,
    settings: Settings,
    seats: [Option<Seat>; 2],
    game: Game,
    phase: Phase,
    clock: TurnClock,
    rematch: [bool; 2],
    spectators: Vec<ConnId>,
    out: Outbox,
    closed: bool,
    games_started: u64,
    games_finished: u64,
}

/// The player in seat index `seat` (0 or 1) of the current game.
fn seat_player(seat: usize) -> Player {
    if seat == 0 { Player::X } else { Player::O }
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
            clock: TurnClock::new(settings.turn_timeout),
            rematch: [false; 2],
            spectators: Vec::new(),
            out: Outbox::default(),
            closed: false,
            games_started: 0,
            games_finished: 0,
        })
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
        room.seats[0] = Some(Seat::new(&room.code, creator, name));
        let msg = ServerMessage::RoomCreated { room: room.code.clone(), size, id };
        room.out.send(creator, msg);
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
        room.seats =
            [Some(Seat::new(&room.code, first.0, first.1)), Some(Seat::new(&room.code, second.0, second.1))];
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

    /// What the room asks for since the last call, in order, with the
    /// recipients its broadcasts index.
    pub fn drain(&mut self) -> (std::vec::Drain<'_, Output>, &[ConnId]) {
        self.out.drain()
    }

    /// When the room next needs [`Room::tick`]: a turn running out or a grace ending.
    pub fn next_deadline(&self) -> Option<Instant> {
        let away = self.seats.iter().flatten().filter_map(|s| s.away_until);
        away.chain(self.clock.deadline()).min()
    }

    /// A second player takes the empty seat of a private room; with `swap` the
    /// newcomer is player 1. Refused with `room_full` when no seat is free.
    pub fn join(&mut self, conn: ConnId, name: Arc<str>, id: Option<RequestId>, swap: bool, now: Instant) {
        if self.refused_closed(conn, ErrorCode::RoomNotFound, id.clone()) {
            return;
        }
        if self.phase != Phase::Waiting || self.seats[1].is_some() {
            let msg = "both seats of this room are taken; spectate it, or create your own room";
            self.refuse(conn, ErrorCode::RoomFull, msg, id);
            return self.out.push(Output::Release { to: conn });
        }
        self.seats[1] = Some(Seat::new(&self.code, conn, name));
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
        self.out.send(conn, state);
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
        let Some(s) = seat.and_then(|i| self.seats[i].as_mut()) else {
            self.refuse(conn, ErrorCode::InvalidToken, INVALID_TOKEN, id);
            return self.out.push(Output::Release { to: conn });
        };
        let old = std::mem::replace(&mut s.conn, conn);
        let was_away = s.away_until.take().is_some();
        let index = seat.unwrap_or_default();
        if !was_away {
            // The old connection may be half-open, or a second client with
            // the same token: either way this one replaces it.
            self.out.push(Output::Replace { to: old });
        }
        self.out.push(Output::Live { to: conn, live: true });
        let state = self.state(Some(index), id, now);
        self.out.send(conn, state);
        if was_away {
            self.send_seat(1 - index, ServerMessage::OpponentReconnected {});
            if !self.anyone_away() {
                self.clock.resume(now);
            }
        }
    }

    /// A request from a connection in the room.
    pub fn request(&mut self, conn: ConnId, request: Request, id: Option<RequestId>, now: Instant) {
        let watching = self.spectators.contains(&conn);
        if request == Request::Leave && watching {
            self.spectators.retain(|&c| c != conn);
            return self.out.push(Output::Release { to: conn });
        }
        if request == Request::Sync && watching {
            let state = self.state(None, id, now);
            return self.out.send(conn, state);
        }
        let Some(seat) = self.seat_of(conn) else {
            let msg = if watching {
                "spectators cannot play; join a game with quick_match or join_room"
            } else if self.closed {
                ROOM_CLOSED
            } else {
                "you have no seat in this room"
            };
            return self.refuse(conn, ErrorCode::NotInGame, msg, id);
        };
        let opponent = Outcome::Decisive { winner: seat_player(seat).other() };
        match request {
            Request::Move { row, col } => self.play(seat, row, col, id, now),
            Request::Resign => match self.phase {
                Phase::Playing => {
                    self.finish(Some(opponent), EndReason::Resign, None);
                    self.close_if_away();
                }
                Phase::Over => self.refuse(conn, ErrorCode::GameOver, "the game is already over", id),
                Phase::Waiting => self.refuse(conn, ErrorCode::NotInGame, NO_GAME_YET, id),
            },
            Request::Rematch => self.rematch(seat, id, now),
            Request::Leave => {
                if self.phase == Phase::Playing {
                    self.finish(Some(opponent), EndReason::Resign, None);
                }
                self.close_because(ClosedReason::Left, Some(conn));
            }
            Request::Sync => {
                let state = self.state(Some(seat), id, now);
                self.out.send(conn, state);
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
        let grace = self.settings.grace;
        if self.phase == Phase::Playing && !grace.is_zero() {
            self.mark_away(seat, now + grace);
            self.clock.pause(now);
            self.send_seat(1 - seat, ServerMessage::OpponentDisconnected { grace_ms: ms(grace) });
            return;
        }
        self.mark_away(seat, now);
        if self.phase == Phase::Playing {
            let winner = seat_player(seat).other();
            self.finish(Some(Outcome::Decisive { winner }), EndReason::Disconnect, None);
        }
        // Nobody to wait for: the room ends with its pairing.
        self.close_because(ClosedReason::Disconnect, None);
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
            let winner = seat_player(seat).other();
            self.finish(Some(Outcome::Decisive { winner }), EndReason::Disconnect, None);
            return self.close_because(ClosedReason::Disconnect, None);
        }
        if self.clock.deadline().is_some_and(|d| d <= now) {
            if let Some(late) = self.game.turn() {
                self.finish(Some(Outcome::Decisive { winner: late.other() }), EndReason::Timeout, None);
            }
        }
    }

    /// The server is stopping: a game in progress ends with `shutdown`.
    pub fn shutdown(&mut self) {
        if self.phase == Phase::Playing {
            self.finish(None, EndReason::Shutdown, None);
        }
        self.close();
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
        let told: Vec<ConnId> = self.attached().filter(|&c| Some(c) != leaver).collect();
        // Released before told: a client that reads `room_closed` and at once
        // asks for something new finds its connection already out of the room.
        self.close();
        let msg = ServerMessage::RoomClosed { room: self.code.clone(), reason };
        self.out.broadcast(msg, told.into_iter());
    }

    /// Ends the room without a word (shutdown, or nobody left to tell).
    fn close(&mut self) {
        if self.closed {
            return;
        }
        let attached: Vec<ConnId> = self.attached().collect();
        for to in attached {
            self.out.push(Output::Release { to });
        }
        self.spectators.clear();
        self.seats = [None, None];
        self.clock.stop();
        self.closed = true;
    }

    /// Refuses an entry request to a room that has closed; true if it did.
    fn refused_closed(&mut self, conn: ConnId, code: ErrorCode, id: Option<RequestId>) -> bool {
        if self.closed {
            self.refuse(conn, code, "that room has closed; start a new game", id);
            self.out.push(Output::Release { to: conn });
        }
        self.closed
    }

    fn mark_away(&mut self, seat: usize, until: Instant) {
        if let Some(s) = self.seats[seat].as_mut() {
            s.away_until = Some(until);
        }
    }

    fn anyone_away(&self) -> bool {
        self.seats.iter().flatten().any(|s| !s.present())
    }

    fn state(&self, you: Option<usize>, id: Option<RequestId>, now: Instant) -> ServerMessage {
        let playing = self.phase == Phase::Playing;
        ServerMessage::State {
            room: self.code.clone(),
            size: self.size,
            board: self.game.board(),
            moves: self.game.moves().to_vec(),
            turn: if playing { self.game.turn() } else { None },
            players: self.players(),
            you: you.map(seat_player),
            clock_ms: self.clock.left(now).filter(|_| playing).map(ms),
            id,
        }
    }

    fn players(&self) -> Vec<PlayerInfo> {
        self.seats.iter().flatten().map(|s| PlayerInfo { name: s.name.clone() }).collect()
    }

    /// The seat of a present player's connection.
    fn seat_of(&self, conn: ConnId) -> Option<usize> {
        (0..2).find(|&i| self.seats[i].as_ref().is_some_and(|s| s.conn == conn && s.present()))
    }

    /// Every connection that hears the room: present players, then spectators.
    fn attached(&self) -> impl Iterator<Item = ConnId> + '_ {
        let seats = self.seats.iter().flatten().filter(|s| s.present()).map(|s| s.conn);
        seats.chain(self.spectators.iter().copied())
    }

    /// Queues `msg` once for everyone attached but `skip`.
    fn broadcast(&mut self, msg: ServerMessage, skip: Option<ConnId>) {
        let seats = self.seats.iter().flatten().filter(|s| s.present()).map(|s| s.conn);
        let to = seats.chain(self.spectators.iter().copied()).filter(|&c| Some(c) != skip);
        self.out.broadcast(msg, to);
    }

    fn send_seat(&mut self, seat: usize, msg: ServerMessage) {
        if let Some(s) = self.seats[seat].as_ref().filter(|s| s.present()) {
            let conn = s.conn;
            self.out.send(conn, msg);
        }
    }

    fn refuse(&mut self, conn: ConnId, code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) {
        self.out.send(conn, ServerMessage::error(code, message, id));
    }
}

#[cfg(test)]
mod tests;
