//! The house bot's seat: a seat like any other whose moves the room asks
//! for as an output ([`Output::Think`]) and takes back as an input
//! ([`Room::house_move`]), so that the room stays without I/O and its tests
//! need no search. The house is never timed, agrees to every rematch and
//! has no resume token.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tictactoe_protocol::{ErrorCode, Game, HouseLevel, Player};

pub use super::seats::HOUSE;
use super::seats::Seat;
use super::{Output, Phase, Room, Rules, Settings, seat_player};
use rand::Rng;
use rand::rngs::StdRng;

use crate::core::account::Identity;
use crate::core::ids::ConnId;
use crate::house::Asker;

/// The name the house plays under, reserved: no player may take it.
pub const HOUSE_NAME: &str = "house";

/// The house as players see it: `house`, a bot, not an account.
pub fn identity() -> Arc<Identity> {
    static HOUSE_IDENTITY: OnceLock<Arc<Identity>> = OnceLock::new();
    HOUSE_IDENTITY
        .get_or_init(|| {
            Arc::new(Identity { name: HOUSE_NAME.into(), account: None, bot: true, ratings: Box::default() })
        })
        .clone()
}

/// Whether `who` is the house: guests are never bots, so a bot without an
/// account can only be the house (this is how a saved game knows its seat).
pub fn is_house(who: &Identity) -> bool {
    who.bot && who.account.is_none()
}

impl Room {
    /// A room where `human` plays the house at `level`; who is player 1 is
    /// drawn from `rng`. The game starts now.
    pub fn house(
        code: Arc<str>,
        rules: Rules,
        settings: Settings,
        mut rng: StdRng,
        human: (ConnId, Arc<Identity>),
        level: HouseLevel,
        now: Instant,
    ) -> Result<Room, ErrorCode> {
        let human_first = rng.random();
        let mut room = Room::empty(code, rules, settings, rng)?;
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
    pub(super) fn prompt_house(&mut self, now: Instant) {
        // Most rooms have no house: nothing more is looked at for them.
        let Some(level) = self.house else { return };
        let Some(seat) = self.house_seat() else { return };
        if self.phase != Phase::Playing || self.game.turn() != Some(seat_player(seat)) {
            return;
        }
        self.clock.stop();
        let seq = self.game.moves().len() + 1;
        let human = self.seats[1 - seat].as_ref();
        let asker = match human.and_then(|s| s.who.account) {
            Some(account) => Asker::Account(account),
            None => Asker::Conn(human.map_or(HOUSE, |s| s.conn)),
        };
        // On a Fischer clock the house spends its time as a bot would.
        let budget = self.fischer.as_ref().and_then(|c| {
            let side = c.running()?;
            Some(self.rules.clock?.move_budget(super::ms(c.at(now)[side])))
        });
        self.out.push(Output::Think { seq, game: Box::new(self.game.clone()), level, asker, budget });
    }

    /// Whether the game still waits for the house's move number `seq`: a
    /// search for a move nobody waits for any more (the game ended, was
    /// left, resigned, forfeited, shut down) is stopped.
    pub fn house_waits(&self, seq: usize) -> bool {
        self.house_seat().is_some_and(|seat| {
            self.phase == Phase::Playing
                && self.game.moves().len() + 1 == seq
                && self.game.turn() == Some(seat_player(seat))
        })
    }

    /// The house's choice for move number `seq` (`None`: no search was
    /// had in time, or it failed), played if the game still waits for that
    /// move. Without a choice, or with one that is not an empty cell, the
    /// house plays [`quick`]: it never stalls a game nor misses its second.
    pub fn house_move(&mut self, seq: usize, cell: Option<(usize, usize)>, now: Instant) {
        let Some(seat) = self.house_seat() else { return };
        if !self.house_waits(seq) {
            return;
        }
        let n = self.rules.size;
        let empty = |&(r, c): &(usize, usize)| r < n && c < n && !self.game.is_occupied(r, c);
        let cell = cell.filter(empty).or_else(|| quick(&self.game));
        if let Some((r, c)) = cell {
            self.play(seat, r as i64, c as i64, None, Duration::ZERO, now);
        }
    }
}

/// Boards whose cells times win length are at most this get the heuristic
/// as the quick move: at most ~250 µs unoptimized (15×15, five in a row),
/// fine on a room's task. Beyond it the heuristic costs milliseconds.
const QUICK_HEURISTIC: usize = 2048;

/// A move without a search, cheap enough for a room's task to make when
/// the house had no search in time: the heuristic on small boards, else the
/// empty cell nearest the last move (the centre of an empty board). `None` only on a full board.
pub fn quick(game: &Game) -> Option<(usize, usize)> {
    let (n, k) = (game.size(), game.win());
    // A game over has no move to make.
    game.turn()?;
    if n * n * k <= QUICK_HEURISTIC {
        return Some(tictactoe_bots::heuristic::choose(game));
    }
    let Some(&[r, c]) = game.moves().last() else { return Some((n / 2, n / 2)) };
    let (r, c) = (usize::from(r), usize::from(c));
    // Rings around the last move, nearest first: a few cells in play, the
    // whole board only when it is nearly full.
    for d in 1..n {
        let (top, left) = (r.saturating_sub(d), c.saturating_sub(d));
        let (bottom, right) = ((r + d).min(n - 1), (c + d).min(n - 1));
        for row in top..=bottom {
            let free = |&col: &usize| !game.is_occupied(row, col);
            let found = if row.abs_diff(r) == d {
                (left..=right).find(free)
            } else {
                [c.checked_sub(d), (c + d < n).then_some(c + d)].into_iter().flatten().find(free)
            };
            if let Some(col) = found {
                return Some((row, col));
            }
        }
    }
    None
}
