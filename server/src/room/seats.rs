//! Who is in a room and for how long: seats and their resume tokens, joining,
//! watching, resuming, dropping out, and the grace period and turn timer
//! running out. A token starts with the room's code, so that the lobby can
//! route a `resume` to the room that holds the seat without a table of
//! tokens; the rest is 128 random bits.

use std::sync::Arc;
use std::time::Instant;

use crate::core::account::{self, Identity, TokenHash};

use tictactoe_protocol::{ClosedReason, EndReason, ErrorCode, Outcome, Player, RequestId, ServerMessage};

use super::{Output, Phase, Room, ms, seat_player};
use crate::core::ids::ConnId;

/// The house seat's connection: no connection has it (ids count up from 1).
pub const HOUSE: ConnId = ConnId::MAX;

/// A seated player.
#[derive(Debug)]
pub struct Seat {
    /// The player's connection (its last one, while away).
    pub conn: ConnId,
    pub who: Arc<Identity>,
    /// The hash of what `resume` takes to reclaim the seat during a game;
    /// the token itself is sent once, in `game_started`.
    pub token: Option<TokenHash>,
    /// Set while the player's connection is gone: when the seat is forfeited.
    pub away_until: Option<Instant>,
}

impl Seat {
    /// A present player in a seat; its token comes with a game.
    pub fn new(conn: ConnId, who: Arc<Identity>) -> Seat {
        Seat { conn, who, token: None, away_until: None }
    }

    /// Whether the player's connection is here.
    pub fn present(&self) -> bool {
        self.away_until.is_none()
    }

    /// Whether the seat has a connection to hear the room: present, and
    /// not the house (whose moves the room asks for as outputs).
    pub fn listens(&self) -> bool {
        self.present() && self.conn != HOUSE
    }
}

/// The refusal for a token that holds no seat.
pub const INVALID_TOKEN: &str =
    "this resume token is not valid (wrong, or its game is over); start a new game";

/// The refusal for a token whose game is over: with the game's id, for a
/// player who lost while away to look up how it ended.
pub fn game_over_refusal(game_id: Arc<str>, id: Option<RequestId>) -> ServerMessage {
    let message = format!(
        "this resume token's game is over; how it ended is at /api/games/{game_id}; start a new game"
    );
    ServerMessage::Error {
        code: ErrorCode::InvalidToken,
        message,
        id,
        retry_after_ms: None,
        game_id: Some(game_id),
    }
}

/// A fresh token for a seat of room `code`: the code, then 128 random bits
/// from the room's generator as 32 hex digits.
pub fn new_token(code: &str, rng: &mut impl rand::RngCore) -> String {
    account::secret_from(code, rng)
}

/// The code of the room a token belongs to, if it is long enough to have one.
pub fn token_room(token: &str, code_len: usize) -> Option<&str> {
    token.get(..code_len)
}

