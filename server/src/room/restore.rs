//! A saved game's room again after a restart: the moves replayed into a
//! fresh game, both players away with a fresh grace period, the turn clock
//! paused with the time it had.

use std::time::{Duration, Instant};

use tictactoe_protocol::{EndReason, ErrorCode, Fischer, OpenLines, Outcome, Player, Status};

use std::sync::Arc;

use rand::rngs::StdRng;

use super::fischer::Clocks;
use super::house::{HOUSE, is_house};
use super::seats::Seat;
use super::{Phase, Room, Settings};
use crate::core::account::Identity;
use crate::core::ids::ConnId;
use crate::store::changes::LiveGame;

/// The connection of a seat nobody has taken back yet: connection ids start at 1.
const NOBODY: ConnId = ConnId::MIN;

impl Room {
    /// The room of `saved`, which started `age` ago, as of its last saved
    /// move. A saved game whose last move ended it (the server stopped before
    /// its record was written) ends at once, with its record.
    pub fn restore(
        saved: LiveGame,
        settings: Settings,
        rng: StdRng,
        age: Duration,
        now: Instant,
    ) -> Result<Room, ErrorCode> {
        let settings = Settings { turn_timeout: saved.turn_timeout, ..settings };
        let grace = settings.grace;
        let mut room = Room::empty(saved.room, saved.rules, settings, rng)?;
        room.game_id = Some(saved.id);
        room.tournament = saved.tournament;
        room.berserk = saved.berserk;
        if saved.opening > 0 {
            // The room's host and reservations went with the old process;
            // its opening stays the game's (its first moves, unrated).
            let opening = saved.moves.iter().take(saved.opening).copied().collect();
            let organised = super::organised::Organised { host: None, reserved: None, opening, games: None };
            room.organised = Some(Box::new(organised));
        }
        let mut last = None;
        for &[row, col] in &saved.moves {
            let player = room.game.turn().unwrap_or(Player::X);
            match room.game.play_as(player, usize::from(row), usize::from(col)) {
                Ok(status) => last = Some(status),
                // Moves are saved only once the engine accepted them.
                Err(_) => break,
            }
        }
        let [x, o] = saved.players;
        // The house is back at once; a player is away until they resume.
        let seat = |who: Arc<Identity>, token| match is_house(&who) {
            true => Seat::new(HOUSE, who),
            false => Seat { conn: NOBODY, who, token: Some(token), away_until: Some(now + grace) },
        };
        room.seats = [Some(seat(x, saved.tokens[0])), Some(seat(o, saved.tokens[1]))];
        if room.house_seat().is_some() {
            room.house = Some(saved.house.unwrap_or_default());
        }
        room.phase = Phase::Playing;
        room.counts.started = 1;
        room.counts.moves = room.game.moves().len() as u64;
        room.started = Some(now.checked_sub(age).unwrap_or(now));
        match room.rules.clock {
            Some(terms) => room.restore_clocks(terms, &saved.times, now),
            None => {
                room.clock.restart(now, true);
                if let Some(left) = saved.clock_left {
                    room.clock.hold(left);
                }
            }
        }
        let (outcome, reason, line) = match last {
            Some(Status::Won { winner, line }) => (Outcome::Decisive { winner }, EndReason::Line, Some(line)),
            Some(Status::Draw) => (Outcome::Draw, EndReason::Draw, None),
            _ => {
                room.prompt_house(now);
                return Ok(room);
            }
        };
        room.finish(Some(outcome), reason, line, now);
        room.close_if_away();
        Ok(room)
    }

    /// A Fischer game's clocks as saved with its moves (`times`: the mover's
    /// time left after each): the time the server was away is charged to
    /// nobody, and the clock of the side to move runs again from `now`,
    /// whether or not its player is back.
    fn restore_clocks(&mut self, terms: Fischer, times: &[u64], now: Instant) {
        let mut lines = OpenLines::new(self.rules.size, self.rules.win).ok();
        let mut left = [Duration::from_millis(terms.initial_ms); 2];
        for (i, &[row, col]) in self.game.moves().iter().enumerate() {
            let player = if i % 2 == 0 { Player::X } else { Player::O };
            if let Some(lines) = lines.as_mut() {
                lines.play(player, usize::from(row), usize::from(col));
            }
            if let Some(&ms) = times.get(i) {
                left[i % 2] = Duration::from_millis(ms);
            }
        }
        self.times = times.iter().copied().take(self.game.moves().len()).collect();
        self.lines = lines;
        let mut clocks = Clocks::saved(terms, left);
        for side in (0..2).filter(|&s| self.berserk[s]) {
            clocks.berserk(side);
        }
        match (self.game.moves().len(), self.game.turn()) {
            (0 | 1, _) => self.clock.restart(now, false),
            (_, Some(next)) => clocks.start(usize::from(next == Player::O), now),
            _ => {}
        }
        self.fischer = Some(clocks);
    }
}
