//! Arena tournaments on this instance: the requests of its connections
//! (create, list, join, pause, watch), the standings pushed to those that
//! joined or watch, and the pairing of its free players. What a tournament
//! is lives in the store (terms, entrants, and its games' records), so any
//! instance can direct it after another dies; [`director`] decides, the
//! task (`task.rs`) carries out.

pub mod director;
mod task;

use std::sync::Arc;

use tictactoe_protocol::RequestId;
use tictactoe_protocol::tournament::Terms;

use crate::cmd::ConnHandle;
use crate::core::account::Identity;
use crate::core::presence::Presence;

pub use task::{Ctx, spawn};

/// A tournament request of a connection, its terms checked by the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TournamentAsk {
    /// `tournament_create`.
    Create {
        /// Its terms.
        terms: Terms,
        /// How long until it starts.
        starts_in_ms: u64,
    },
    /// `tournaments`.
    List,
    /// `tournament_join` of this id.
    Join(String),
    /// `tournament_leave` of this id.
    Leave(String),
    /// `tournament_watch` of this id.
    Watch(String),
}

/// What the tournament task's inbox receives.
#[derive(Debug)]
pub enum TournamentCmd {
    /// A connection's request.
    Ask {
        /// The connection, for the answer and the updates.
        conn: ConnHandle,
        /// Who asks: an account (the session checked).
        who: Arc<Identity>,
        /// Where it is, for its pairing.
        presence: Option<Arc<Presence>>,
        /// What it asks.
        ask: TournamentAsk,
        /// Echoed on the answer (a join's, leave's and watch's is the tournament's id anyway).
        id: Option<RequestId>,
    },
}
