//! A tournament's game between two paired players: the asking player was
//! drafted by its instance's tournament task; the lobby where the opponent
//! is drafts the opponent too and opens their room, or frees the asker.

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tictactoe_protocol::Rules;

use super::{Lobby, Output};
use crate::cmd::{Ask, Peer, Where};
use crate::core::account::Identity;
use crate::core::ids::{ALONE, ConnId};
use crate::room::Room;

impl<C: Peer> Lobby<C> {
    /// `conn` (drafted) meets `opponent` (on `at`, else here) in a game of
    /// `tournament` on `rules`, unless its time is up (`ends_at`, Unix ms):
    /// no game starts after. Either player is X at random.
    pub(super) fn tournament_meet(
        &mut self,
        conn: C,
        who: Arc<Identity>,
        (tournament, rules, ends_at): (Arc<str>, Rules, i64),
        (opponent, at): (u64, Option<Arc<str>>),
        now: Instant,
    ) {
        if let Some(at) = at.filter(|_| self.cluster.is_some()) {
            let ask = Ask::TournamentMeet { who, tournament, rules, opponent, at: None, ends_at };
            return self.out.push(Output::Elsewhere { conn, ask, at: Where::At(at) });
        }
        let over = self.settings.wall.unix_ms(now) >= ends_at;
        let found = match conn.is_closed() || over {
            true => None,
            false => self.players.draft(ConnId::new(ALONE, opponent)),
        };
        let Some((other, other_who)) = found else {
            // The opponent is no longer free (or gone): the asker is free again.
            self.players.undraft(conn.id());
            return self.out.push(Output::Refused { to: conn });
        };
        let (mut first, mut second) = ((conn.id(), who), (other.id(), other_who));
        if self.rng.random() {
            std::mem::swap(&mut first, &mut second);
        }
        let (code, rng) = (self.new_code(), StdRng::from_rng(&mut self.rng));
        let drafted = vec![conn.id(), other.id()];
        let room = (code, rules, self.settings.clone(), rng);
        match Room::tournament_game(tournament, room, [first, second], now) {
            Ok(room) => self.open(room, vec![conn, other], drafted),
            Err(_) => {
                // The tournament's terms were checked when it was created.
                self.players.undraft(conn.id());
                self.players.undraft(other.id());
                self.out.push(Output::Refused { to: conn });
                self.out.push(Output::Refused { to: other });
            }
        }
    }
}
