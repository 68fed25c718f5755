//! The ground floor: what every layer above shares and what imports nothing
//! above it. Ids that stay true across instances, a player's identity and
//! account secrets, presence, the bounded queue between tasks, room codes,
//! the checks of names and text, the shutdown signal and the counters.

pub mod account;
pub mod buckets;
pub mod codes;
pub mod ids;
pub mod presence;
pub mod queue;
pub mod signal;
pub mod stats;
pub mod text;

pub use ids::{ALONE, ConnId, Instance, RoomAddr};
