//! A room's games: the start and end of a game, and rematches.

use std::time::Instant;

use std::sync::Arc;
use std::time::Duration;

use tictactoe_protocol::{
    EndReason, ErrorCode, Game, Line, OpenLines, Outcome, Player, RequestId, ServerMessage,
};

use super::fischer::Clocks;
use super::seats::new_token;
use super::{NO_GAME_YET, Output, Phase, Room, ms, seat_player};
use crate::core::account::{self, AccountId, TokenHash};
use crate::store::changes::{LiveGame, LiveWrite};
use crate::store::record::{GameRecord, new_game_id};
use tictactoe_protocol::Rules;

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
                // The house is always up for another game.
                if self.house_seat() == Some(1 - seat) {
                    self.rematch[1 - seat] = true;
                }
                if self.rematch[1 - seat] {
                    self.seats.swap(0, 1);
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
        self.berserk = [false; 2];
        self.clock.restart(now, false);
        self.fischer = self.rules.clock.map(Clocks::new);
        self.lines = self.rules.clock.and_then(|_| OpenLines::new(self.rules.size, self.rules.win).ok());
        self.times.clear();
        self.play_opening();
        // The opening's moves were made on the starting time.
        if let Some(clock) = self.rules.clock {
            self.times = vec![clock.initial_ms; self.opening_len()];
        }
        let clocks = self.clocks_at(now);
        let (opening, moves) = (self.opening_len(), self.game.moves().to_vec());
        self.counts.started += 1;
        crate::metrics::game_started(self.rules.clock);
        self.started = Some(now);
        let players = self.players();
        let mut hashes = [[0; 32]; 2];
        tracing::debug!(size = self.rules.size, x = %players.first().map_or("", |p| &p.name), o = %players.get(1).map_or("", |p| &p.name), "game started");
        for (i, (seat, hash)) in self.seats.iter_mut().zip(&mut hashes).enumerate() {
            let Some(seat) = seat.as_mut().filter(|s| s.conn != super::HOUSE) else { continue };
            // Fresh for every game: a token ends with its game.
            let token = new_token(&self.code, &mut self.rng);
            *hash = account::hash(&token);
            seat.token = Some(*hash);
            let conn = seat.conn;
            let you = seat_player(i);
            let msg = ServerMessage::GameStarted {
                tournament: self.tournament.clone(),
                moves: moves.clone(),
                opening,
                clock: self.rules.clock,
                clocks,
                running: None,
                room: self.code.clone(),
                size: self.rules.size,
                win: self.rules.win,
                you,
                mark: you,
                players: players.clone(),
                turn: self.game.turn().unwrap_or(Player::X),
                resume_token: token.into(),
                // A Fischer clock has no time per move (`clock_ms` tells
                // each first move's own).
                turn_timeout_ms: self.clock.per_move().filter(|_| self.rules.clock.is_none()).map_or(0, ms),
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
        if let (true, [Some(x), Some(o)]) = (self.saving(), &self.seats) {
            let id = new_game_id(&mut self.rng, self.settings.wall.unix_ms(now));
            self.game_id = Some(id.clone());
            let game = LiveGame {
                berserk: self.berserk,
                tournament: self.tournament.clone(),
                id,
                room: self.code.clone(),
                rules: self.rules,
                turn_timeout: self.clock.per_move(),
                players: [x.who.clone(), o.who.clone()],
                tokens: hashes,
                moves: self.game.moves().to_vec(),
                times: self.times.clone(),
                opening: self.opening_len(),
                clock_left: None,
                started_at_ms: 0,
                house: self.house,
            };
            self.out.push(Output::Save(LiveWrite::Start(Box::new(game))));
        }
        self.prompt_house(now);
    }

    /// Ends the game in progress, telling everyone attached.
    pub(super) fn finish(
        &mut self,
        outcome: Option<Outcome>,
        reason: EndReason,
        line: Option<Line>,
        now: Instant,
    ) {
        // Lost on time or by a dropped connection before each side had made a
        // move: nobody played, so nobody wins (and nobody farms a rating from
        // opponents who never showed up).
        let (outcome, reason) = match reason {
            EndReason::Timeout | EndReason::Disconnect if self.played() < 2 => (None, EndReason::Aborted),
            _ => (outcome, reason),
        };
        self.phase = Phase::Over;
        self.clock.stop();
        if let Some(c) = self.fischer.as_mut() {
            c.stop(now);
        }
        self.counts.finished[reason as usize] += 1;
        let winner = outcome.and_then(Outcome::winner);
        // At debug: each game is in the records and the metrics already, and
        // a log line per game is a write per game on a busy server.
        tracing::debug!(
            winner = winner.map_or(0, Player::number),
            ?reason,
            moves = self.game.moves().len(),
            "game over"
        );
        // The record first: what follows waits for its commit (see `room::task`).
        let game_id = self.record(winner, reason, line, now);
        if let Some(id) = &game_id {
            let tokens = self.seats.iter().flatten().filter_map(|s| s.token);
            self.ended.extend(tokens.map(|t| (t, id.clone())));
            let over = self.ended.len().saturating_sub(super::ENDED_KEPT);
            self.ended.drain(..over);
        }
        // The signals next: a client that reads `game_over` and at once asks
        // for something new finds its connection already free to go.
        let players: Vec<_> = self.seats.iter().flatten().filter(|s| s.listens()).map(|s| s.conn).collect();
        for to in players {
            self.out.push(Output::Live { to, live: false });
        }
        let msg = ServerMessage::GameOver {
            clocks: self.clocks_at(now),
            running: None,
            room: self.code.clone(),
            winner,
            reason,
            line,
            moves: self.game.moves().to_vec(),
            game_id,
            // The store rates the game as it commits its record; the room's
            // task fills these in from its answer before `game_over` leaves.
            ratings: None,
        };
        self.broadcast(msg, None);
        self.close_if_done();
    }

    /// With records kept: queues the game's record (the store rates it if
    /// both players are accounts and it ended by play). Returns its id.
    fn record(
        &mut self,
        winner: Option<Player>,
        reason: EndReason,
        line: Option<Line>,
        now: Instant,
    ) -> Option<Arc<str>> {
        if !self.settings.records {
            return None;
        }
        let (Some(x), Some(o)) = (&self.seats[0], &self.seats[1]) else { return None };
        let players = [x.who.clone(), o.who.clone()];
        let id = match self.game_id.take() {
            Some(id) => id,
            None => new_game_id(&mut self.rng, self.settings.wall.unix_ms(now)),
        };
        let record = GameRecord {
            berserk: self.berserk,
            tournament: self.tournament.clone(),
            id: id.clone(),
            room: self.code.clone(),
            rules: self.rules,
            players,
            moves: self.game.moves().to_vec(),
            times: self.times.clone(),
            opening: self.opening_len(),
            host: self.host_name(),
            winner,
            reason,
            line,
            ratings: None,
            started_at_ms: 0,
            ended_at_ms: 0,
        };
        let lasted = self.started.map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
        let conn = |i: usize| self.seats[i].as_ref().filter(|s| s.listens()).map(|s| s.conn);
        let players = [conn(0), conn(1)];
        self.out.push(Output::Record { record: Box::new(record), lasted, players });
        Some(id)
    }

    /// The store rated a game of this room: `account` now shows `shown`
    /// here (a rematch's `game_started`, `state`), whichever seat it holds.
    pub fn rated(&mut self, account: AccountId, shown: i64) {
        for seat in self.seats.iter_mut().flatten() {
            if seat.who.account == Some(account) {
                seat.who = Arc::new(seat.who.rated(self.rules, shown));
            }
        }
    }

    /// The id of the ended game whose resume token `token` was, if this
    /// room remembers it.
    pub(super) fn ended_game(&self, token: &str) -> Option<Arc<str>> {
        self.ended.iter().find(|(h, _)| account::matches(token, h)).map(|(_, id)| id.clone())
    }

    /// The resume tokens' hashes of the room's ended games and their ids,
    /// for the lobby to remember once the room is gone.
    pub fn take_ended(&mut self) -> Vec<(TokenHash, Arc<str>)> {
        std::mem::take(&mut self.ended)
    }

    /// The room's board and win length.
    pub fn rules(&self) -> Rules {
        self.rules
    }
}
