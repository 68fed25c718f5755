//! A room's games: the start and end of a game, and rematches.

use std::time::Instant;

use tictactoe_protocol::{EndReason, ErrorCode, Game, Line, Outcome, Player, RequestId, ServerMessage};

use super::seats::new_token;
use super::{NO_GAME_YET, Output, Phase, Room, ms, seat_player};

impl Room {
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
        self.game = match Game::with_win(self.rules.size, self.rules.win) {
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
                win: self.rules.win,
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
