//! The view folded from server messages, and how it tells a game's end.

use super::*;
use std::sync::Arc;
use tictactoe_protocol::PlayerInfo;

fn started(you: Player, clock_ms: u64) -> View {
    let mut v = View::default();
    v.apply(&ServerMessage::GameStarted {
        tournament: None,
        moves: Vec::new(),
        opening: 0,
        clock: None,
        clocks: None,
        running: None,
        room: Arc::from("R"),
        size: 3,
        win: 3,
        you,
        mark: you,
        players: vec![PlayerInfo::guest("ann"), PlayerInfo::guest("bob")],
        turn: Player::X,
        resume_token: Arc::from("t"),
        turn_timeout_ms: clock_ms,
    });
    v
}

/// The room's `state` on an empty 3×3 board, X (us) to move with `clock_ms` left.
fn state(clock_ms: Option<u64>) -> ServerMessage {
    ServerMessage::State {
        berserk: [false; 2],
        tournament: None,
        host: None,
        opening: 0,
        reserved: None,
        clock: None,
        clocks: None,
        running: None,
        room: Arc::from("R"),
        size: 3,
        win: 3,
        board: vec!["...".into(); 3],
        moves: vec![],
        turn: Some(Player::X),
        players: vec![PlayerInfo::guest("ann"), PlayerInfo::guest("bob")],
        you: Some(Player::X),
        clock_ms,
        id: None,
    }
}

#[test]
fn our_own_connection_down_freezes_the_clock_and_says_so() {
    let mut v = started(Player::X, 30_000);
    let until = Instant::now() + Duration::from_secs(20);
    v.set_connection(Connection::Reconnecting { until, restart: false });
    assert_eq!(v.connection, Connection::Reconnecting { until, restart: false });
    assert!(v.note.contains("reconnecting"), "{}", v.note);
    let frozen = v.clock_ms().expect("a clock");
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(v.clock_ms(), Some(frozen), "the server pauses our clock while we are away");
    v.set_connection(Connection::Connected);
    assert!(v.note.contains("reconnected"), "{}", v.note);
    // Back, the room's `state` sets the clock from the server's count.
    v.apply(&state(Some(12_000)));
    assert!(v.clock_ms().is_some_and(|ms| ms <= 12_000 && ms > 11_000));
}

#[test]
fn a_seat_not_taken_back_ends_the_game_in_words() {
    let mut v = started(Player::O, 0);
    assert!(v.result_line().is_none());
    v.apply(&ServerMessage::error(ErrorCode::InvalidToken, "this resume token is not valid", None));
    assert!(v.over.is_some() && !v.my_turn());
    let said = v.result_line().expect("a result");
    assert!(said.starts_with("Game over while you were away"), "{said}");
    assert!(v.note.contains("n: new game"), "{}", v.note);
    // Between games, an invalid token changes nothing of a finished game.
    let mut idle = View::default();
    idle.seat_lost("gone");
    assert!(idle.result_line().is_none());
}

#[test]
fn the_clock_stops_while_the_opponent_is_away_and_goes_on_after() {
    let mut v = started(Player::X, 30_000);
    v.apply(&ServerMessage::OpponentDisconnected { grace_ms: 30_000 });
    let frozen = v.clock_ms().expect("a clock");
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(v.clock_ms(), Some(frozen), "paused: it does not count down");
    v.apply(&ServerMessage::OpponentReconnected {});
    std::thread::sleep(Duration::from_millis(30));
    assert!(v.clock_ms().is_some_and(|ms| ms < frozen), "running again");
    // A snapshot from the server sets it anew.
    v.apply(&state(Some(5_000)));
    assert!(v.clock_ms().is_some_and(|ms| ms <= 5_000 && ms > 4_000));
}

#[test]
fn an_open_challenge_is_kept_until_a_game_starts_or_it_ends() {
    let mut v = View::default();
    let offer = |id: &str| ServerMessage::Challenged {
        clock: None,
        challenge: Arc::from(id),
        from: PlayerInfo { name: "ann".into(), account: true, bot: false, rating: Some(1500) },
        size: 15,
        win: 5,
        expires_ms: 30_000,
    };
    v.apply(&offer("c1"));
    assert_eq!(v.note, "ann 1500 challenges you to 15×15, 5 in a row: a: accept, d: decline");
    v.apply(&ServerMessage::Queued { clock: None, size: 3, win: 3, id: None });
    assert_eq!(v.offer.as_ref().map(|o| o.id.as_str()), Some("c1"), "kept while queued");
    let ended = |id: &str| ServerMessage::ChallengeEnded {
        challenge: Arc::from(id),
        reason: tictactoe_protocol::ChallengeEndReason::Expired,
        message: "nobody answered".into(),
    };
    v.apply(&ended("other"));
    assert!(v.offer.is_some(), "another challenge's end");
    v.apply(&ended("c1"));
    assert!(v.offer.is_none());
    v.apply(&offer("c2"));
    v.apply(&crate::fixtures::game_started("t"));
    assert!(v.offer.is_none(), "a game started: the server ended it");
}

