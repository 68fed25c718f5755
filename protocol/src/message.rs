//! The wire protocol v1: one JSON object per text frame, tagged by `"type"`.
//!
//! [`ClientMessage`] is what clients send, [`ServerMessage`] what the server
//! sends; [`ErrorCode`] names every refusal. Unknown fields are ignored.

use crate::clock::Fischer;
use crate::game::{Line, Player, mark, winner};
use crate::player::opt_mark;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest string a request `id` may be, in characters.
pub const MAX_ID_CHARS: usize = 64;

/// A request's `id`, echoed on the server's direct reply: an integer or a
/// string of at most [`MAX_ID_CHARS`] characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Int(i64),
    /// A string id.
    Str(String),
}

/// A client's message with its optional request `id`. Decoded by
/// [`ClientFrame::decode`] alone (not serde), so that `type` is only ever a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClientFrame {
    /// Echoed on the direct reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The request itself.
    #[serde(flatten)]
    pub message: ClientMessage,
}

/// Why a client frame could not be decoded: the `bad_message` text, and the
/// request `id` if one could still be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// `bad_message`, or `invalid_clock` for a `clock` that is no clock.
    pub code: ErrorCode,
    /// What was wrong, for the `error.message` field.
    pub message: String,
    /// The frame's `id`, when it was a valid id.
    pub id: Option<RequestId>,
}

