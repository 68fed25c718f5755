//! How a room closes: silently at shutdown, or telling everyone still
//! attached why (`room_closed`), and what it answers afterwards.

use tictactoe_protocol::{ClosedReason, ErrorCode, RequestId, ServerMessage};

use super::{Output, Room};
use crate::core::ids::ConnId;

impl Room {
    /// After a game ends: a seat whose player is gone cannot rematch, so the
    /// pairing ends and whoever is still here is told.
    pub(super) fn close_if_away(&mut self) {
        if self.anyone_away() {
            self.close_because(ClosedReason::Disconnect, None);
        }
    }

    /// Closes the room, telling everyone still attached but `leaver` why.
    pub(super) fn close_because(&mut self, reason: ClosedReason, leaver: Option<ConnId>) {
        if self.closed {
            return;
        }
        let told: Vec<ConnId> = self.attached().filter(|&c| Some(c) != leaver).collect();
        // Released before told: a client that reads `room_closed` and at once
        // asks for something new finds its connection already out of the room.
        self.close();
        let msg = ServerMessage::RoomClosed { room: self.code.clone(), reason };
        self.out.broadcast(msg, told.into_iter());
    }

    /// Ends the room without a word (shutdown, or nobody left to tell).
    pub(super) fn close(&mut self) {
        if self.closed {
            return;
        }
        let attached: Vec<ConnId> = self.attached().collect();
        for to in attached {
            self.out.push(Output::Release { to });
        }
        self.spectators.clear();
        self.seats = [None, None];
        self.clock.stop();
        self.closed = true;
    }

    /// Refuses an entry request to a room that has closed; true if it did.
    pub(super) fn refused_closed(&mut self, conn: ConnId, code: ErrorCode, id: Option<RequestId>) -> bool {
        if self.closed {
            self.refuse(conn, code, "that room has closed; start a new game", id);
            self.out.push(Output::Release { to: conn });
        }
        self.closed
    }
}
