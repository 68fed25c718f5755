//! A tournament a player is in (`ttt tournament join`, `ttt bot
//! --tournament`): its latest standings, its games' outcome for this
//! player, and when it is over for them — finished, and their last game
//! counted. Without a socket or a clock: messages and instants come in.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::tournament::{TournamentStatus, TournamentView};
use tictactoe_protocol::{ClientMessage, ErrorCode, ServerMessage};

use super::table::{self, Marks};

/// How often a player whose tournament's time is up, but who has not heard
/// so, asks for its standings (`tournament_watch`).
const POKE_EVERY: Duration = Duration::from_secs(2);

/// How long a finished tournament's last game may go uncounted in the
/// standings before the player stops waiting for it.
const COUNT_WAIT: Duration = Duration::from_secs(10);

/// One player's part in a tournament.
#[derive(Debug, Clone)]
pub struct Following {
    /// The tournament's id.
    pub id: String,
    /// The player's name, as the standings list it.
    pub name: String,
    /// The latest standings.
    pub view: Option<TournamentView>,
    /// The player's last game, until the standings count it.
    uncounted: Option<Arc<str>>,
    /// The server said the tournament's time is up (`tournament_finished`).
    said_finished: bool,
    /// When to look again: the time is up and no finished standings came,
    /// or the last game is not counted yet.
    poke: Option<Instant>,
    /// When the player stops waiting for the last game to be counted.
    give_up: Option<Instant>,
}

impl Following {
    /// `name`'s part in the tournament `id`, before any message.
    pub fn new(id: &str, name: &str) -> Following {
        Following {
            id: id.trim().to_owned(),
            name: name.to_owned(),
            view: None,
            uncounted: None,
            said_finished: false,
            poke: None,
            give_up: None,
        }
    }

    /// The request that joins it (again, after a reconnect).
    pub fn join(&self) -> ClientMessage {
        ClientMessage::TournamentJoin { tournament: self.id.clone() }
    }

    /// Takes in a server message at `now`: whether the standings changed.
    pub fn on_msg(&mut self, msg: &ServerMessage, now: Instant, now_ms: i64) -> bool {
        match msg {
            ServerMessage::TournamentUpdate { tournament } if *tournament.summary.id == *self.id => {
                let counted = |id: &Arc<str>| tournament.games.iter().any(|g| g == id);
                if self.uncounted.as_ref().is_some_and(counted) {
                    self.uncounted = None;
                }
                // Time left by this machine's clock: looked at again once it is up.
                let left = u64::try_from(tournament.summary.ends_at.saturating_sub(now_ms)).unwrap_or(0);
                self.poke = (tournament.summary.status != TournamentStatus::Finished)
                    .then(|| now + Duration::from_millis(left) + POKE_EVERY);
                self.view = Some((**tournament).clone());
                true
            }
            ServerMessage::GameStarted { tournament: Some(_), .. } => {
                self.uncounted = None;
                false
            }
            ServerMessage::GameOver { game_id, .. } => {
                self.uncounted = game_id.clone();
                self.give_up = None;
                false
            }
            ServerMessage::Error { code: ErrorCode::TournamentFinished, .. } => {
                self.said_finished = true;
                false
            }
            _ => false,
        }
    }

    /// Whether the tournament's time is up.
    pub fn finished(&self) -> bool {
        self.said_finished
            || self.view.as_ref().is_some_and(|v| v.summary.status == TournamentStatus::Finished)
    }

    /// Whether it is over for this player at `now`: finished, not `in_game`,
    /// and their last game counted (or waited for long enough).
    pub fn over(&mut self, in_game: bool, now: Instant) -> bool {
        if !self.finished() || in_game {
            return false;
        }
        if self.uncounted.is_none() {
            return true;
        }
        let give_up = *self.give_up.get_or_insert(now + COUNT_WAIT);
        now >= give_up
    }

    /// When to call [`Following::poked`] next.
    pub fn next_poke(&self) -> Option<Instant> {
        match (self.finished(), self.give_up) {
            (true, Some(at)) => Some(at),
            (true, None) => None,
            (false, _) => self.poke,
        }
    }

    /// The time of [`Following::next_poke`] came: what to ask the server (the
    /// standings, to learn the tournament finished), if anything.
    pub fn poked(&mut self, now: Instant) -> Option<ClientMessage> {
        if self.finished() {
            return None;
        }
        self.poke = Some(now + POKE_EVERY);
        Some(ClientMessage::TournamentWatch { tournament: self.id.clone() })
    }

    /// Where the player stands, in one line (`rank 2 of 8, score 9`).
    pub fn standing(&self, marks: Marks) -> Option<String> {
        self.view.as_ref().map(|v| table::standing_line(v, &self.name, marks))
    }

    /// The tournament's name, once known.
    pub fn title(&self) -> String {
        self.view
            .as_ref()
            .map_or_else(|| format!("tournament {}", self.id), |v| crate::say::clean(&v.summary.name))
    }
}

/// Folds a `berserked` into `view`: both clocks as the server reports them,
/// and the berserker's increment gone (the view's clock is the player's own).
pub fn berserked(view: &mut crate::view::View, msg: &ServerMessage, now: Instant) {
    let ServerMessage::Berserked { player, clocks, .. } = msg else { return };
    let running = view.clocks.and_then(|c| c.running);
    view.clocks = Some(crate::view::Clocks::new(*clocks, running, now));
    if view.you == Some(*player) {
        view.fischer = view.fischer.map(|f| tictactoe_protocol::Fischer { increment_ms: 0, ..f });
    }
    let who = if view.you == Some(*player) { "you".to_owned() } else { view.player(*player) };
    view.note = format!("{who} went berserk: half the clock, no increment");
}

/// A refusal that ends a tournament session before it plays (no account,
/// no such tournament, its time already up), in the server's words with
/// what to do.
pub fn refusal(msg: &ServerMessage, played: bool) -> Option<String> {
    let ServerMessage::Error { code, message, .. } = msg else { return None };
    let message = crate::say::clean(message);
    match code {
        ErrorCode::AccountRequired => Some(format!(
            "{message} (tournaments need an account: `{} register NAME`, then play under that name)",
            crate::say::invoked_as()
        )),
        ErrorCode::TournamentNotFound => {
            Some(format!("{message} (`{} tournament list` lists them)", crate::say::invoked_as()))
        }
        ErrorCode::TournamentFinished if !played => Some(message),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