/// Client → server requests (since v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Set the display name; optionally state the protocol version spoken.
    Hello {
        /// 1–24 printable characters.
        name: String,
        /// The protocol version the client speaks; must be 1 when present.
        #[serde(default)]
        protocol: Option<i64>,
        /// An account's token (from `registered`): this connection is that
        /// account, whose name `name` must be (ignoring case).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// Create an account with this name (unique ignoring case); the reply
    /// `registered` carries its token, shown only once.
    Register {
        /// 1–24 printable characters.
        name: String,
        /// A bot account, marked as one everywhere, for good; default false.
        #[serde(default)]
        bot: bool,
    },
    /// Join the matchmaking queue for boards of `size` (default 3) won by
    /// `win` in a row (default `size`).
    QuickMatch {
        /// Board size; 3 when absent or null.
        #[serde(default)]
        size: Option<i64>,
        /// Marks in a row that win, `min(3, size)..=size`; `size` when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        win: Option<i64>,
        /// Play the house if nobody is paired within this many ms (0 or
        /// more); absent or null: wait for a player however long it takes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        house_after_ms: Option<i64>,
        /// With `house_after_ms`: how strong the house plays (`perfect` when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        level: Option<HouseLevel>,
        /// A Fischer clock for the game; absent or null: the per-move timer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<Fischer>,
    },
    /// Open a private room of `size` (default 3), won by `win` in a row.
    CreateRoom {
        /// Board size; 3 when absent or null.
        #[serde(default)]
        size: Option<i64>,
        /// Marks in a row that win, `min(3, size)..=size`; `size` when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        win: Option<i64>,
        /// The creator's mark in the room's first game (`"X"` moves first);
        /// random when absent or null. Rematches swap it as always.
        #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "opt_mark::serialize")]
        #[schemars(schema_with = "opt_mark::schema")]
        mark: Option<Player>,
        /// A Fischer clock for the game; absent or null: the per-move timer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<Fischer>,
        /// The creator organises and does not play: it watches every game.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        host: bool,
        /// With `host`: the seats reserved for these two names, X then O.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        players: Option<[String; 2]>,
        /// Moves `[row, col]` played at the start of every game, X first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opening: Option<Vec<[i64; 2]>>,
        /// With `host`: the room closes after this many games (1 or more).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        games: Option<i64>,
    },
    /// Take the empty seat of a private room.
    JoinRoom {
        /// The room code.
        room: String,
    },
    /// Watch a room.
    Spectate {
        /// The room code.
        room: String,
    },
    /// Place your mark. Negative or too large coordinates are `out_of_bounds`.
    Move {
        /// 0-based row.
        row: i64,
        /// 0-based column.
        col: i64,
    },
    /// Concede the current game.
    Resign {},
    /// Ask for a new game in the same room, seats swapped.
    Rematch {},
    /// Leave the queue, room or game (in a game in progress: resign).
    Leave {},
    /// Reconnect to a seat after a dropped connection.
    Resume {
        /// The seat's `resume_token` from `game_started`.
        token: String,
    },
    /// Ask for the `state` of the room you are seated in or watching.
    Sync {},
    /// Application-level keep-alive.
    Ping {},
    /// Invite an online player by name to a game of `size` (default 3) won
    /// by `win` in a row (default `size`).
    Challenge {
        /// The player's name, matched ignoring case.
        name: String,
        /// Board size; 3 when absent or null.
        #[serde(default)]
        size: Option<i64>,
        /// Marks in a row that win; `size` when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        win: Option<i64>,
        /// A Fischer clock for the game; absent or null: the per-move timer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<Fischer>,
    },
    /// Accept a challenge you received: the game starts at once.
    Accept {
        /// The challenge's id, from `challenged`.
        challenge: String,
    },
    /// Decline a challenge you received.
    Decline {
        /// The challenge's id, from `challenged`.
        challenge: String,
        /// Why, for the challenger (at most [`MAX_REASON_CHARS`] characters).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Ask who is online.
    Who {},
    /// Play the server's own bot at once.
    PlayHouse {
        /// Board size; 3 when absent or null.
        #[serde(default)]
        size: Option<i64>,
        /// Marks in a row that win; `size` when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        win: Option<i64>,
        /// How strong the house plays; `perfect` when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        level: Option<HouseLevel>,
        /// A Fischer clock for the game; absent or null: the per-move timer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<Fischer>,
    },
    /// Create an arena tournament (a signed-in account): the reply is `tournament`.
    TournamentCreate {
        /// 1–40 printable characters.
        name: String,
        /// Board size; 3 when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<i64>,
        /// Marks in a row that win; `size` when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        win: Option<i64>,
        /// Every game's Fischer clock (required).
        clock: Option<Fischer>,
        /// How long it runs: 60,000..=43,200,000 ms.
        duration_ms: Option<i64>,
        /// How long until it starts: 0..=86,400,000 ms; 0 when absent or null.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        starts_in_ms: Option<i64>,
    },
    /// List the tournaments starting, running and recently finished.
    Tournaments {},
    /// Join (or come back to) a tournament: paired while it runs. Its id
    /// is the frame's `id` (or `tournament`), so the reply's `id` is the
    /// tournament's too.
    TournamentJoin {
        /// The tournament's id (or the frame's `id`, which is then the same).
        #[serde(default)]
        tournament: String,
    },
    /// Pause in a tournament: the score stays; not paired until joining again.
    TournamentLeave {
        /// The tournament's id (or the frame's `id`, which is then the same).
        #[serde(default)]
        tournament: String,
    },
    /// Follow a tournament's standings (`tournament_update`) without playing.
    TournamentWatch {
        /// The tournament's id (or the frame's `id`, which is then the same).
        #[serde(default)]
        tournament: String,
    },
    /// In a tournament game, before your first move: halve your clock and
    /// drop your increment, for a point more with a win.
    Berserk {},
}

/// The longest `decline.reason`, in characters.
pub const MAX_REASON_CHARS: usize = 100;

/// How strong the house bot plays.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HouseLevel {
    /// Any empty cell.
    Random,
    /// Win now, else block, else the most promising cell.
    Heuristic,
    /// Exact search where it finishes in time (never loses on 3×3), the
    /// heuristic beyond.
    #[default]
    Perfect,
}

impl HouseLevel {
    /// Every level, weakest first.
    pub const ALL: [HouseLevel; 3] = [HouseLevel::Random, HouseLevel::Heuristic, HouseLevel::Perfect];

    /// The level's name on the wire (and the strategy's in `tictactoe-bots`).
    pub fn name(self) -> &'static str {
        match self {
            HouseLevel::Random => "random",
            HouseLevel::Heuristic => "heuristic",
            HouseLevel::Perfect => "perfect",
        }
    }

    /// The level called `name`.
    pub fn from_name(name: &str) -> Option<HouseLevel> {
        HouseLevel::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// Where an online player is, in `online`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnlineStatus {
    /// Free: may be challenged.
    Idle,
    /// Waiting for an opponent (matchmaking queue, or a private room).
    Queued,
    /// In a game.
    Playing,
}

