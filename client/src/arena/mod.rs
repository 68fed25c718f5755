//! `ttt arena`: one bot against another, measured as engine authors do —
//! game pairs from balanced openings in organised rooms on a live server,
//! counted as pentanomial statistics, with a sequential probability ratio test.

pub mod args;
mod match_args;
mod openings;
mod pair;
mod players;
mod progress;
mod results;
mod run;
mod server;
pub mod stats;
pub mod stats_cmd;

pub use match_args::MatchArgs;
pub use run::run;
