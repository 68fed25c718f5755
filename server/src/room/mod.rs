//! One room as a state machine without I/O: seats, the game, the turn timer,
//! reconnect grace, rematch and spectators.
//!
//! Every input is a method call that takes the current `Instant`; the outputs
//! are [`Output`]s for the task around it ([`Room::drain`]) and the next
//! moment the room must be woken ([`Room::next_deadline`]), in the shape of
//! quinn-proto's `poll_transmit` / `poll_timeout`. The room knows nothing of
//! tokio, sockets, queues or serialization: its task (`task`) encodes
//! the messages and delivers them.

mod clock;
mod close;
mod games;
mod house;
mod restore;
mod seats;
pub(crate) mod task;

use house::HOUSE;
pub use house::HOUSE_NAME;
pub use seats::{INVALID_TOKEN, game_over_refusal, token_room};

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{
    ClosedReason, EndReason, ErrorCode, Game, HouseLevel, MoveError, Outcome, Player, PlayerInfo, RequestId,
    ServerMessage, SizeError, Status,
};

pub use tictactoe_protocol::Rules;

use crate::core::account::{Identity, TokenHash};
use crate::core::stats::Counts;
use crate::store::changes::LiveWrite;
use crate::store::record::GameRecord;
use clock::TurnClock;
use rand::rngs::StdRng;
use seats::Seat;

/// The timers a room runs with, and whether it keeps records.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Time per move; `None` = no timer.
    pub turn_timeout: Option<Duration>,
    /// How long a dropped player keeps the seat; zero = they lose at once.
    pub grace: Duration,
    /// With a store: the ratings that games between accounts move. Each
    /// finished game then has an id and an [`Output::Record`].
    pub records: bool,
    /// Wall-clock time as the room reads it off its `now` (game ids start with it).
    pub wall: WallClock,
}

/// Wall-clock time from an [`Instant`]: an anchor taken once, so that a
/// room reads the time only from the `now` it is handed.
#[derive(Debug, Clone, Copy)]
pub struct WallClock {
    at: Instant,
    unix_ms: i64,
}

impl WallClock {
    /// Anchored at the present.
    pub fn now() -> WallClock {
        WallClock { at: Instant::now(), unix_ms: crate::store::record::unix_ms(std::time::SystemTime::now()) }
    }

    /// Milliseconds since the Unix epoch at `t`.
    pub fn unix_ms(&self, t: Instant) -> i64 {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        match t.checked_duration_since(self.at) {
            Some(after) => self.unix_ms.saturating_add(ms(after)),
            None => self.unix_ms.saturating_sub(ms(self.at - t)),
        }
    }
}

use crate::cmd::Request;
/// A connection's number, unique for the server's lifetime.
use crate::core::ids::ConnId;

/// One thing for the room's task to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send `msg` to one connection.
    Send {
        /// The recipient.
        to: ConnId,
        /// The message.
        msg: ServerMessage,
    },
    /// Send `msg` to several connections: serialize it once.
    Broadcast {
        /// The message.
        msg: ServerMessage,
        /// Where the recipients are in the slice that [`Outbox::drain`] gives.
        to: Range<usize>,
    },
    /// A game the connection plays in started (`true`) or ended (`false`).
    Live {
        /// The player's connection.
        to: ConnId,
        /// Whether a game is in progress.
        live: bool,
    },
    /// The room no longer holds the connection.
    Release {
        /// The released connection.
        to: ConnId,
    },
    /// Another connection took over this one's seat with `resume`.
    Replace {
        /// The replaced connection.
        to: ConnId,
    },
    /// With records kept: a change to the saved copy of the game in
    /// progress, for the store (a `Start`'s time is the task's to stamp).
    Save(LiveWrite),
    /// The house is to play move number `seq` of `game` at `level`: its
    /// choice comes back through [`Room::house_move`].
    Think {
        /// The move's number: 1 for the first.
        seq: usize,
        /// The game as it stands.
        game: Box<Game>,
        /// How strong the house plays.
        level: HouseLevel,
        /// Whom the house plays, for taking turns with other players' searches.
        asker: crate::house::Asker,
    },
    /// A game finished: its record for the store, with how long it lasted
    /// (the task knows the wall clock).
    Record {
        /// The record, its times still to be stamped.
        record: Box<GameRecord>,
        /// From the game's start to its end.
        lasted: Duration,
        /// The connections of player 1 and player 2 as the game ended, if
        /// they were there: who hears of the new ratings.
        players: [Option<ConnId>; 2],
    },
}

/// The room's queue of outputs. A broadcast's recipients are recorded when it
/// is queued (who is in the room then), in one buffer reused across calls, so
/// that a move allocates nothing here.
#[derive(Debug, Default)]
pub struct Outbox {
    out: Vec<Output>,
    recipients: Vec<ConnId>,
}

impl Outbox {
    /// Queues `msg` for `to`.
    pub fn send(&mut self, to: ConnId, msg: ServerMessage) {
        self.out.push(Output::Send { to, msg });
    }

