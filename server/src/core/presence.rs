//! Where a named connection is, as the lobby lists it (`who`) and as
//! challenges need it: one atomic per connection, written by the connection
//! as it moves between lobby and rooms and read by the lobby, so that a
//! status change costs no message and no lock.
//!
//! The lobby writes it once: when a challenge the connection sent is
//! accepted, it claims the connection for the game (`Idle` → `Drafted`)
//! with a compare-and-swap, and the connection claims itself for a request
//! of its own (`Idle` → `Pending`) the same way, so exactly one of them wins.

use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};

use tictactoe_protocol::OnlineStatus;

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// Free: nowhere, watching, or in a room whose game is over.
    Idle = 0,
    /// A request that puts it in a game is with the lobby.
    Pending = 1,
    /// In the matchmaking queue, or in a private room waiting for an opponent.
    Queued = 2,
    /// In a game.
    Playing = 3,
    /// A challenge it sent was accepted: its game is being opened.
    Drafted = 4,
}

impl Status {
    fn from_u8(v: u8) -> Status {
        match v {
            1 => Status::Pending,
            2 => Status::Queued,
            3 => Status::Playing,
            4 => Status::Drafted,
            _ => Status::Idle,
        }
    }

    /// As `online` shows it.
    pub fn shown(self) -> OnlineStatus {
        match self {
            Status::Idle => OnlineStatus::Idle,
            Status::Pending | Status::Queued => OnlineStatus::Queued,
            Status::Playing | Status::Drafted => OnlineStatus::Playing,
        }
    }
}

/// One connection's status and how many open challenges involve it.
#[derive(Debug, Default)]
pub struct Presence {
    status: AtomicU8,
    challenges: AtomicU32,
}

impl Presence {
    /// The status now.
    pub fn status(&self) -> Status {
        Status::from_u8(self.status.load(Ordering::SeqCst))
    }

    /// Moves from `from` to `to`; on failure, the status it found.
    pub fn swap(&self, from: Status, to: Status) -> Result<(), Status> {
        self.status
            .compare_exchange(from as u8, to as u8, Ordering::SeqCst, Ordering::SeqCst)
            .map(|_| ())
            .map_err(Status::from_u8)
    }

    /// Open challenges sent or received.
    pub fn challenges(&self) -> u32 {
        self.challenges.load(Ordering::SeqCst)
    }

    /// One more open challenge (the lobby's count).
    pub fn add_challenge(&self) {
        self.challenges.fetch_add(1, Ordering::SeqCst);
    }

    /// One open challenge fewer.
    pub fn end_challenge(&self) {
        let _ = self.challenges.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }
}

/// Where a listed connection is, as the lobby reads it, and the one claim
/// the lobby makes on it. The lobby's state machine holds connections'
/// whereabouts only through this: here a connection publishes them in
/// [`Presence`]'s atomic words; a connection on another instance would
/// publish them through the bus.
pub trait Whereabouts: Send + Sync + std::fmt::Debug {
    /// The status now.
    fn status(&self) -> Status;
    /// Claims an idle connection for the game a challenge it sent starts
    /// (`Idle` → `Drafted`); the status it found if it was not idle.
    fn draft(&self) -> Result<(), Status>;
    /// Frees a connection drafted for a game that could not be opened
    /// (`Drafted` → `Idle`); nothing if it moved on meanwhile.
    fn undraft(&self);
    /// One more open challenge involves it.
    fn add_challenge(&self);
    /// One open challenge fewer.
    fn end_challenge(&self);
}

impl Whereabouts for Presence {
    fn status(&self) -> Status {
        Presence::status(self)
    }

    fn draft(&self) -> Result<(), Status> {
        self.swap(Status::Idle, Status::Drafted)
    }

    fn undraft(&self) {
        let _ = self.swap(Status::Drafted, Status::Idle);
    }

    fn add_challenge(&self) {
        Presence::add_challenge(self)
    }

    fn end_challenge(&self) {
        Presence::end_challenge(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_of_the_lobby_and_the_connection_claims_an_idle_connection() {
        let p = Presence::default();
        assert_eq!(p.swap(Status::Idle, Status::Drafted), Ok(()));
        assert_eq!(p.swap(Status::Idle, Status::Pending), Err(Status::Drafted));
        assert_eq!(p.status().shown(), OnlineStatus::Playing);
        p.add_challenge();
        p.end_challenge();
        p.end_challenge();
        assert_eq!(p.challenges(), 0, "never below zero");
    }
}
