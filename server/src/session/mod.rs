//! One connection's logic: who it is, where it is between lobby and rooms,
//! and what it asks for.

pub mod account;
pub(crate) mod io;
pub mod membership;
pub mod registrations;
mod request;
pub mod shared;

pub(crate) use shared::Shared;
