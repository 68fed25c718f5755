//! The bot in an arena tournament: it joins, plays each pairing the server
//! makes (going berserk when asked to), joins again after a reconnect, and
//! ends with a summary once the tournament is over and its last game counted.

use std::time::Instant;

use tictactoe_protocol::ServerMessage;

use super::{Bot, Do};
use crate::bot_cmd::BotError;
use crate::net::Event;
use crate::session::SessionError;
use crate::tournament::follow::{self, Following};
use crate::tournament::now_ms;
use crate::tournament::table::standing_of;

impl Bot {
    /// Plays every pairing of tournament `id` as `name`; with `berserk`,
    /// goes berserk in each game before its first move.
    pub(in crate::bot_cmd) fn in_tournament(mut self, id: &str, name: &str, berserk: bool) -> Bot {
        self.tournament = Some(Following::new(id, name));
        self.berserk = berserk;
        self.games = u32::MAX;
        self.until_closed = false;
        self
    }

    /// When to look at the tournament again (its time is up, but no
    /// finished standings came), if it is played.
    pub(in crate::bot_cmd) fn poke_at(&self) -> Option<Instant> {
        self.tournament.as_ref().and_then(Following::next_poke)
    }

    /// The time of [`Bot::poke_at`] came.
    pub(in crate::bot_cmd) fn on_poke(&mut self, now: Instant) -> Vec<Do> {
        let Some(t) = self.tournament.as_mut() else { return Vec::new() };
        let ask = t.poked(now);
        let mut out: Vec<Do> = ask.map(Do::Quietly).into_iter().collect();
        out.extend(self.if_over(now));
        out
    }

    /// What a link event means in a tournament, before the rest of the
    /// bot's rules: `Some` answers it whole.
    pub(super) fn tournament_event(&mut self, event: &Event, now: Instant) -> Option<Vec<Do>> {
        let played = self.tally.played() > 0;
        let in_game = self.view.you.is_some() && self.view.over.is_none();
        let t = self.tournament.as_mut()?;
        let msg = match event {
            // Joined again: a reconnect (with its seat resumed or not) left the tournament.
            Event::Resumed => return Some(vec![Do::Send(t.join())]),
            Event::Msg(msg) => msg,
            _ => return None,
        };
        if let Some(why) = follow::refusal(msg, played) {
            return Some(vec![Do::Fail(BotError::Session(SessionError::Refused(why)))]);
        }
        let changed = t.on_msg(msg, now, now_ms());
        match msg {
            ServerMessage::Berserked { .. } => {
                follow::berserked(&mut self.view, msg, now);
                Some(Vec::new())
            }
            // The server pairs again: nothing to ask for.
            ServerMessage::RoomClosed { .. } => Some(self.if_over(now)),
            ServerMessage::Error { .. } if !in_game => Some(self.if_over(now)),
            _ if changed => Some(self.if_over(now)),
            _ => None,
        }
    }

    /// The end of the run, when the tournament is over for the bot: its
    /// summary (games, results, final rank and score) and the tally.
    pub(super) fn if_over(&mut self, now: Instant) -> Vec<Do> {
        let in_game = self.view.you.is_some() && self.view.over.is_none();
        let Some(t) = self.tournament.as_mut() else { return Vec::new() };
        if !t.over(in_game, now) {
            return Vec::new();
        }
        let tally = self.tally;
        let place = t.view.as_ref().and_then(|v| standing_of(v, &t.name).map(|s| (s, v.standings.len())));
        let standing = match place {
            Some((s, of)) => format!("final rank {} of {of}, score {}", s.rank, s.score),
            None => "not in the final standings".to_owned(),
        };
        let line = format!("tournament {}: games: {}, {tally}; {standing}", t.title(), tally.played());
        vec![Do::Print(line), Do::Done(tally)]
    }
}
