//! A room of an arena tournament: it plays one rated game between the two
//! players the tournament paired, on the tournament's clock, and closes
//! after it (the players are free to be paired again). Before their first
//! move either player may go berserk: half the clock, no increment.

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use tictactoe_protocol::{ErrorCode, RequestId, ServerMessage};

use super::seats::Seat;
use super::{Output, Phase, Room, Rules, Settings, ms, seat_player};
use crate::core::account::Identity;
use crate::core::ids::ConnId;
use crate::store::changes::LiveWrite;

impl Room {
    /// The room (`code`, `rules`, `settings`, `rng`) of `tournament`'s
    /// game between two paired `players` (X first). The game starts now.
    pub fn tournament_game(
        tournament: Arc<str>,
        (code, rules, settings, rng): (Arc<str>, Rules, Settings, StdRng),
        players: [(ConnId, Arc<Identity>); 2],
        now: Instant,
    ) -> Result<Room, ErrorCode> {
        let mut room = Room::empty(code, rules, settings, rng)?;
        room.tournament = Some(tournament);
        room.seats = players.map(|(conn, who)| Some(Seat::new(conn, who)));
        room.start(now);
        Ok(room)
    }

    /// The tournament this room's game is part of.
    pub fn tournament(&self) -> Option<&Arc<str>> {
        self.tournament.as_ref()
    }

    /// `berserk` from the player in `seat`: refused outside a tournament
    /// game, after the player's first move, or a second time.
    pub(super) fn berserk(&mut self, seat: usize, id: Option<RequestId>, now: Instant) {
        let Some(conn) = self.seats[seat].as_ref().map(|s| s.conn) else { return };
        let refusal = if self.tournament.is_none() {
            Some("berserk is for tournament games only")
        } else if self.phase != Phase::Playing {
            Some("berserk needs a game in progress")
        } else if self.berserk[seat] {
            Some("you are berserk already")
        } else if self.game.moves().len() > seat {
            Some("berserk only before your first move")
        } else {
            None
        };
        if let Some(text) = refusal {
            return self.refuse(conn, ErrorCode::CannotBerserk, text, id);
        }
        self.berserk[seat] = true;
        let Some(clocks) = self.fischer.as_mut() else { return };
        clocks.berserk(seat);
        let clocks = clocks.at(now).map(ms);
        let (room, player) = (self.code.clone(), seat_player(seat));
        if self.saving() {
            self.out.push(Output::Save(LiveWrite::Berserk { room: room.clone(), player }));
        }
        let msg = |id| ServerMessage::Berserked { room: room.clone(), player, clocks, id };
        self.broadcast(msg(None), Some(conn));
        self.out.send(conn, msg(id));
    }
}
