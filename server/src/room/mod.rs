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
mod fischer;
mod games;
mod house;
mod moves;
mod organised;
mod output;
mod restore;
mod seats;
mod settings;
pub(crate) mod task;
mod tournament;

use house::HOUSE;
pub use house::HOUSE_NAME;
pub use output::{Outbox, Output};
pub use seats::{INVALID_TOKEN, game_over_refusal, token_room};
pub use settings::{Settings, WallClock};

use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{
    ClosedReason, EndReason, ErrorCode, Game, HouseLevel, Outcome, Player, PlayerInfo, RequestId,
    ServerMessage, SizeError,
};

pub use tictactoe_protocol::Rules;

use crate::core::account::{Identity, TokenHash};
use crate::core::stats::Counts;
use crate::store::changes::LiveWrite;
use clock::TurnClock;
use fischer::Clocks;
use rand::rngs::StdRng;
use seats::Seat;
use tictactoe_protocol::{Fischer, OpenLines};

use crate::cmd::Request;
use crate::core::ids::ConnId;

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
    /// With a Fischer clock: both sides' clocks, once each side has moved
    /// (the turn clock times the first moves).
    fischer: Option<Clocks>,
    /// With a Fischer clock: the lines each side can still complete, for
    /// whether running out of time loses or draws.
    lines: Option<OpenLines>,
    /// With a Fischer clock: the mover's time left after each move of the
    /// game in progress (its record shows both sides' after each move).
    times: Vec<u64>,
    /// An organised room's host, reserved seats, opening and games.
    organised: Option<Box<organised::Organised>>,
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
    /// The arena tournament whose one game this room plays.
    tournament: Option<Arc<str>>,
    /// Which sides of the game in progress went berserk (a tournament game).
    berserk: [bool; 2],
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
        // A Fischer game's first moves have a turn of their own.
        let first_moves = Duration::from_millis(Fischer::FIRST_MOVE_MS);
        let turn = if rules.clock.is_some() { Some(first_moves) } else { settings.turn_timeout };
        Ok(Room {
            code,
            rules,
            clock: TurnClock::new(turn),
            fischer: None,
            lines: None,
            times: Vec::new(),
            organised: None,
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
            tournament: None,
            berserk: [false; 2],
            rng,
        })
    }

    /// A private room held by its creator, who is told the code
    /// (`room_created`) and plays `mark` in the first game (random if `None`)
    /// — or, organised as a host, watches every game.
    #[allow(clippy::too_many_arguments)]
    pub fn private(
        code: Arc<str>,
        rules: Rules,
        settings: Settings,
        rng: StdRng,
        creator: (ConnId, Arc<Identity>),
        mark: Option<Player>,
        organise: Option<Box<crate::cmd::Organise>>,
        id: Option<RequestId>,
    ) -> Result<Room, ErrorCode> {
        let mut room = Room::empty(code, rules, settings, rng)?;
        room.creator_mark = mark;
        let (creator, name) = creator;
        room.organised = organise.map(|o| Box::new(organised::Organised::new(*o, (creator, &name))));
        match room.host_name() {
            Some(_) => room.spectators.push(creator),
            None => room.seats[0] = Some(Seat::new(creator, name)),
        }
        let msg = ServerMessage::RoomCreated {
            clock: rules.clock,
            room: room.code.clone(),
            size: rules.size,
            win: rules.win,
            id,
        };
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
        let flag = self.fischer.as_ref().and_then(Clocks::deadline);
        away.chain(self.clock.deadline()).chain(flag).min()
    }

    /// A request from a connection in the room.
    pub fn request(&mut self, conn: ConnId, request: Request, id: Option<RequestId>, now: Instant) {
        let watching = self.spectators.contains(&conn);
        if request == Request::Leave && watching && self.is_host(conn) {
            return self.host_leaves(conn);
        }
        if request == Request::Leave && watching {
            self.spectators.retain(|&c| c != conn);
            return self.out.push(Output::Release { to: conn });
        }
        if request == Request::Sync && watching {
            let state = self.state(None, id, now);
            return self.out.send(conn, state);
        }
        let Some(seat) = self.seat_of(conn) else {
            if request == Request::Leave && !watching {
                // Leaving a room one is not in (a watch that had not
                // arrived, left on the way to another): nothing to say.
                return self.out.push(Output::Release { to: conn });
            }
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
            Request::Move { row, col, lag_ms } => {
                self.play(seat, row, col, id, Duration::from_millis(lag_ms.into()), now)
            }
            Request::Resign => match self.phase {
                Phase::Playing => {
                    self.finish(Some(opponent), EndReason::Resign, None, now);
                    self.close_if_away();
                }
                Phase::Over => self.refuse(conn, ErrorCode::GameOver, "the game is already over", id),
                Phase::Waiting => self.refuse(conn, ErrorCode::NotInGame, NO_GAME_YET, id),
            },
            Request::Rematch => self.rematch(seat, id, now),
            Request::Berserk => self.berserk(seat, id, now),
            Request::Leave => {
                if self.phase == Phase::Playing {
                    // Leaving before each side moved is no loss: the game is aborted.
                    match self.played() < 2 {
                        true => self.finish(None, EndReason::Aborted, None, now),
                        false => self.finish(Some(opponent), EndReason::Resign, None, now),
                    }
                }
                match self.host_name() {
                    Some(_) => self.player_leaves(seat, conn),
                    None => self.close_because(ClosedReason::Left, Some(conn)),
                }
            }
            Request::Sync => {
                let state = self.state(Some(seat), id, now);
                self.out.send(conn, state);
            }
        }
    }

    /// The server is stopping. With records kept and `can_save` (the store
    /// is writing), a game in progress is saved as it stands (with the time
    /// the player to move has left) to go on after the restart, and nobody
    /// is told anything; otherwise it ends with `shutdown`.
    pub fn shutdown(&mut self, now: Instant, can_save: bool) {
        if self.phase == Phase::Playing {
            if self.saving() && can_save {
                // A Fischer game's times are saved with its moves.
                if self.fischer.is_none() {
                    let left = self.clock.left(now);
                    self.out.push(Output::Save(LiveWrite::Clock { room: self.code.clone(), left }));
                }
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
            berserk: self.berserk,
            tournament: self.tournament.clone(),
            room: self.code.clone(),
            size: self.rules.size,
            win: self.rules.win,
            board: self.game.board(),
            moves: self.game.moves().to_vec(),
            turn: if playing { self.game.turn() } else { None },
            players: self.players(),
            you: you.map(seat_player),
            clock_ms: self.to_move_ms(now),
            clock: self.rules.clock,
            clocks: self.clocks_at(now),
            running: self.running(),
            opening: self.opening_len(),
            host: self.host_name(),
            reserved: self.organised.as_ref().and_then(|o| o.reserved.clone()).map(Box::new),
            id,
        }
    }

    /// The time the player to move has: their Fischer clock once it runs,
    /// else the turn clock (a first move, or the per-move timer).
    fn to_move_ms(&self, now: Instant) -> Option<u64> {
        if self.phase != Phase::Playing {
            return None;
        }
        match self.fischer.as_ref().and_then(|c| Some((c, c.running()?))) {
            Some((c, side)) => Some(ms(c.at(now)[side])),
            None => self.clock.left(now).map(ms),
        }
    }

    /// With a Fischer clock: each side's time left at `now`.
    fn clocks_at(&self, now: Instant) -> Option<[u64; 2]> {
        match (&self.fischer, self.rules.clock) {
            (Some(c), _) => Some(c.at(now).map(ms)),
            // Before a game: both sides' starting time.
            (None, Some(terms)) => Some([terms.initial_ms; 2]),
            (None, None) => None,
        }
    }

    /// Whose Fischer clock runs.
    fn running(&self) -> Option<Player> {
        self.fischer.as_ref().and_then(Clocks::running).map(seat_player)
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

#[cfg(test)]
mod fischer_tests;
