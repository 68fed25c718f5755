//! What the lobby's state machine asks its shell to do.

use tictactoe_protocol::ServerMessage;

use crate::cmd::{Ask, RoomCmd, Where};
use crate::core::ids::{ConnId, RoomAddr};
use crate::room::Room;

/// What the lobby asks its shell to do, in order.
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum Output<C> {
    /// Send `msg` to the connection.
    Send {
        /// The recipient.
        to: C,
        /// The message.
        msg: ServerMessage,
    },
    /// The connection's request went nowhere (its `error` was sent just
    /// before): it is free again.
    Refused {
        /// The connection.
        to: C,
    },
    /// Start the task of a new room, list it in the directory and tell its
    /// members they are in it (`drafted` without having asked).
    Open {
        /// The room, with its first output queued.
        room: Box<Room>,
        /// Its connections.
        members: Vec<C>,
        /// The members drafted (by an accepted challenge, or a tournament's pairing).
        drafted: Vec<ConnId>,
    },
    /// Put the connection in the room at `to` and hand the room `cmd`; a room
    /// that cannot take it refuses at once.
    Forward {
        to: RoomAddr,
        /// The request, carrying the connection.
        cmd: RoomCmd<C>,
    },
    /// The room's task ended: drop it from the directory.
    Closed { room: RoomAddr },
    /// In a cluster: what `conn` asks is answered on another instance;
    /// the bus takes it there as it is.
    Elsewhere {
        /// The asking connection.
        conn: C,
        ask: Ask,
        /// Which instance.
        at: Where,
    },
}
