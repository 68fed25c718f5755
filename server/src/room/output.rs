//! What a room hands its task: one [`Output`] per thing to do, queued in
//! the [`Outbox`] the task drains after each input.

use std::ops::Range;
use std::time::Duration;

use tictactoe_protocol::{Game, HouseLevel, ServerMessage};

use crate::core::ids::ConnId;
use crate::store::changes::LiveWrite;
use crate::store::record::GameRecord;

/// One thing for the room's task to do.
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send `msg` to one connection.
    Send { to: ConnId, msg: ServerMessage },
    /// Send `msg` to several connections: serialize it once.
    Broadcast {
        msg: ServerMessage,
        /// Where the recipients are in the slice that [`Outbox::drain`] gives.
        to: Range<usize>,
    },
    /// A game the connection plays in started (`true`) or ended (`false`).
    Live { to: ConnId, live: bool },
    /// The room no longer holds the connection.
    Release { to: ConnId },
    /// Another connection took over this one's seat with `resume`.
    Replace { to: ConnId },
    /// With records kept: a change to the saved copy of the game in
    /// progress, for the store (a `Start`'s time is the task's to stamp).
    Save(LiveWrite),
    /// The house is to play move number `seq` of `game` at `level`: its
    /// choice comes back through [`Room::house_move`].
    Think {
        /// The move's number: 1 for the first.
        seq: usize,
        game: Box<Game>,
        level: HouseLevel,
        /// Whom the house plays, for taking turns with other players' searches.
        asker: crate::house::Asker,
        /// On a Fischer clock: the most this move may take, from the
        /// house's time left (the search's own limit applies too).
        budget: Option<Duration>,
    },
    /// A game finished: its record for the store, with how long it lasted
    /// (the task knows the wall clock).
    Record {
        /// Its times are still to be stamped.
        record: Box<GameRecord>,
        /// From the game's start to its end.
        lasted: Duration,
        /// The connections of player 1 and player 2 as the game ended, if
        /// they were there: who hears of the new ratings.
        players: [Option<ConnId>; 2],
    },
}

/// The room's queue of outputs. A broadcast's recipients are recorded when it
/// is queued (who is in the room then), in one buffer reused across calls, so
/// that a move allocates nothing here.
#[derive(Debug, Default)]
pub struct Outbox {
    out: Vec<Output>,
    recipients: Vec<ConnId>,
}

impl Outbox {
    /// Queues `msg` for `to`.
    pub fn send(&mut self, to: ConnId, msg: ServerMessage) {
        self.out.push(Output::Send { to, msg });
    }

    /// Queues `msg` once for all of `to`.
    pub fn broadcast(&mut self, msg: ServerMessage, to: impl Iterator<Item = ConnId>) {
        if self.out.is_empty() {
            self.recipients.clear();
        }
        let start = self.recipients.len();
        self.recipients.extend(to);
        let to = start..self.recipients.len();
        if !to.is_empty() {
            self.out.push(Output::Broadcast { msg, to });
        }
    }

    /// Queues a signal or a single message.
    pub fn push(&mut self, output: Output) {
        self.out.push(output);
    }

    /// Everything queued since the last call, in order, and the recipients
    /// that its broadcasts' ranges index.
    pub fn drain(&mut self) -> (std::vec::Drain<'_, Output>, &[ConnId]) {
        (self.out.drain(..), &self.recipients)
    }
}
