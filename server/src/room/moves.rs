//! A move: checked against the seat, the turn and the board, played, and
//! the end of the game it may bring.

use std::time::{Duration, Instant};

use tictactoe_protocol::{
    EndReason, ErrorCode, MoveError, Outcome, Player, RequestId, ServerMessage, Status,
};

use super::fischer::Clocks;
use super::{NO_GAME_YET, Output, Phase, Room, ms, seat_player};
use crate::store::changes::LiveWrite;

impl Room {
    /// The player in `seat` plays (`row`, `col`): refused (changing nothing)
    /// unless the game is on, it is their turn and the cell is free.
    pub(super) fn play(
        &mut self,
        seat: usize,
        row: i64,
        col: i64,
        id: Option<RequestId>,
        lag: Duration,
        now: Instant,
    ) {
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
        // A move that arrives past a flag the room has not yet seen fall is too late.
        if self.fischer.as_ref().and_then(Clocks::deadline).is_some_and(|flag| flag <= now) {
            self.tick(now);
            let text = "the game is over: a clock ran out; send rematch or leave";
            return self.refuse(conn, ErrorCode::GameOver, text, id);
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
        let left = self.clocks_moved(player, r, c, lag, now);
        if let (true, Some(&cell)) = (self.saving(), self.game.moves().last()) {
            let seq = u32::try_from(self.game.moves().len()).unwrap_or(u32::MAX);
            let room = self.code.clone();
            self.out.push(Output::Save(LiveWrite::Move { room, seq, cell, left, at: now }));
        }
        let next = self.game.turn();
        if next.is_some() && self.fischer.is_none() {
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
            clock_ms: match self.fischer {
                Some(_) => self.to_move_ms(now),
                None => next.filter(|&p| self.timed(p)).and(self.clock.per_move()).map(ms),
            },
            clocks: self.clocks_at(now),
            running: self.running(),
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
            Status::InProgress { .. } => return self.prompt_house(now),
        };
        self.finish(Some(outcome), reason, line, now);
        self.close_if_away();
    }

    /// With a Fischer clock, after `player`'s move at (`r`, `c`): the lines
    /// it closes, and the clocks. Each side's first move is timed by the
    /// turn clock and adds no increment; the clocks start once both sides
    /// have moved. Returns the mover's time left (ms), to be saved with the move.
    fn clocks_moved(
        &mut self,
        player: Player,
        r: usize,
        c: usize,
        lag: Duration,
        now: Instant,
    ) -> Option<u64> {
        let played = self.played();
        let clocks = self.fischer.as_mut()?;
        if let Some(lines) = self.lines.as_mut() {
            lines.play(player, r, c);
        }
        let mover = usize::from(player == Player::O);
        let left = match played {
            1 => {
                self.clock.restart(now, false);
                clocks.at(now)[mover]
            }
            2 => {
                self.clock.stop();
                clocks.start(1 - mover, now);
                clocks.at(now)[mover]
            }
            // The flag was checked before the move: it is in time.
            _ => clocks.moved(now, lag).unwrap_or_default(),
        };
        if self.game.turn().is_none() {
            clocks.stop(now);
        }
        self.times.push(ms(left));
        Some(ms(left))
    }
}
