//! A room's games: moves, the start and end of a game, and rematches.

use std::time::Instant;

use tictactoe_protocol::{
    EndReason, ErrorCode, Game, Line, MoveError, Outcome, Player, RequestId, ServerMessage, Status,
};

use super::seat::new_token;
use super::{NO_GAME_YET, Output, Phase, Room, ms, seat_player};

impl Room {
    pub(super) fn play(&mut self, seat: usize, row: i64, col: i64, id: Option<RequestId>, now: Instant) {
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
            clock_ms: next.and(self.clock.per_move()).map(ms),
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
            Status::InProgress { .. } => return,
        };
        self.finish(Some(outcome), reason, line);
        self.close_if_away();
    }

    pub(super) fn rematch(&mut self, seat: usize, id: Option<RequestId>, now: Instant) {
        let Some(conn) = self.seats[seat].as_ref().map(|s| s.conn) else {
            return;
        };
        match self.phase {
            Phase::Waiting => self.refuse(conn, ErrorCode::NotInGame, NO_GAME_YET, id),
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
                    self.send_seat(1 - seat, ServerMessage::RematchOffered {});
                }
            }
        }
    }

    /// Starts a game between the two seated players.
    pub(super) fn start(&mut self, now: Instant) {
        self.game = match Game::new(self.size) {
            Ok(g) => g,
            Err(_) => return self.close(),
        };
        self.phase = Phase::Playing;
        self.rematch = [false; 2];
        self.clock.restart(now, false);
        self.games_started += 1;
        let players = self.players();
        tracing::debug!(size = self.size, x = %players.first().map_or("", |p| &p.name), o = %players.get(1).map_or("", |p| &p.name), "game started");
        for i in 0..2 {
            let Some(seat) = &self.seats[i] else { continue };
            let (conn, token) = (seat.conn, seat.token.clone());
            let you = seat_player(i);
            let msg = ServerMessage::GameStarted {
                room: self.code.clone(),
                size: self.size,
                you,
                mark: you,
                players: players.clone(),
                turn: Player::X,
                resume_token: token,
                turn_timeout_ms: self.clock.per_move().map_or(0, ms),
            };
            // The signal first: a client that reads `game_started` and at
            // once sends a request finds its connection already in the game.
            self.out.push(Output::Live { to: conn, live: true });
            self.out.send(conn, msg);
        }
        for conn in self.spectators.clone() {
            let state = self.state(None, None, now);
            self.out.send(conn, state);
        }
    }

    /// Ends the game in progress, telling everyone attached.
    pub(super) fn finish(&mut self, outcome: Option<Outcome>, reason: EndReason, line: Option<Line>) {
        self.phase = Phase::Over;
        self.clock.stop();
        self.games_finished += 1;
        let winner = outcome.and_then(Outcome::winner);
        tracing::info!(
            winner = winner.map_or(0, Player::number),
            ?reason,
            moves = self.game.moves().len(),
            "game over"
        );
        // The signals first: a client that reads `game_over` and at once asks
        // for something new finds its connection already free to go.
        let players: Vec<_> = self.seats.iter().flatten().filter(|s| s.present()).map(|s| s.conn).collect();
        for to in players {
            self.out.push(Output::Live { to, live: false });
        }
        let msg = ServerMessage::GameOver {
            room: self.code.clone(),
            winner,
            reason,
            line,
            moves: self.game.moves().to_vec(),
        };
        self.broadcast(msg, None);
    }
}
