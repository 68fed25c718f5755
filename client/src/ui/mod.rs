//! Human play in a terminal: the board renderer, cell input, and the two
//! front ends (full-screen when on a terminal, plain lines otherwise).

pub mod board;
pub mod input;
pub mod lines;
pub mod palette;
pub mod screen;
