//! The full screen in an arena tournament (`ttt tournament join`): each
//! pairing played as `ttt play` plays a game, the standings between games,
//! berserk, pause and join again, and the end once the tournament is over
//! and the last game counted.

use std::time::Instant;

use tictactoe_protocol::{ClientMessage, ServerMessage};

use super::{Do, Screen};
use crate::net::Event;
use crate::session::SessionError;
use crate::tournament::follow::{self, Following};
use crate::tournament::now_ms;
use crate::tournament::table::{self, Marks};

/// A command typed and entered in a tournament (rather than a cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::ui::screen) enum Typed {
    /// `b` or `berserk`.
    Berserk,
    /// `p` or `pause`.
    Pause,
    /// `j` or `join`.
    Join,
}

/// The note until the tournament answers the join.
const JOINING: &str = "joining the tournament…";

impl Typed {
    /// The command `text` names, if any.
    pub(in crate::ui::screen) fn read(text: &str) -> Option<Typed> {
        match text.trim().to_ascii_lowercase().as_str() {
            "b" | "berserk" => Some(Typed::Berserk),
            "p" | "pause" => Some(Typed::Pause),
            "j" | "join" => Some(Typed::Join),
            _ => None,
        }
    }
}

impl Screen {
    /// Plays the tournament `id` as `name`.
    pub(in crate::ui::screen) fn in_tournament(&mut self, id: &str, name: &str) {
        self.tournament = Some(Following::new(id, name));
        self.view.note = JOINING.into();
    }

    /// What a link event means in a tournament, before the game's rules:
    /// `Some` answers it whole.
    pub(super) fn tournament_link(&mut self, event: &Event) -> Option<Do> {
        let played = self.view.over.is_some();
        let paused = self.paused;
        let t = self.tournament.as_mut()?;
        let msg = match event {
            // A reconnect left the tournament: back in (or watching, while paused).
            Event::Resumed if paused => {
                return Some(Do::Send(ClientMessage::TournamentWatch { tournament: t.id.clone() }));
            }
            Event::Resumed => return Some(Do::Send(t.join())),
            Event::Msg(msg) => msg,
            _ => return None,
        };
        if let Some(why) = follow::refusal(msg, played) {
            return Some(Do::End(Err(SessionError::Refused(why).into())));
        }
        let now = Instant::now();
        t.on_msg(msg, now, now_ms());
        match msg {
            ServerMessage::Berserked { .. } => follow::berserked(&mut self.view, msg, now),
            ServerMessage::TournamentUpdate { .. } if self.view.note == JOINING => {
                self.view.note = "joined: waiting for a pairing…".into();
            }
            ServerMessage::TournamentUpdate { .. } => {}
            ServerMessage::RoomClosed { .. } => {
                self.view.closed = Some(tictactoe_protocol::ClosedReason::Finished);
                self.view.clocks = self.view.clocks.map(|c| c.stopped(now));
            }
            _ => return None,
        }
        Some(self.if_over(now))
    }

    /// The end, once the tournament is over for the player: the last
    /// game's result and their final standing.
    pub(in crate::ui::screen) fn if_over(&mut self, now: Instant) -> Do {
        let in_game = self.in_game();
        let Some(t) = self.tournament.as_mut() else { return Do::Wait };
        if !t.over(in_game, now) {
            return Do::Wait;
        }
        let standing = t.standing(Marks::for_terminal()).unwrap_or_default();
        Do::End(Ok(Some(format!("{} is over: {standing}", t.title()))))
    }

    /// A tick at `now`: the tournament is looked at again when its time is
    /// up and no finished standings came, and ends once over.
    pub(in crate::ui::screen) fn tournament_tick(&mut self, now: Instant) -> Do {
        let Some(t) = self.tournament.as_mut() else { return Do::Wait };
        if t.next_poke().is_none_or(|at| now < at) {
            return Do::Wait;
        }
        match t.poked(now) {
            Some(ask) => Do::Send(ask),
            None => self.if_over(now),
        }
    }

    /// What a typed tournament command sends, and what the note says.
    pub(in crate::ui::screen) fn tournament_command(&mut self, typed: Typed) -> Option<ClientMessage> {
        let id = self.tournament.as_ref()?.id.clone();
        match typed {
            Typed::Berserk if self.can_berserk() => Some(ClientMessage::Berserk {}),
            Typed::Berserk => {
                self.view.note = "berserk is only before your first move in a game".into();
                None
            }
            Typed::Pause => {
                self.paused = true;
                self.view.note = "paused: not paired again until j".into();
                Some(ClientMessage::TournamentLeave { tournament: id })
            }
            Typed::Join => {
                self.paused = false;
                self.view.note = "joined again: waiting for a pairing…".into();
                Some(ClientMessage::TournamentJoin { tournament: id })
            }
        }
    }

    /// Whether going berserk is possible now: in a game, before your own first move.
    fn can_berserk(&self) -> bool {
        let Some(me) = self.view.you else { return false };
        let moves = self.view.game.moves().len();
        let mine = if me == tictactoe_protocol::Player::X { moves.div_ceil(2) } else { moves / 2 };
        self.in_game() && mine == 0
    }

    /// Between a tournament's games: the standings are shown instead of the board.
    pub(in crate::ui::screen) fn between_games(&self) -> bool {
        self.tournament.is_some() && !self.in_game()
    }

    /// The tournament's lines between games, at most `rows` of them: its
    /// heading, where the player stands, and the standings.
    pub(in crate::ui::screen) fn standings_lines(&self, rows: usize) -> Vec<String> {
        let Some(t) = &self.tournament else { return Vec::new() };
        let Some(view) = &t.view else { return vec![format!("{}: waiting for its standings…", t.title())] };
        let marks = Marks::for_terminal();
        let mut lines = vec![table::heading(&view.summary, now_ms())];
        lines.push(t.standing(marks).unwrap_or_default());
        if self.paused {
            lines.push("paused: j joins again".into());
        }
        lines.push(String::new());
        lines.extend(table::standings(view, Some(&t.name), marks));
        lines.truncate(rows.max(3));
        lines
    }

    /// The title's tournament part during a game: its name and the player's standing.
    pub(in crate::ui::screen) fn tournament_title(&self) -> Option<String> {
        let t = self.tournament.as_ref()?;
        let standing = t.standing(Marks::for_terminal()).map_or(String::new(), |s| format!(" — {s}"));
        Some(format!("{}{standing}", t.title()))
    }
}
