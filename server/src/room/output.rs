//! What a room asks of the task around it, in order: messages to one
//! connection or to several, and changes in who the room holds.

use std::ops::Range;

use tictactoe_protocol::ServerMessage;

/// A connection's number, unique for the server's lifetime.
pub type ConnId = u64;

/// One thing for the room's task to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Send `msg` to one connection.
    Send {
        /// The recipient.
        to: ConnId,
        /// The message.
        msg: ServerMessage,
    },
    /// Send `msg` to several connections: serialize it once.
    Broadcast {
        /// The message.
        msg: ServerMessage,
        /// Where the recipients are in the slice that [`Outbox::drain`] gives.
        to: Range<usize>,
    },
    /// A game the connection plays in started (`true`) or ended (`false`).
    Live {
        /// The player's connection.
        to: ConnId,
        /// Whether a game is in progress.
        live: bool,
    },
    /// The room no longer holds the connection.
    Release {
        /// The released connection.
        to: ConnId,
    },
    /// Another connection took over this one's seat with `resume`.
    Replace {
        /// The replaced connection.
        to: ConnId,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_ranges_index_their_recipients_and_the_buffer_is_reused() {
        let mut o = Outbox::default();
        o.broadcast(ServerMessage::RematchOffered {}, [1, 2].into_iter());
        o.send(3, ServerMessage::OpponentReconnected {});
        o.broadcast(ServerMessage::Pong { id: None }, [4].into_iter());
        o.broadcast(ServerMessage::Pong { id: None }, std::iter::empty());
        let (out, rcpt) = o.drain();
        let out: Vec<Output> = out.collect();
        assert_eq!(out.len(), 3, "an empty broadcast is dropped");
        let Output::Broadcast { to, .. } = &out[0] else { panic!("{out:?}") };
        assert_eq!(&rcpt[to.clone()], &[1, 2]);
        let Output::Broadcast { to, .. } = &out[2] else { panic!("{out:?}") };
        assert_eq!(&rcpt[to.clone()], &[4]);
        // The next round starts the buffer afresh.
        o.broadcast(ServerMessage::Pong { id: None }, [9].into_iter());
        let (out, rcpt) = o.drain();
        let out: Vec<Output> = out.collect();
        assert_eq!(out, vec![Output::Broadcast { msg: ServerMessage::Pong { id: None }, to: 0..1 }]);
        assert_eq!(rcpt, &[9]);
    }
}
