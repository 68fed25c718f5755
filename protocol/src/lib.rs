//! The shared vocabulary of tictactoe: the counter engine, the judge and the
//! wire protocol's message types, and the HTTP API's answers. No I/O, no runtime.

pub mod api;
mod bitlines;
pub mod classic;
pub mod clock;
pub mod game;
pub mod judge;
pub mod line;
pub mod message;
pub mod open_lines;
pub mod oracle;
pub mod player;
pub mod rules;
mod runs;
pub mod schema;
pub mod tournament;

pub use classic::TicTacToe;
pub use clock::Fischer;
pub use game::{Game, Line, LineKind, MoveError, Outcome, Player, SizeError, Status};
pub use judge::{JudgeError, Verdict, judge};
pub use message::{
    ChallengeEndReason, ClientFrame, ClientMessage, ClosedReason, DecodeError, EndReason, ErrorCode,
    HouseLevel, Limits, MAX_ONLINE, MAX_REASON_CHARS, OnlinePlayer, OnlineStatus, PROTOCOL_VERSION,
    PlayerInfo, RatingChange, RequestId, SERVER_TYPES, ServerMessage, peek_id,
};
pub use open_lines::OpenLines;
pub use rules::Rules;
