//! Messages the client's unit tests feed its state machines.

use std::sync::Arc;
use std::time::Duration;

use tictactoe_protocol::{Fischer, Limits, Player, PlayerInfo, ServerMessage};

/// A server's limits with a reconnect grace of `grace`.
pub fn limits(grace: Duration) -> Limits {
    Limits {
        min_size: 3,
        max_size: 10,
        turn_timeout_ms: 0,
        reconnect_grace_ms: grace.as_millis() as u64,
        max_message_bytes: 4096,
        max_messages_per_second: 0,
        ping_interval_ms: 10_000,
        handshake_timeout_ms: 5_000,
    }
}

/// `game_started` of a 3×3 game in room `R` between ann (X, you) and bob.
pub fn game_started(token: &str) -> ServerMessage {
    ServerMessage::GameStarted {
        tournament: None,
        moves: Vec::new(),
        opening: 0,
        clock: None,
        clocks: None,
        running: None,
        room: Arc::from("R"),
        size: 3,
        win: 3,
        you: Player::X,
        mark: Player::X,
        players: vec![PlayerInfo::guest("ann"), PlayerInfo::guest("bob")],
        turn: Player::X,
        resume_token: Arc::from(token),
        turn_timeout_ms: 0,
    }
}

/// `msg` (a `game_started`) on a Fischer clock: both sides at its initial
/// time, no clock running before the first moves, no time per move.
pub fn on_clock(mut msg: ServerMessage, fischer: Fischer) -> ServerMessage {
    if let ServerMessage::GameStarted { clock, clocks, running, turn_timeout_ms, .. } = &mut msg {
        *clock = Some(fischer);
        *clocks = Some([fischer.initial_ms; 2]);
        *running = None;
        *turn_timeout_ms = 0;
    }
    msg
}

/// `moved` of move `seq` (from 1) at `cell` in room `R`, on a Fischer
/// clock: `clocks` and `running` as reported, `clock_ms` the next player's.
pub fn moved(
    seq: usize,
    cell: (usize, usize),
    clocks: [u64; 2],
    running: Option<Player>,
    clock_ms: u64,
) -> ServerMessage {
    ServerMessage::Moved {
        room: Arc::from("R"),
        row: cell.0,
        col: cell.1,
        player: Player::for_move(seq - 1),
        seq,
        next: Some(Player::for_move(seq)),
        clock_ms: Some(clock_ms),
        clocks: Some(clocks),
        running,
        id: None,
    }
}

/// `challenged`: ann (a guest) challenges you to a `size`×`size` game, as
/// challenge `c1`.
pub fn challenged(size: usize) -> ServerMessage {
    ServerMessage::Challenged {
        clock: None,
        challenge: Arc::from("c1"),
        from: PlayerInfo::guest("ann"),
        size,
        win: size,
        expires_ms: 30_000,
    }
}

/// The server's record of a 3×3 game ann (X) lost to bob on time, after
/// X a1, O b2, X c1, O b1.
pub fn lost_on_time() -> tictactoe_protocol::api::GameRecord {
    let player = |name: &str| tictactoe_protocol::api::GamePlayer {
        account: false,
        bot: false,
        name: name.into(),
        rating: None,
    };
    tictactoe_protocol::api::GameRecord {
        berserk: [false; 2],
        tournament: None,
        host: None,
        opening: 0,
        clock: None,
        clocks: None,
        ended_at: "2026-11-27T20:00:00.000Z".into(),
        id: "g1".into(),
        line: None,
        moves: vec![[0, 0], [1, 1], [0, 2], [1, 0]],
        players: [player("ann"), player("bob")],
        rated: false,
        ratings: None,
        reason: tictactoe_protocol::EndReason::Timeout,
        room: "R".into(),
        size: 3,
        started_at: "2026-11-27T19:59:00.000Z".into(),
        win: 3,
        winner: 2,
    }
}

/// `invalid_token` for the seat of game `g1`, which has ended.
pub fn ended_while_away() -> ServerMessage {
    ServerMessage::Error {
        code: tictactoe_protocol::ErrorCode::InvalidToken,
        message: "this resume token is not valid".into(),
        id: None,
        retry_after_ms: None,
        game_id: Some(Arc::from("g1")),
    }
}

/// A row of the standings: `name` at `rank` with these games' points.
pub fn standing(
    rank: usize,
    name: &str,
    results: &[u32],
    streak: bool,
) -> tictactoe_protocol::tournament::Standing {
    tictactoe_protocol::tournament::Standing {
        rank,
        name: name.into(),
        score: results.iter().sum(),
        games: results.len() as u32,
        streak,
        results: results.to_vec(),
        performance: (!results.is_empty()).then_some(1500 + 100 * rank as i64),
        paused: false,
    }
}

/// Tournament `T1`, "Evening arena" on 3×3 at 0.5+0, running from Unix ms
/// 1,000,000 for a minute, in `status`, with `standings` and finished `games`.
pub fn tournament(
    status: tictactoe_protocol::tournament::TournamentStatus,
    standings: Vec<tictactoe_protocol::tournament::Standing>,
    games: &[&str],
) -> tictactoe_protocol::tournament::TournamentView {
    use tictactoe_protocol::tournament::{TournamentSummary, TournamentView};
    TournamentView {
        summary: TournamentSummary {
            id: "T1".into(),
            name: "Evening arena".into(),
            created_by: "ann".into(),
            size: 3,
            win: 3,
            clock: tictactoe_protocol::Fischer { initial_ms: 30_000, increment_ms: 0 },
            duration_ms: 60_000,
            starts_at: 1_000_000,
            ends_at: 1_060_000,
            status,
            players: standings.len(),
        },
        standings,
        games: games.iter().map(|g| (*g).into()).collect(),
    }
}