#[test]
fn results_are_told_in_words() {
    let cases = [
        (Player::X, Some(Player::X), EndReason::Line, "Result: You won"),
        (Player::O, Some(Player::X), EndReason::Line, "Result: You lost"),
        (Player::X, None, EndReason::Draw, "Result: Draw — the board is full"),
        (Player::X, Some(Player::X), EndReason::Resign, "Result: You won — your opponent resigned"),
        (Player::O, Some(Player::X), EndReason::Resign, "Result: You lost — you resigned"),
        (Player::X, Some(Player::O), EndReason::Timeout, "Result: You lost — you ran out of time"),
        (
            Player::O,
            Some(Player::O),
            EndReason::Disconnect,
            "Result: You won — your opponent did not come back",
        ),
        (
            Player::O,
            Some(Player::X),
            EndReason::Disconnect,
            "Result: You lost — your connection was gone too long",
        ),
        (Player::X, None, EndReason::Shutdown, "Result: No winner — the server shut down"),
    ];
    for (you, winner, reason, want) in cases {
        let mut v = started(you, 0);
        v.over = Some((winner, reason, None));
        assert_eq!(v.result_line().as_deref(), Some(want), "{you:?} {winner:?} {reason:?}");
    }
    let mut watching = started(Player::X, 0);
    watching.you = None;
    watching.over = Some((Some(Player::X), EndReason::Resign, None));
    assert_eq!(watching.result_line().as_deref(), Some("Result: X (ann) won — O resigned"));
}

/// `moved` of a 3×3 game in room R, reporting `clocks` and `running`.
fn moved(seq: usize, cell: (usize, usize), clocks: [u64; 2], running: Option<Player>) -> ServerMessage {
    let next = usize::from(Player::for_move(seq).number() - 1);
    crate::fixtures::moved(seq, cell, clocks, running, clocks[next])
}

#[test]
fn a_fischer_game_keeps_its_clock_through_moves_and_runs_on_while_a_player_is_away() {
    let fischer = Fischer { initial_ms: 180_000, increment_ms: 2_000 };
    let mut v = View::default();
    v.apply(&ServerMessage::GameStarted {
        tournament: None,
        moves: Vec::new(),
        opening: 0,
        clock: Some(fischer),
        clocks: Some([180_000, 180_000]),
        running: None,
        room: Arc::from("R"),
        size: 3,
        win: 3,
        you: Player::O,
        mark: Player::O,
        players: vec![PlayerInfo::guest("ann"), PlayerInfo::guest("bob")],
        turn: Player::X,
        resume_token: Arc::from("t"),
        // No time per move on a Fischer clock.
        turn_timeout_ms: 0,
    });
    assert_eq!(v.fischer, Some(fischer));
    let first = v.clock_ms().expect("X's first move has its own time");
    assert!(first > 29_000 && first <= Fischer::FIRST_MOVE_MS, "{first}");
    let clocks = v.clocks.expect("clocks from game_started");
    assert_eq!(
        (clocks.left, clocks.running),
        ([180_000, 180_000], None),
        "no clock runs before the first moves"
    );
    v.apply(&moved(1, (1, 1), [180_000, 180_000], None));
    v.apply(&moved(2, (0, 0), [180_000, 180_000], Some(Player::X)));
    v.apply(&moved(3, (2, 2), [179_000, 180_000], Some(Player::O)));
    let clocks = v.clocks.expect("clocks from moved");
    assert_eq!((clocks.left, clocks.running), ([179_000, 180_000], Some(Player::O)));
    assert_eq!(v.fischer, Some(fischer), "moved carries no clock: the game's stays");
    // Away players' clocks run on: nothing is paused.
    v.apply(&ServerMessage::OpponentDisconnected { grace_ms: 60_000 });
    v.set_connection(Connection::Reconnecting { until: Instant::now(), restart: false });
    assert!(v.paused.is_none() && v.clock_ms().is_some());
    assert_eq!(v.clocks.map(|c| c.running), Some(Some(Player::O)));
    v.apply(&ServerMessage::GameOver {
        room: Arc::from("R"),
        winner: Some(Player::X),
        reason: EndReason::Timeout,
        line: None,
        moves: vec![[1, 1], [0, 0], [2, 2]],
        game_id: None,
        ratings: None,
        clocks: Some([179_000, 0]),
        running: None,
    });
    let clocks = v.clocks.expect("the clocks as the game ended");
    assert_eq!((clocks.left, clocks.running), ([179_000, 0], None));
    // A new quick match from here asks for the same clock.
    assert_eq!(v.rules().clock, Some(fischer));
}

#[test]
fn without_a_fischer_clock_no_clocks_are_kept() {
    let mut v = started(Player::X, 30_000);
    v.apply(&moved(1, (1, 1), [5, 5], Some(Player::O)));
    assert_eq!((v.fischer, v.clocks), (None, None));
    assert_eq!(v.rules().clock, None);
}
