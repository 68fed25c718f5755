//! Names that stay true across instances: which instance, a connection's
//! id, a room's address. Everything that routes by them (the lobby's
//! directory, a bus between instances) names things only through these, so
//! a room on another instance is one more route, not a change of types.

use std::fmt;
use std::sync::Arc;

/// Which running server: a small number each instance is given (0 when it
/// runs alone), below `u16::MAX`, whose last id is the house's seat
/// ([`ConnId::MAX`]).
pub type Instance = u16;

/// The instance number of a server that runs alone (no cluster to give it
/// another).
pub const ALONE: Instance = 0;

/// The instance number of a connection whose socket another instance
/// holds: a ghost that stands in for it here (see `cluster::relay`).
pub const RELAYED: Instance = 1;

/// A connection, unique across instances: the instance that holds its
/// socket in the top 16 bits, that instance's sequence number below. One
/// word, so it costs what a per-process number did.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(u64);

impl ConnId {
    const SEQ_BITS: u32 = 48;

    /// The lowest id, for range bounds.
    pub const MIN: ConnId = ConnId(0);

    /// The highest id: no connection has it (the house's seat uses it).
    pub const MAX: ConnId = ConnId(u64::MAX);

    /// The `seq`th connection of `instance` (`seq` below 2^48).
    pub const fn new(instance: Instance, seq: u64) -> ConnId {
        ConnId(((instance as u64) << Self::SEQ_BITS) | (seq & ((1 << Self::SEQ_BITS) - 1)))
    }

    /// The instance that holds the connection's socket.
    pub const fn instance(self) -> Instance {
        (self.0 >> Self::SEQ_BITS) as Instance
    }

    /// Its number within that instance.
    pub const fn seq(self) -> u64 {
        self.0 & ((1 << Self::SEQ_BITS) - 1)
    }
}

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.instance(), self.seq())
    }
}

impl fmt::Debug for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Where a room lives: its code and the instance whose task owns it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RoomAddr {
    /// The room's code, as players type it.
    pub code: Arc<str>,
    /// The instance that runs the room's task.
    pub instance: Instance,
}

impl fmt::Debug for RoomAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.code, self.instance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_id_keeps_its_instance_and_number_apart() {
        let id = ConnId::new(7, 123_456);
        assert_eq!((id.instance(), id.seq()), (7, 123_456));
        assert_ne!(ConnId::new(1, 5), ConnId::new(2, 5));
        assert_eq!(ConnId::new(Instance::MAX, u64::MAX).instance(), Instance::MAX);
        assert_eq!(ConnId::new(3, 9).to_string(), "3.9");
    }
}