/// One player in `online`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OnlinePlayer {
    /// Display name.
    pub name: Arc<str>,
    /// Whether the player is signed in to an account.
    pub account: bool,
    /// Whether the player is a bot account (or the house bot).
    pub bot: bool,
    /// Where the player is.
    pub status: OnlineStatus,
}

/// Why a challenge ended without a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeEndReason {
    /// The challenged player declined it.
    Declined,
    /// Nobody answered it in time.
    Expired,
    /// One side disconnected or started another game.
    Canceled,
}

/// The `limits` object of `welcome`: the server's configuration a bot needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    /// Smallest board size accepted.
    pub min_size: usize,
    /// Largest board size accepted.
    pub max_size: usize,
    /// Time a player has per move, 0 = no limit.
    pub turn_timeout_ms: u64,
    /// How long a dropped player keeps the seat.
    pub reconnect_grace_ms: u64,
    /// Largest inbound frame; bigger closes the connection with 1009.
    pub max_message_bytes: usize,
    /// Inbound frames per second (and burst); 0 = no limit.
    pub max_messages_per_second: u32,
    /// How often the server pings an idle connection; one silent for two
    /// intervals is dropped.
    pub ping_interval_ms: u64,
    /// Time from TCP connect to a finished WebSocket handshake.
    pub handshake_timeout_ms: u64,
}

/// A player as others see them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlayerInfo {
    /// Display name.
    pub name: Arc<str>,
    /// Whether the player is signed in to an account.
    pub account: bool,
    /// Whether the player is a bot account (or the house bot).
    pub bot: bool,
    /// The account's rating in this board's pool, rounded; null for a guest.
    pub rating: Option<i64>,
}

impl PlayerInfo {
    /// A guest: no account, no rating.
    pub fn guest(name: impl Into<Arc<str>>) -> PlayerInfo {
        PlayerInfo { name: name.into(), account: false, bot: false, rating: None }
    }
}

/// One player's rating before and after a rated game, rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RatingChange {
    /// The rating the game started from.
    pub before: i64,
    /// The rating the game ended with.
    pub after: i64,
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A player completed a line.
    Line,
    /// The board filled up without a line.
    Draw,
    /// A player resigned (or left the game).
    Resign,
    /// The player to move ran out of time.
    Timeout,
    /// A player's connection dropped and they did not come back in time.
    Disconnect,
    /// The server shut down.
    Shutdown,
    /// The game ended (time, a disconnect, a player leaving) before each
    /// side had made a move: no winner, never rated.
    Aborted,
}

impl EndReason {
    /// Every reason, in declaration order (`reason as usize` indexes it).
    pub const ALL: [EndReason; 7] = [
        EndReason::Line,
        EndReason::Draw,
        EndReason::Resign,
        EndReason::Timeout,
        EndReason::Disconnect,
        EndReason::Shutdown,
        EndReason::Aborted,
    ];
}

/// Why a room closed under the players and spectators still in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClosedReason {
    /// A player left (`leave`, or a request that leaves implicitly).
    Left,
    /// A player's connection dropped with no game in progress, or they did
    /// not come back within the grace period.
    Disconnect,
    /// The organiser's `games` were played (since the organised rooms addition).
    Finished,
}

/// Every refusal the server can send, as its snake_case `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, not an object, missing or mistyped field, unknown type, binary frame.
    BadMessage,
    /// `hello.protocol` is not a version this server speaks.
    UnsupportedProtocol,
    /// `hello.name` is empty, too long or has non-printable characters.
    InvalidName,
    /// The board size is outside the server's range.
    InvalidSize,
    /// The win length is outside `min(3, size)..=size`.
    InvalidWin,
    /// Already queued, in a room or in a game.
    Busy,
    /// The request needs a game (or a seat) and the connection has none.
    NotInGame,
    /// It is the opponent's turn.
    NotYourTurn,
    /// The cell is off the board.
    OutOfBounds,
    /// The cell is taken.
    CellOccupied,
    /// The game is already over.
    GameOver,
    /// No room has that code.
    RoomNotFound,
    /// The room's seats are both taken.
    RoomFull,
    /// The resume token is wrong or expired.
    InvalidToken,
    /// Too many frames; slow down.
    RateLimited,
    /// An account owns that name (`register`, or `hello` without its token).
    NameTaken,
    /// `hello` with a token that is not that name's account's.
    AuthFailed,
    /// Nobody online has that name (`challenge`).
    PlayerNotFound,
    /// No open challenge to you has that id (`accept`, `decline`).
    ChallengeNotFound,
    /// The server cannot keep what the request needs (its store cannot
    /// write, since v1 with faults): nothing changed; try again after
    /// `retry_after_ms`. Games in progress go on meanwhile.
    Unavailable,
    /// `clock` is not `{initial_ms, increment_ms}` within the ranges (since
    /// the time controls addition): the message names the field.
    InvalidClock,
    /// `opening` has a move off the board, on a taken cell or completing a
    /// line, or fills the board (since the organised rooms addition): the
    /// message names the move's index.
    InvalidOpening,
    /// `tournament_create` with bad terms (since the tournaments addition):
    /// the message names the field.
    InvalidTournament,
    /// No tournament has that id.
    TournamentNotFound,
    /// The tournament's time is up: it takes no more players.
    TournamentFinished,
    /// The request needs a signed-in account (`hello` with its token).
    AccountRequired,
    /// `berserk` outside a tournament game, after your first move, or twice.
    CannotBerserk,
}