impl Room {
    /// A second player takes the empty seat of a private room; with `swap`
    /// (unless the creator chose a mark) the newcomer is player 1. Refused with `room_full` when no seat is free.
    pub fn join(
        &mut self,
        conn: ConnId,
        name: Arc<Identity>,
        id: Option<RequestId>,
        swap: bool,
        now: Instant,
    ) {
        if self.refused_closed(conn, ErrorCode::RoomNotFound, id.clone()) {
            return;
        }
        if self.host_name().is_some() {
            return self.join_hosted(conn, name, id, now);
        }
        if self.phase != Phase::Waiting || self.seats[1].is_some() {
            let msg = "both seats of this room are taken; spectate it, or create your own room";
            self.refuse(conn, ErrorCode::RoomFull, msg, id);
            return self.out.push(Output::Release { to: conn });
        }
        self.seats[1] = Some(Seat::new(conn, name));
        // The creator's choice of mark, if any, decides who is player 1.
        let swap = match self.creator_mark {
            Some(Player::X) => false,
            Some(Player::O) => true,
            None => swap,
        };
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
        if let Some(game_id) = self.ended_game(token) {
            self.out.send(conn, game_over_refusal(game_id, id));
            return self.out.push(Output::Release { to: conn });
        }
        if self.refused_closed(conn, ErrorCode::InvalidToken, id.clone()) {
            return;
        }
        let seat = match self.phase {
            Phase::Playing => self
                .seats
                .iter()
                .position(|s| s.as_ref().and_then(|s| s.token).is_some_and(|h| account::matches(token, &h))),
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
        // The opponent is away too (both dropped, or the server restarted):
        // the resumer hears it as if it had just happened.
        let other = self.seats[1 - index].as_ref().and_then(|s| s.away_until);
        if let Some(until) = other {
            let grace_ms = ms(until.saturating_duration_since(now));
            self.out.send(conn, ServerMessage::OpponentDisconnected { grace_ms });
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
            // A Fischer game's clocks run on while a player is away.
            if self.rules.clock.is_none() {
                self.clock.pause(now);
            }
            self.send_seat(1 - seat, ServerMessage::OpponentDisconnected { grace_ms: ms(grace) });
            return;
        }
        if self.phase != Phase::Playing && self.host_name().is_some() {
            return self.player_leaves(seat, conn);
        }
        self.mark_away(seat, now);
        if self.phase == Phase::Playing {
            let winner = seat_player(seat).other();
            self.finish(Some(Outcome::Decisive { winner }), EndReason::Disconnect, None, now);
        }
        // Nobody to wait for: the room ends with its pairing.
        self.close_because(ClosedReason::Disconnect, None);
    }

    /// Time passes: forfeits seats whose grace ended and players out of time.
    pub fn tick(&mut self, now: Instant) {
        if self.phase != Phase::Playing {
            return;
        }
        // Both gone since the same moment (a restart nobody came back
        // from): the player to move is the one who loses.
        let to_move = self.game.turn().map_or(0, |p| usize::from(p == Player::O));
        let expired = (0..2)
            .filter_map(|i| {
                let until = self.seats[i].as_ref()?.away_until?;
                (until <= now).then_some((until, i != to_move, i))
            })
            .min();
        if let Some((_, _, seat)) = expired {
            let winner = seat_player(seat).other();
            self.finish(Some(Outcome::Decisive { winner }), EndReason::Disconnect, None, now);
            return self.close_because(ClosedReason::Disconnect, None);
        }
        if self.clock.deadline().is_some_and(|d| d <= now) {
            if let Some(late) = self.game.turn() {
                self.finish(Some(Outcome::Decisive { winner: late.other() }), EndReason::Timeout, None, now);
            }
        }
        if self.fischer.as_ref().and_then(|c| c.deadline()).is_some_and(|d| d <= now) {
            self.flag(now);
        }
    }

    /// The player to move ran out of time on a Fischer clock: a loss, or a
    /// draw when the opponent can no longer complete any line.
    fn flag(&mut self, now: Instant) {
        let Some(late) = self.game.turn() else { return };
        let winner = late.other();
        let draw = self.lines.as_ref().is_some_and(|l| !l.can_complete(winner));
        crate::metrics::flagged(draw);
        let outcome = if draw { Outcome::Draw } else { Outcome::Decisive { winner } };
        self.finish(Some(outcome), EndReason::Timeout, None, now);
        // An away player cannot rematch: the pairing ends with the game.
        self.close_if_away();
    }

    pub(super) fn mark_away(&mut self, seat: usize, until: Instant) {
        if let Some(s) = self.seats[seat].as_mut() {
            s.away_until = Some(until);
        }
    }

    pub(super) fn anyone_away(&self) -> bool {
        self.seats.iter().flatten().any(|s| !s.present())
    }

    /// The seat of a present player's connection.
    pub(super) fn seat_of(&self, conn: ConnId) -> Option<usize> {
        (0..2).find(|&i| self.seats[i].as_ref().is_some_and(|s| s.conn == conn && s.present()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_room_and_differs_each_time() {
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(3);
        let a = new_token("ROOM123456", &mut rng);
        assert_eq!(a.len(), 10 + 32);
        assert_eq!(token_room(&a, 10), Some("ROOM123456"));
        assert_ne!(a, new_token("ROOM123456", &mut rng));
        assert_eq!(token_room("short", 10), None);
    }
}