    /// Queues `msg` once for all of `to`.
    pub fn broadcast(&mut self, msg: ServerMessage, to: impl Iterator<Item = ConnId>) {
        if self.out.is_empty() {
            self.recipients.clear();
        }
        let start = self.recipients.len();
        self.recipients.extend(to);
        let to = start..self.recipients.len();
        if !to.is_empty() {
            self.out.push(Output::Broadcast { msg, to });
        }
    }

    /// Queues a signal or a single message.
    pub fn push(&mut self, output: Output) {
        self.out.push(output);
    }

    /// Everything queued since the last call, in order, and the recipients
    /// that its broadcasts' ranges index.
    pub fn drain(&mut self) -> (std::vec::Drain<'_, Output>, &[ConnId]) {
        (self.out.drain(..), &self.recipients)
    }
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
    rules: Rules,
    settings: Settings,
    seats: [Option<Seat>; 2],
    game: Game,
    phase: Phase,
    clock: TurnClock,
    rematch: [bool; 2],
    spectators: Vec<ConnId>,
    out: Outbox,
    closed: bool,
    counts: Counts,
    /// When the game in progress (or the last one) started.
    started: Option<Instant>,
    /// With records kept: the id the game in progress will have, chosen at
    /// its start so that a game restored after a crash keeps it.
    game_id: Option<Arc<str>>,
    /// The resume tokens' hashes of this room's last games that ended with
    /// a record, and each one's id (at most [`ENDED_KEPT`]): a `resume` with
    /// one is told which game it was.
    ended: Vec<(TokenHash, Arc<str>)>,
    /// The mark a private room's creator asked for in its first game.
    creator_mark: Option<Player>,
    /// The house's level, when it holds a seat here.
    house: Option<HouseLevel>,
    /// Resume tokens and game ids: handed in, never drawn from the world.
    rng: StdRng,
}

/// Most resume tokens of ended games a room remembers (two a game, the
/// last few rematches); once the room has closed, the lobby remembers them.
const ENDED_KEPT: usize = 8;

