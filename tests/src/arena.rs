//! Arena tournaments played from outside the server: [`bot`] is a player
//! as an independent client would be (its own account, every pairing
//! played with a `tictactoe_bots` strategy, a log of what it saw), and
//! [`check`] what a tournament is held to afterwards — its standings
//! recomputed from its games' records, its games the ones the bots saw end,
//! each once, and how long players waited to be paired.

pub mod bot;
pub mod check;
