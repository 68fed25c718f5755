//! What a room withholds until the store has answered for a record: the
//! game's `game_over` (its ratings filled in from the answer) and whatever
//! the room said after it, in order.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::time::Instant;

use tictactoe_protocol::{RatingChange, ServerMessage};

use super::{Conns, disconnect, put};
use crate::cmd::{Outbound, encode};
use crate::core::account::AccountId;
use crate::core::ids::ConnId;
use crate::room::Room;
use crate::store::Outcome;

/// What waits for the store: each record's commit, then what the room said
/// after it, in order. Empty but for the few milliseconds after a game ends.
#[derive(Default)]
pub(super) struct Withheld {
    pub(super) waits: VecDeque<Wait>,
}

/// One finished game's record, and what waits for the store's answer.
pub(super) struct Wait {
    /// The store's answer, while it has not come.
    pub(super) answer: Option<oneshot::Receiver<Outcome>>,
    /// Past this, the store counts as stuck and nothing waits for it any more.
    pub(super) deadline: Instant,
    /// What the store did with the record, once it said (a store that is
    /// stuck or gone: not written for all the room knows, not rated).
    pub(super) outcome: Outcome,
    pub(super) game: Option<Arc<str>>,
    /// The game's players (player 1 first): their accounts, and their
    /// connections as it ended (who hears of the new ratings).
    pub(super) players: [(Option<AccountId>, Option<ConnId>); 2],
    pub(super) items: Vec<WithheldItem>,
}

/// What waits: an item for one connection, or the game's `game_over`,
/// which is serialized once the store's answer has filled in its ratings.
pub(super) enum WithheldItem {
    One(ConnId, Outbound),
    GameOver(Box<ServerMessage>, Vec<ConnId>),
}

impl Withheld {
    /// Whether anything waits.
    pub(super) fn waiting(&self) -> bool {
        !self.waits.is_empty()
    }

    /// Completes when the oldest wait is over: the store said what became of
    /// the record (committed, refused, or waiting while it cannot write), or
    /// it is stuck. Cancel-safe (the room's loop drops it whenever a request
    /// comes in): an answer is let go only once it has come.
    pub(super) async fn committed(&mut self) {
        let Some(w) = self.waits.front_mut() else { return std::future::pending().await };
        let answer = async {
            if let Some(answer) = w.answer.as_mut() {
                if let Ok(outcome) = answer.await {
                    w.outcome = outcome;
                }
                w.answer = None;
            }
        };
        let _ = tokio::time::timeout_at(w.deadline, answer).await;
    }

    /// Holds `item` for `to` if anything waits; else gives it back.
    pub(super) fn hold(&mut self, to: ConnId, item: Outbound) -> Option<(ConnId, Outbound)> {
        match self.waits.back_mut() {
            Some(w) => {
                w.items.push(WithheldItem::One(to, item));
                None
            }
            None => Some((to, item)),
        }
    }

    /// Holds the `game_over` of the last record's game (something waits).
    pub(super) fn hold_game_over(&mut self, msg: ServerMessage, to: Vec<ConnId>) {
        if let Some(w) = self.waits.back_mut() {
            w.items.push(WithheldItem::GameOver(Box::new(msg), to));
        }
    }
}

/// The oldest wait is over: the players learn their new ratings (before
/// they can read `game_over` and ask for a new game), then what it held is
/// delivered, `game_over` with the ratings the record keeps. A record the
/// store refused delivers nothing (the room lets its game go): returns the
/// outcome.
pub(super) fn release(room: &mut Room, conns: &mut Conns, held: &mut Withheld) -> Outcome {
    let Some(wait) = held.waits.pop_front() else { return Outcome::Written(None) };
    let ratings = match wait.outcome {
        Outcome::Refused => return Outcome::Refused,
        Outcome::Written(ratings) | Outcome::Waiting(ratings) => ratings,
    };
    let mut failed = Vec::new();
    let keep = room.is_closed();
    if let Some(ratings) = ratings {
        let rules = room.rules();
        for ((account, conn), rated) in wait.players.into_iter().zip(ratings) {
            let (Some(account), shown) = (account, rated.after.shown()) else { continue };
            room.rated(account, shown);
            if let Some(to) = conn {
                put(conns, to, Outbound::Rated { account, rules, shown }, keep, &mut failed);
            }
        }
    }
    for item in wait.items {
        match item {
            WithheldItem::One(to, item) => put(conns, to, item, keep, &mut failed),
            WithheldItem::GameOver(mut msg, to) => {
                if let ServerMessage::GameOver { ratings: shown, .. } = &mut *msg {
                    *shown = ratings.map(|r| {
                        r.map(|p| RatingChange { before: p.before.shown(), after: p.after.shown() })
                    });
                }
                let frame = encode(&msg);
                for to in to {
                    put(conns, to, Outbound::Frame(frame.clone()), keep, &mut failed);
                }
            }
        }
    }
    disconnect(room, conns, failed);
    wait.outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratings::{Standing, rate};
    use std::time::Duration;

    /// The room's loop polls the oldest wait and drops it whenever a request
    /// comes in first: the store's answer must still be waited for, not
    /// lost with the dropped future (a lost answer would let `game_over`
    /// out before its record is committed, or out at all when it was refused).
    #[tokio::test]
    async fn a_wait_polled_and_dropped_still_waits_for_the_answer() {
        let (answer_tx, answer) = oneshot::channel();
        let mut held = Withheld::default();
        held.waits.push_back(Wait {
            answer: Some(answer),
            deadline: Instant::now() + Duration::from_secs(600),
            outcome: Outcome::Written(None),
            game: None,
            players: [(None, None); 2],
            items: Vec::new(),
        });
        assert!(futures::poll!(Box::pin(held.committed())).is_pending());
        assert!(futures::poll!(Box::pin(held.committed())).is_pending(), "nor after another drop");
        let ratings = rate([Standing::default(); 2], Some(0));
        answer_tx.send(Outcome::Written(Some(ratings))).expect("answered");
        held.committed().await;
        assert_eq!(held.waits[0].outcome, Outcome::Written(Some(ratings)));
    }
}