/// Server → client messages (since v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// First message on every connection.
    Welcome {
        /// Protocol version, 1.
        protocol: u32,
        /// Server name and version, e.g. `"ttt-server/0.1.0"`.
        server: String,
        /// The server's limits.
        limits: Limits,
    },
    /// Waiting in the matchmaking queue.
    Queued {
        /// Board size queued for.
        size: usize,
        /// Win length queued for.
        win: usize,
        /// The game's Fischer clock; null for the per-move timer.
        #[serde(default)]
        clock: Option<Fischer>,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// A private room is open; share its code.
    RoomCreated {
        /// The room code.
        room: Arc<str>,
        /// Board size.
        size: usize,
        /// Marks in a row that win.
        win: usize,
        /// The game's Fischer clock; null for the per-move timer.
        #[serde(default)]
        clock: Option<Fischer>,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// Both seats are filled; a game begins.
    GameStarted {
        /// The room code.
        room: Arc<str>,
        /// Board size.
        size: usize,
        /// Marks in a row that win.
        win: usize,
        /// Your seat: 1 or 2.
        you: Player,
        /// Your mark: `"X"` for player 1, `"O"` for player 2.
        #[serde(with = "mark")]
        #[schemars(schema_with = "mark::schema")]
        mark: Player,
        /// Both players; index 0 is player 1.
        players: Vec<PlayerInfo>,
        /// Who is to move: 1, or after an opening whoever's turn it leaves.
        turn: Player,
        /// The token that `resume` takes to reclaim this seat.
        resume_token: Arc<str>,
        /// Time per move, 0 = no limit.
        turn_timeout_ms: u64,
        /// The game's Fischer clock; null for the per-move timer.
        #[serde(default)]
        clock: Option<Fischer>,
        /// Each side's time left as this was sent, `[player 1, player 2]`;
        /// null without a Fischer clock.
        #[serde(default)]
        clocks: Option<[u64; 2]>,
        /// Whose clock runs now (1 or 2); null when none does.
        #[serde(default)]
        running: Option<Player>,
        /// How many opening moves the room played before the first move (0 for none).
        #[serde(default)]
        opening: usize,
        /// The opening's moves, already on the board (`[]` without one).
        #[serde(default)]
        moves: Vec<[u16; 2]>,
        /// The tournament the game is part of, by id; null for none.
        #[serde(default)]
        tournament: Option<Arc<str>>,
    },
    /// A move was accepted.
    Moved {
        /// The room code.
        room: Arc<str>,
        /// 0-based row.
        row: usize,
        /// 0-based column.
        col: usize,
        /// Who moved: 1 or 2.
        player: Player,
        /// 1-based move number.
        seq: usize,
        /// Who moves next; null when the game is over.
        next: Option<Player>,
        /// Time the next player has; null when over or untimed.
        clock_ms: Option<u64>,
        /// Each side's time left as this was sent, `[player 1, player 2]`;
        /// null without a Fischer clock.
        #[serde(default)]
        clocks: Option<[u64; 2]>,
        /// Whose clock runs now (1 or 2); null when none does.
        #[serde(default)]
        running: Option<Player>,
        /// The request's id, to the mover only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// The game ended.
    GameOver {
        /// The room code.
        room: Arc<str>,
        /// 0 for none, else 1 or 2.
        #[serde(with = "winner")]
        #[schemars(schema_with = "winner::schema")]
        winner: Option<Player>,
        /// Why it ended.
        reason: EndReason,
        /// The winning line, or null.
        line: Option<Line>,
        /// The game's moves in play order, as `judge` reads them.
        moves: Vec<[u16; 2]>,
        /// The game's record id (`/api/games/{game_id}`); null when the
        /// server keeps no records.
        game_id: Option<Arc<str>>,
        /// For a rated game, each player's rating before and after, indexed
        /// like `players`; null for an unrated one.
        ratings: Option<[RatingChange; 2]>,
        /// Each side's time left as this was sent, `[player 1, player 2]`;
        /// null without a Fischer clock.
        #[serde(default)]
        clocks: Option<[u64; 2]>,
        /// Whose clock runs now (1 or 2); null when none does.
        #[serde(default)]
        running: Option<Player>,
    },
    /// A snapshot of a room, after `spectate` or `resume`.
    State {
        /// The room code.
        room: Arc<str>,
        /// Board size.
        size: usize,
        /// Marks in a row that win.
        win: usize,
        /// `size` strings of `X`, `O` and `.`.
        board: Vec<String>,
        /// The moves so far.
        moves: Vec<[u16; 2]>,
        /// Who is to move, or null.
        turn: Option<Player>,
        /// Both players (empty names are not possible; a waiting seat is absent).
        players: Vec<PlayerInfo>,
        /// Your seat, or null for a spectator.
        you: Option<Player>,
        /// Time the player to move has, or null.
        clock_ms: Option<u64>,
        /// The game's Fischer clock; null for the per-move timer.
        #[serde(default)]
        clock: Option<Fischer>,
        /// Each side's time left as this was sent, `[player 1, player 2]`;
        /// null without a Fischer clock.
        #[serde(default)]
        clocks: Option<[u64; 2]>,
        /// Whose clock runs now (1 or 2); null when none does.
        #[serde(default)]
        running: Option<Player>,
        /// How many of `moves` are the room's opening (0 for none).
        #[serde(default)]
        opening: usize,
        /// The organiser's name, for an organised room; else null.
        #[serde(default)]
        host: Option<Arc<str>>,
        /// The names the seats are reserved for (X, O), or null.
        #[serde(default)]
        reserved: Option<Box<[Arc<str>; 2]>>,
        /// The tournament the game is part of, by id; null for none.
        #[serde(default)]
        tournament: Option<Arc<str>>,
        /// Which sides went berserk, `[player 1, player 2]`.
        #[serde(default)]
        berserk: [bool; 2],
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// Your opponent's connection dropped; they may resume.
    OpponentDisconnected {
        /// How long they have to come back.
        grace_ms: u64,
    },
    /// Your opponent came back.
    OpponentReconnected {},
    /// Your opponent asked for a rematch.
    RematchOffered {},
    /// The room closed (since the room-closing addition): no `rematch` now.
    RoomClosed {
        /// The room code.
        room: Arc<str>,
        /// Why it closed.
        reason: ClosedReason,
    },
    /// An account was created: its token, shown this once (keep it).
    Registered {
        /// The account's name, as registered.
        name: Arc<str>,
        /// The secret that `hello` presents to sign in as this account.
        token: String,
        /// Whether it is a bot account.
        bot: bool,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// `hello` with a token signed this connection in to its account.
    Authenticated {
        /// The account's name, as registered.
        name: Arc<str>,
        /// Whether it is a bot account.
        bot: bool,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// A challenge is on its way to the player it names.
    ChallengeSent {
        /// The challenge's id, named again by `challenge_ended`.
        challenge: Arc<str>,
        /// The challenged player's name, as they go by.
        name: Arc<str>,
        /// Board size.
        size: usize,
        /// Marks in a row that win.
        win: usize,
        /// The game's Fischer clock; null for the per-move timer.
        #[serde(default)]
        clock: Option<Fischer>,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// Someone challenges you: `accept` or `decline` it by its id.
    Challenged {
        /// The challenge's id.
        challenge: Arc<str>,
        /// Who challenges you (a rating is this board's).
        from: PlayerInfo,
        /// Board size.
        size: usize,
        /// Marks in a row that win.
        win: usize,
        /// How long it stays open unanswered.
        expires_ms: u64,
        /// The game's Fischer clock; null for the per-move timer.
        #[serde(default)]
        clock: Option<Fischer>,
    },
    /// A challenge ended without a game.
    ChallengeEnded {
        /// The challenge's id.
        challenge: Arc<str>,
        /// Why it ended.
        reason: ChallengeEndReason,
        /// What happened, for people (a decline's reason is in it).
        message: String,
    },
    /// Who is online (reply to `who`).
    Online {
        /// Players who said `hello`, by name (at most [`MAX_ONLINE`]).
        players: Vec<OnlinePlayer>,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// Reply to `ping`.
    Pong {
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// A tournament was created (reply to `tournament_create`): its `id`
    /// and terms. The request's own `id` is not echoed here: `id` is the
    /// tournament's.
    Tournament {
        /// The tournament.
        #[serde(flatten)]
        tournament: Box<crate::tournament::TournamentSummary>,
    },
    /// The tournaments starting, running and recently finished (reply to `tournaments`).
    Tournaments {
        /// Newest first.
        tournaments: Vec<crate::tournament::TournamentSummary>,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// A tournament's standings: the reply to `tournament_join`,
    /// `tournament_leave` and `tournament_watch` (whose `id` is the
    /// tournament's), and again whenever they change, to every connection
    /// that joined or watches it.
    TournamentUpdate {
        /// The tournament, its standings and games, as `/api/tournaments/{id}`.
        #[serde(flatten)]
        tournament: Box<crate::tournament::TournamentView>,
    },
    /// A player went berserk: their clock is halved and their increment gone.
    Berserked {
        /// The room code.
        room: Arc<str>,
        /// Who: 1 or 2.
        player: Player,
        /// Each side's time left now, `[player 1, player 2]`.
        clocks: [u64; 2],
        /// The request's id, to the berserker only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
    },
    /// A request was refused; nothing changed.
    Error {
        /// What kind of refusal.
        code: ErrorCode,
        /// What went wrong and what to do.
        message: String,
        /// The request's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        /// On `rate_limited`: milliseconds until a frame is accepted again;
        /// on `unavailable`: when it is worth asking again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
        /// On `invalid_token` for a game that ended: its id, so that a
        /// player who lost while away can look up how it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game_id: Option<Arc<str>>,
    },
}

/// The most players one `online` lists.
pub const MAX_ONLINE: usize = 200;

/// Every `type` the server sends, for clients that skip the ones they do not know.
pub const SERVER_TYPES: [&str; 23] = [
    "welcome",
    "queued",
    "room_created",
    "game_started",
    "moved",
    "game_over",
    "state",
    "opponent_disconnected",
    "opponent_reconnected",
    "rematch_offered",
    "room_closed",
    "registered",
    "authenticated",
    "challenge_sent",
    "challenged",
    "challenge_ended",
    "online",
    "pong",
    "error",
    "tournament",
    "tournaments",
    "tournament_update",
    "berserked",
];

impl ServerMessage {
    /// An `error` reply.
    pub fn error(code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) -> Self {
        ServerMessage::Error { code, message: message.into(), id, retry_after_ms: None, game_id: None }
    }

    /// Decodes a server frame as a client does: `Ok(None)` for a `type` this
    /// crate does not know (newer servers may send more; clients skip them).
    pub fn decode(text: &str) -> Result<Option<ServerMessage>, String> {
        match serde_json::from_str::<ServerMessage>(text) {
            Ok(msg) => Ok(Some(msg)),
            Err(e) => {
                /// Only the tag.
                #[derive(Deserialize)]
                struct Tag {
                    r#type: String,
                }
                match serde_json::from_str::<Tag>(text) {
                    Ok(tag) if !SERVER_TYPES.contains(&tag.r#type.as_str()) => Ok(None),
                    _ => Err(e.to_string()),
                }
            }
        }
    }

    /// The JSON text of this message.
    pub fn to_json(&self) -> String {
        // Serializing these types cannot fail: every map key is a string.
        serde_json::to_string(self).unwrap_or_default()
    }
}

mod decode;
pub use decode::peek_id;

#[cfg(test)]
mod tests;
