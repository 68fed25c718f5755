//! The house bot's seat: a seat like any other whose moves the room asks
//! for as an output ([`Output::Think`]) and takes back as an input
//! ([`Room::house_move`]), so that the room stays without I/O and its tests
//! need no search. The house is never timed, agrees to every rematch and
//! has no resume token.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use tictactoe_protocol::{ErrorCode, HouseLevel, Player};

pub use super::seats::HOUSE;
use super::seats::Seat;
use super::{ConnId, Output, Phase, Room, Rules, Settings, seat_player};
use crate::account::Identity;

/// The name the house plays under, reserved: no player may take it.
pub const HOUSE_NAME: &str = "house";

/// The house as players see it: `house`, a bot, not an account.
pub fn identity() -> Arc<Identity> {
    static HOUSE_IDENTITY: OnceLock<Arc<Identity>> = OnceLock::new();
    HOUSE_IDENTITY
        .get_or_init(|| Arc::new(Identity { name: HOUSE_NAME.into(), account: None, bot: true }))
        .clone()
}

/// Whether `who` is the house: guests are never bots, so a bot without an
/// account can only be the house (this is how a saved game knows its seat).
pub fn is_house(who: &Identity) -> bool {
    who.bot && who.account.is_none()
}

impl Room {
    /// A room where `human` plays the house at `level`; the human is player
    /// 1 when `human_first`. The game starts now.
    pub fn house(
        code: Arc<str>,
        rules: Rules,
        settings: Settings,
        human: (ConnId, Arc<Identity>),
        level: HouseLevel,
        human_first: bool,
        now: Instant,
    ) -> Result<Room, ErrorCode> {
        let mut room = Room::empty(code, rules, settings)?;
        room.house = Some(level);
        let (human, house) = (Seat::new(human.0, human.1), Seat::new(HOUSE, identity()));
        room.seats = if human_first { [Some(human), Some(house)] } else { [Some(house), Some(human)] };
        room.start(now);
        Ok(room)
    }

    /// The seat index the house sits in, if it plays here.
    pub(super) fn house_seat(&self) -> Option<usize> {
        (0..2).find(|&i| self.seats[i].as_ref().is_some_and(|s| s.conn == HOUSE))
    }

    /// Whether `player`'s turns are timed: everyone's but the house's.
    pub(super) fn timed(&self, player: Player) -> bool {
        self.house.is_none() || self.house_seat().is_none_or(|seat| seat_player(seat) != player)
    }

    /// When the house is to move in a game in progress, asks for its move
    /// (the house's turn runs no clock: it never times out itself).
    pub(super) fn prompt_house(&mut self) {
        // Most rooms have no house: nothing more is looked at for them.
        let Some(level) = self.house else { return };
        let Some(seat) = self.house_seat() else { return };
        if self.phase != Phase::Playing || self.game.turn() != Some(seat_player(seat)) {
            return;
        }
        self.clock.stop();
        let seq = self.game.moves().len() + 1;
        self.out.push(Output::Think { seq, game: Box::new(self.game.clone()), level });
    }

    /// The house's choice for move number `seq` (`None`: choosing failed),
    /// played if the game still waits for that move. A choice that is not
    /// an empty cell is replaced by the first empty one: the house never
    /// stalls a game.
    pub fn house_move(&mut self, seq: usize, cell: Option<(usize, usize)>, now: Instant) {
        let Some(seat) = self.house_seat() else { return };
        let waiting = self.phase == Phase::Playing
            && self.game.moves().len() + 1 == seq
            && self.game.turn() == Some(seat_player(seat));
        if !waiting {
            return;
        }
        let n = self.rules.size;
        let empty = |&(r, c): &(usize, usize)| r < n && c < n && !self.game.is_occupied(r, c);
        let cell = cell.filter(empty).or_else(|| (0..n * n).map(|i| (i / n, i % n)).find(empty));
        if let Some((r, c)) = cell {
            self.play(seat, r as i64, c as i64, None, now);
        }
    }
}