/// The player in seat index `seat` (0 or 1) of the current game.
fn seat_player(seat: usize) -> Player {
    if seat == 0 { Player::X } else { Player::O }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Room {
    fn empty(code: Arc<str>, rules: Rules, settings: Settings, rng: StdRng) -> Result<Room, ErrorCode> {
        let game = Game::with_win(rules.size, rules.win).map_err(|e| match e {
            SizeError::OutOfRange(_) => ErrorCode::InvalidSize,
            SizeError::Win { .. } => ErrorCode::InvalidWin,
        })?;
        Ok(Room {
            code,
            rules,
            clock: TurnClock::new(settings.turn_timeout),
            settings,
            seats: [None, None],
            game,
            phase: Phase::Waiting,
            rematch: [false; 2],
            spectators: Vec::new(),
            out: Outbox::default(),
            closed: false,
            counts: Counts::default(),
            started: None,
            game_id: None,
            ended: Vec::new(),
            creator_mark: None,
            house: None,
            rng,
        })
    }

    /// A private room held by its creator, who is told the code
    /// (`room_created`) and plays `mark` in the first game (random if `None`).
    pub fn private(
        code: Arc<str>,
        rules: Rules,
        settings: Settings,
        rng: StdRng,
        creator: (ConnId, Arc<Identity>),
        mark: Option<Player>,
        id: Option<RequestId>,
    ) -> Result<Room, ErrorCode> {
        let mut room = Room::empty(code, rules, settings, rng)?;
        room.creator_mark = mark;
        let (creator, name) = creator;
        room.seats[0] = Some(Seat::new(creator, name));
        let msg =
            ServerMessage::RoomCreated { room: room.code.clone(), size: rules.size, win: rules.win, id };
        room.out.send(creator, msg);
        Ok(room)
    }

    /// A room for two matched players; `first` is player 1. The game starts now.
    pub fn paired(
        code: Arc<str>,
        rules: Rules,
        settings: Settings,
        rng: StdRng,
        first: (ConnId, Arc<Identity>),
        second: (ConnId, Arc<Identity>),
        now: Instant,
    ) -> Result<Room, ErrorCode> {
        let mut room = Room::empty(code, rules, settings, rng)?;
        room.seats = [Some(Seat::new(first.0, first.1)), Some(Seat::new(second.0, second.1))];
        room.start(now);
        Ok(room)
    }

    /// The room's code.
    pub fn code(&self) -> &Arc<str> {
        &self.code
    }

    /// The id of the game in progress, if one is and records are kept.
    pub fn live_game(&self) -> Option<&Arc<str>> {
        self.game_id.as_ref().filter(|_| self.phase == Phase::Playing)
    }

    /// True once the room holds nobody and its task should end.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Games, moves and refusals in this room so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
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
                    self.finish(Some(opponent), EndReason::Resign, None, now);
                    self.close_if_away();
                }
                Phase::Over => self.refuse(conn, ErrorCode::GameOver, "the game is already over", id),
                Phase::Waiting => self.refuse(conn, ErrorCode::NotInGame, NO_GAME_YET, id),
            },
            Request::Rematch => self.rematch(seat, id, now),
            Request::Leave => {
                if self.phase == Phase::Playing {
                    // Leaving before each side moved is no loss: the game is aborted.
                    match self.game.moves().len() < 2 {
                        true => self.finish(None, EndReason::Aborted, None, now),
                        false => self.finish(Some(opponent), EndReason::Resign, None, now),
                    }
                }
                self.close_because(ClosedReason::Left, Some(conn));
            }
            Request::Sync => {
                let state = self.state(Some(seat), id, now);
                self.out.send(conn, state);
            }
        }
    }

    fn play(&mut self, seat: usize, row: i64, col: i64, id: Option<RequestId>, now: Instant) {
        let Some(conn) = self.seats[seat].as_ref().map(|s| s.conn) else {
            return;
        };
        match self.phase {
            Phase::Waiting => return self.refuse(conn, ErrorCode::NotInGame, NO_GAME_YET, id),
            Phase::Over => {
                return self.refuse(conn, ErrorCode::GameOver, "the game is over; send rematch or leave", id);
            }
            Phase::Playing => {}
        }
        let player = seat_player(seat);
        // Negative or huge coordinates are off the board, like any other.
        let (r, c) = match (usize::try_from(row), usize::try_from(col)) {
            (Ok(r), Ok(c)) => (r, c),
            _ => (usize::MAX, usize::MAX),
        };
        let status = match self.game.play_as(player, r, c) {
            Ok(status) => status,
            Err(e) => {
                let n = self.rules.size;
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
        self.counts.moves += 1;
        if let (true, Some(&cell)) = (self.saving(), self.game.moves().last()) {
            let seq = u32::try_from(self.game.moves().len()).unwrap_or(u32::MAX);
            self.out.push(Output::Save(LiveWrite::Move { room: self.code.clone(), seq, cell, at: now }));
        }
        let next = self.game.turn();
        if next.is_some() {
            let away = self.anyone_away();
            self.clock.restart(now, away);
        }
        let moved = ServerMessage::Moved {
            room: self.code.clone(),
            row: r,
            col: c,
            player,
            seq: self.game.moves().len(),
            next,
            clock_ms: next.filter(|&p| self.timed(p)).and(self.clock.per_move()).map(ms),
            id: None,
        };
        if id.is_some() {
            // The mover's copy alone carries the request id.
            let mut own = moved.clone();
            if let ServerMessage::Moved { id: slot, .. } = &mut own {
                *slot = id;
            }
            self.broadcast(moved, Some(conn));
            self.out.send(conn, own);
        } else {
            self.broadcast(moved, None);
        }
        let (outcome, reason, line) = match status {
            Status::Won { winner, line } => (Outcome::Decisive { winner }, EndReason::Line, Some(line)),
            Status::Draw => (Outcome::Draw, EndReason::Draw, None),
            Status::InProgress { .. } => return self.prompt_house(),
        };
        self.finish(Some(outcome), reason, line, now);
        self.close_if_away();
    }

    /// The server is stopping. With records kept and `can_save` (the store
    /// is writing), a game in progress is saved as it stands (with the time
    /// the player to move has left) to go on after the restart, and nobody
    /// is told anything; otherwise it ends with `shutdown`.
    pub fn shutdown(&mut self, now: Instant, can_save: bool) {
        if self.phase == Phase::Playing {
            if self.saving() && can_save {
                let left = self.clock.left(now);
                self.out.push(Output::Save(LiveWrite::Clock { room: self.code.clone(), left }));
            } else {
                self.finish(None, EndReason::Shutdown, None, now);
            }
        }
        self.close();
    }

    /// Whether games are saved as they go (the server keeps records).
    pub(super) fn saving(&self) -> bool {
        self.settings.records
    }

    fn state(&self, you: Option<usize>, id: Option<RequestId>, now: Instant) -> ServerMessage {
        let playing = self.phase == Phase::Playing;
        ServerMessage::State {
            room: self.code.clone(),
            size: self.rules.size,
            win: self.rules.win,
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
        let info = |who: &Identity| PlayerInfo {
            name: who.name.clone(),
            account: who.account.is_some(),
            bot: who.bot,
            rating: who.rating(self.rules).filter(|_| self.settings.records),
        };
        self.seats.iter().flatten().map(|s| info(&s.who)).collect()
    }

    /// Every connection that hears the room: present players, then spectators.
    fn attached(&self) -> impl Iterator<Item = ConnId> + '_ {
        let seats = self.seats.iter().flatten().filter(|s| s.listens()).map(|s| s.conn);
        seats.chain(self.spectators.iter().copied())
    }

    /// Queues `msg` once for everyone attached but `skip`.
    fn broadcast(&mut self, msg: ServerMessage, skip: Option<ConnId>) {
        let seats = self.seats.iter().flatten().filter(|s| s.listens()).map(|s| s.conn);
        let to = seats.chain(self.spectators.iter().copied()).filter(|&c| Some(c) != skip);
        self.out.broadcast(msg, to);
    }

    fn send_seat(&mut self, seat: usize, msg: ServerMessage) {
        if let Some(s) = self.seats[seat].as_ref().filter(|s| s.listens()) {
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

#[cfg(test)]
mod house_tests;
