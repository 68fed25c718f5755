//! How a game ended, as the client tells it: in a player's words, or from
//! the server's record when the game ended while our seat was away.

use tictactoe_protocol::api::GameRecord;
use tictactoe_protocol::{ClosedReason, EndReason, Game, Player, PlayerInfo};

use super::{View, shown};
use crate::say::clean;

impl View {
    /// Our seat could not be taken back (`why`): a game in progress ended
    /// while we were away, and we say so instead of showing a live board.
    pub fn seat_lost(&mut self, why: &str) {
        let playing = self.you.is_some() && self.over.is_none() && self.game.turn().is_some();
        if playing {
            self.over = Some((None, EndReason::Disconnect, None));
            self.gone = Some(format!(
                "Game over while you were away: {why}. A seat not taken back within the grace period is lost by disconnect."
            ));
        }
        self.deadline = None;
        self.paused = None;
    }

    /// Our seat's game ended while we were away, and the server's record of
    /// it (`GET /api/games/{id}`) says how: the final board and the result
    /// take the place of the live game. Our mark is the one we had, else
    /// `kept` (a seat file's, for a client started again), else the seat
    /// named `name` (who we play as) if only one is; the room is gone for
    /// us, so no rematch is offered. `false`, and nothing changed, for a
    /// record of a board no game can have.
    pub fn ended(&mut self, record: &GameRecord, name: &str, kept: Option<Player>) -> bool {
        let Ok(game) = Game::with_win(record.size, record.win) else { return false };
        let named: Vec<Player> = [Player::X, Player::O]
            .into_iter()
            .zip(&record.players)
            .filter(|(_, p)| p.name.eq_ignore_ascii_case(name))
            .map(|(mark, _)| mark)
            .collect();
        let by_name = if let [mark] = named[..] { Some(mark) } else { None };
        self.you = self.you.or(kept).or(by_name);
        self.game = game;
        self.replay(&record.moves);
        self.names = record
            .players
            .iter()
            .map(|p| {
                let info = PlayerInfo {
                    name: p.name.as_str().into(),
                    account: p.account,
                    bot: p.bot,
                    rating: p.rating,
                };
                shown(&info)
            })
            .collect();
        let winner = match record.winner {
            1 => Some(Player::X),
            2 => Some(Player::O),
            _ => None,
        };
        self.over = Some((winner, record.reason, record.line));
        self.room = Some(clean(&record.room));
        self.closed = Some(ClosedReason::Disconnect);
        self.gone = None;
        self.deadline = None;
        self.paused = None;
        self.note = "your game ended while you were away; n: new game, q: quit".into();
        true
    }

    /// One line saying how the game ended, in a player's words: from our
    /// seat's point of view, or, watching, by the players' marks and names.
    pub fn result_line(&self) -> Option<String> {
        if let Some(gone) = &self.gone {
            return Some(gone.clone());
        }
        let (winner, reason, _) = self.over?;
        let Some(winner) = winner else {
            let why = match reason {
                EndReason::Draw => "Draw — the board is full",
                EndReason::Shutdown => "No winner — the server shut down",
                EndReason::Aborted => "Aborted — the game ended before both players had moved",
                _ => "No winner",
            };
            return Some(format!("Result: {why}"));
        };
        let loser = winner.other();
        let (head, them) = match self.you {
            Some(me) if me == winner => ("You won".to_owned(), "your opponent".to_owned()),
            Some(_) => ("You lost".to_owned(), "you".to_owned()),
            None => (format!("{} won", self.player(winner)), loser.mark().to_string()),
        };
        let how = match reason {
            EndReason::Resign => format!(" — {them} resigned"),
            EndReason::Timeout => format!(" — {them} ran out of time"),
            EndReason::Disconnect if them == "you" => " — your connection was gone too long".to_owned(),
            EndReason::Disconnect => format!(" — {them} did not come back"),
            _ => String::new(),
        };
        Some(format!("Result: {head}{how}"))
    }
}
