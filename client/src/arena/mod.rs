//! `ttt arena`: one bot against another, measured as engine authors do.

pub mod args;
pub mod stats;
pub mod stats_cmd;
