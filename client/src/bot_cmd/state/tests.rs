//! The bot's decisions, driven without a socket, a mover or a clock.

use std::sync::Arc;

use tictactoe_protocol::{ClosedReason, EndReason, HouseLevel, Player, PlayerInfo};

use super::*;
use crate::request::RequestedRules;

fn limits(turn_timeout_ms: u64) -> Limits {
    Limits {
        min_size: 3,
        max_size: 10,
        turn_timeout_ms,
        reconnect_grace_ms: 30_000,
        max_message_bytes: 4096,
        max_messages_per_second: 0,
        ping_interval_ms: 10_000,
        handshake_timeout_ms: 5_000,
    }
}

fn quick() -> Start {
    Start::Quick(RequestedRules { size: 3, win: None, clock: None })
}

fn started(you: Player) -> Event {
    Event::Msg(ServerMessage::GameStarted {
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
        players: vec![PlayerInfo::guest("a"), PlayerInfo::guest("b")],
        turn: Player::X,
        resume_token: Arc::from("t"),
        turn_timeout_ms: 0,
    })
}

fn over(winner: Option<Player>) -> Event {
    Event::Msg(ServerMessage::GameOver {
        clocks: None,
        running: None,
        room: Arc::from("R"),
        winner,
        reason: if winner.is_some() { EndReason::Line } else { EndReason::Draw },
        line: None,
        moves: vec![],
        game_id: None,
        ratings: None,
    })
}

fn closed() -> Event {
    Event::Msg(ServerMessage::RoomClosed { room: Arc::from("R"), reason: ClosedReason::Left })
}

fn challenged(size: usize) -> Event {
    Event::Msg(crate::fixtures::challenged(size))
}

#[test]
fn it_thinks_on_its_turn_and_plays_only_the_position_it_was_asked() {
    let t0 = Instant::now();
    let mut bot = Bot::new(&quick(), 1, Sizes::default(), &limits(0));
    assert!(matches!(bot.on_event(started(Player::X), &limits(0), t0).as_slice(), [Do::Think]));
    assert!(matches!(
        bot.on_chosen((1, 1), 0).as_slice(),
        [Do::Send(ClientMessage::Move { row: 1, col: 1 })]
    ));
    // A move chosen for another position is chosen again.
    assert!(matches!(bot.on_chosen((1, 1), 5).as_slice(), [Do::Think]));
    // Not its turn: nothing.
    let mut bot = Bot::new(&quick(), 1, Sizes::default(), &limits(0));
    assert!(bot.on_event(started(Player::O), &limits(0), t0).is_empty());
    assert!(bot.on_chosen((0, 0), 0).is_empty());
}

#[test]
fn it_counts_results_rematches_and_stops_after_its_games() {
    let t0 = Instant::now();
    let mut bot = Bot::new(&quick(), 2, Sizes::default(), &limits(0));
    let _ = bot.on_event(started(Player::X), &limits(0), t0);
    assert!(matches!(
        bot.on_event(over(Some(Player::X)), &limits(0), t0).as_slice(),
        [Do::Send(ClientMessage::Rematch {})]
    ));
    // No turn timer: a rematch may go unanswered for 30 s.
    assert_eq!(bot.rematch_deadline(), Some(t0 + Duration::from_secs(30)));
    let _ = bot.on_event(started(Player::O), &limits(0), t0);
    assert_eq!(bot.rematch_deadline(), None);
    let out = bot.on_event(over(Some(Player::X)), &limits(0), t0);
    let [Do::Quietly(ClientMessage::Leave {}), Do::Done(tally)] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(*tally, Tally { wins: 1, draws: 0, losses: 1 });
}

#[test]
fn an_unanswered_rematch_queues_again_or_ends_a_private_room() {
    let t0 = Instant::now();
    let mut bot = Bot::new(&quick(), 3, Sizes::default(), &limits(5_000));
    let _ = bot.on_event(started(Player::X), &limits(5_000), t0);
    let _ = bot.on_event(over(None), &limits(5_000), t0);
    // With a turn timer, the rematch waits as long as a turn.
    assert_eq!(bot.rematch_deadline(), Some(t0 + Duration::from_secs(5)));
    let out = bot.on_rematch_timeout();
    assert!(matches!(
        out.as_slice(),
        [Do::Quietly(ClientMessage::Leave {}), Do::Send(ClientMessage::QuickMatch { .. })]
    ));
    assert_eq!(bot.rematch_deadline(), None);

    let mut bot = Bot::new(&Start::Join("ABCD".into()), 3, Sizes::default(), &limits(0));
    let _ = bot.on_event(started(Player::X), &limits(0), t0);
    let _ = bot.on_event(over(None), &limits(0), t0);
    let out = bot.on_rematch_timeout();
    let [Do::Quietly(ClientMessage::Leave {}), Do::Fail(e)] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(
        e.to_string(),
        "the opponent did not answer the rematch after 1 games; wins: 0, draws: 1, losses: 0"
    );
}

#[test]
fn a_closed_room_finds_another_opponent_or_ends_a_private_room() {
    let t0 = Instant::now();
    let house = Start::House(RequestedRules { size: 3, win: None, clock: None }, HouseLevel::default());
    let mut bot = Bot::new(&house, 3, Sizes::default(), &limits(0));
    assert!(matches!(
        bot.on_event(closed(), &limits(0), t0).as_slice(),
        [Do::Send(ClientMessage::PlayHouse { .. })]
    ));
    let mut bot = Bot::new(
        &Start::Create(RequestedRules { size: 3, win: None, clock: None }, None),
        3,
        Sizes::default(),
        &limits(0),
    );
    let out = bot.on_event(closed(), &limits(0), t0);
    let [Do::Fail(e)] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(
        e.to_string(),
        "the opponent left the private room after 0 games; wins: 0, draws: 0, losses: 0"
    );
    let mut bot = Bot::new(&Start::Await, 3, Sizes::default(), &limits(0));
    assert!(bot.on_event(closed(), &limits(0), t0).is_empty());
}

#[test]
fn waiting_for_challenges_it_accepts_its_sizes_and_declines_the_rest() {
    let t0 = Instant::now();
    let mut bot = Bot::new(&Start::Await, 3, Sizes(vec![3]), &limits(0));
    let out = bot.on_event(challenged(3), &limits(0), t0);
    let [Do::Say(said), Do::Send(ClientMessage::Accept { challenge })] = out.as_slice() else {
        panic!("{out:?}")
    };
    assert_eq!(said, "ttt bot: ann challenges on 3×3 (3 in a row): accepted");
    assert_eq!(challenge, "c1");
    let out = bot.on_event(challenged(5), &limits(0), t0);
    let [Do::Send(ClientMessage::Decline { reason: Some(reason), .. })] = out.as_slice() else {
        panic!("{out:?}")
    };
    assert_eq!(reason, "this bot plays boards 3×3");
    // Mid-game it is busy.
    let _ = bot.on_event(started(Player::O), &limits(0), t0);
    let out = bot.on_event(challenged(3), &limits(0), t0);
    let [Do::Send(ClientMessage::Decline { reason: Some(reason), .. })] = out.as_slice() else {
        panic!("{out:?}")
    };
    assert_eq!(reason, "in a game; try again after it");
    // A rematch is the challenger's to ask, and agreed to.
    let _ = bot.on_event(over(None), &limits(0), t0);
    assert_eq!(bot.rematch_deadline(), None);
    let offered = Event::Msg(ServerMessage::RematchOffered {});
    assert!(matches!(
        bot.on_event(offered, &limits(0), t0).as_slice(),
        [Do::Send(ClientMessage::Rematch {})]
    ));
}

#[test]
fn a_rate_limited_request_goes_again() {
    let t0 = Instant::now();
    let mut bot = Bot::new(&quick(), 3, Sizes::default(), &limits(0));
    let _ = bot.on_event(started(Player::X), &limits(0), t0);
    let _ = bot.on_chosen((0, 0), 0);
    let limited = Event::Msg(ServerMessage::Error {
        code: ErrorCode::RateLimited,
        message: "slow down".into(),
        id: None,
        retry_after_ms: Some(100),
        game_id: None,
    });
    let out = bot.on_event(limited, &limits(0), t0);
    assert!(matches!(out.as_slice(), [Do::Send(ClientMessage::Move { row: 0, col: 0 })]));
}

#[test]
fn a_connection_gone_or_a_mover_giving_up_ends_the_run() {
    let t0 = Instant::now();
    let mut bot = Bot::new(&quick(), 3, Sizes::default(), &limits(0));
    let out = bot.on_event(Event::Down { restart: true }, &limits(0), t0);
    assert!(
        matches!(out.as_slice(), [Do::Say(s)] if s == "ttt bot: the server is restarting; reconnecting…")
    );
    assert!(bot.on_event(Event::Resumed, &limits(0), t0).is_empty());
    let out = bot.on_event(Event::Closed(crate::net::Gone::Dropped), &limits(0), t0);
    assert!(
        matches!(out.as_slice(), [Do::Fail(BotError::Session(SessionError::Closed(why)))] if *why == crate::net::Gone::Dropped)
    );
    let out = bot.on_gave_up(MoverError::Strategy("stuck".into()));
    let [Do::Quietly(ClientMessage::Resign {}), Do::Fail(e)] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(e.to_string(), "the strategy gave up: stuck");
}

#[test]
fn its_budget_follows_the_clocks_the_server_reports() {
    use crate::bot::budget::{Budget, DEFAULT_THINK};
    use tictactoe_protocol::Fischer;
    let ms = Duration::from_millis;
    let t0 = Instant::now();
    let mut bot = Bot::new(&quick(), 1, Sizes::default(), &limits(0));
    bot.on_event(started(Player::O), &limits(0), t0);
    assert_eq!(bot.budget(None, t0), Budget::fixed(DEFAULT_THINK), "the per-move timer");
    assert_eq!(bot.budget(Some(ms(300)), t0), Budget::fixed(ms(300)));

    // A 1+1 game, the bot O: during its first move (no clock runs) that
    // move's 30 s bound it; then its clock does, ticking from the report.
    let fischer = Fischer { initial_ms: 60_000, increment_ms: 1_000 };
    let Event::Msg(plain) = started(Player::O) else { unreachable!("game_started") };
    bot.on_event(Event::Msg(crate::fixtures::on_clock(plain, fischer)), &limits(0), t0);
    let moved = |seq, cell, clocks, running, clock_ms| {
        Event::Msg(crate::fixtures::moved(seq, cell, clocks, running, clock_ms))
    };
    let out = bot.on_event(moved(1, (1, 1), [60_000, 60_000], None, 30_000), &limits(0), t0);
    assert!(matches!(out[..], [Do::Think]));
    let first = bot.budget(None, t0);
    assert_eq!(first.think, ms(3_750), "60 s / 20 + 3/4 of 1 s");
    assert!(first.limit <= ms(29_500) && first.limit > ms(29_000), "the first move's own 30 s: {first:?}");
    // Later: O's clock runs with 40 s reported; 2 s after, 38 s are left.
    bot.on_event(moved(2, (0, 0), [60_000, 60_000], Some(Player::X), 60_000), &limits(0), t0);
    bot.on_event(moved(3, (2, 2), [59_000, 40_000], Some(Player::O), 40_000), &limits(0), t0);
    let b = bot.budget(None, Instant::now() + Duration::from_secs(2));
    assert!(b.think <= ms(2_650) && b.think > ms(2_500), "38 s / 20 + 750 ms: {b:?}");
    assert!(b.limit <= ms(37_500) && b.limit > ms(37_000), "{b:?}");
    assert_eq!(bot.budget(Some(ms(1_000)), Instant::now()).think, ms(1_000), "--think-ms caps it");
}

#[test]
fn started_for_a_room_it_plays_every_game_until_the_room_closes() {
    let t0 = Instant::now();
    // `--games 0`, as `ttt arena` starts it (TTT_JOIN).
    let mut bot = Bot::new(&Start::Join("ABCD".into()), 0, Sizes::default(), &limits(0));
    for (you, winner) in [(Player::X, Some(Player::X)), (Player::O, None)] {
        let _ = bot.on_event(started(you), &limits(0), t0);
        let out = bot.on_event(over(winner), &limits(0), t0);
        assert!(matches!(out.as_slice(), [Do::Send(ClientMessage::Rematch {})]), "{out:?}");
        // The room's closing ends the wait, not a deadline.
        assert_eq!(bot.rematch_deadline(), None);
    }
    let out = bot.on_event(closed(), &limits(0), t0);
    let [Do::Done(tally)] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(*tally, Tally { wins: 1, draws: 1, losses: 0 });
}

#[test]
fn an_organised_room_closing_after_its_games_ends_the_run_well() {
    let t0 = Instant::now();
    let mut bot = Bot::new(&Start::Join("ABCD".into()), 5, Sizes::default(), &limits(0));
    let _ = bot.on_event(started(Player::X), &limits(0), t0);
    let _ = bot.on_event(over(None), &limits(0), t0);
    let finished = ServerMessage::RoomClosed { room: Arc::from("R"), reason: ClosedReason::Finished };
    let out = bot.on_event(Event::Msg(finished), &limits(0), t0);
    assert!(matches!(out.as_slice(), [Do::Done(Tally { wins: 0, draws: 1, losses: 0 })]), "{out:?}");
}

/// `game_started` of a game of tournament T1, the bot playing `you`.
fn paired(you: Player) -> Event {
    let Event::Msg(ServerMessage::GameStarted { room, size, win, mark, players, turn, resume_token, .. }) =
        started(you)
    else {
        unreachable!()
    };
    Event::Msg(ServerMessage::GameStarted {
        tournament: Some("T1".into()),
        moves: Vec::new(),
        opening: 0,
        clock: None,
        clocks: None,
        running: None,
        room,
        size,
        win,
        you,
        mark,
        players,
        turn,
        resume_token,
        turn_timeout_ms: 0,
    })
}

fn standings(status: tictactoe_protocol::tournament::TournamentStatus, games: &[&str]) -> Event {
    use crate::fixtures::{standing, tournament};
    let rows = vec![standing(1, "bob", &[2, 2], false), standing(2, "ann-bot", &[0, 1], false)];
    Event::Msg(ServerMessage::TournamentUpdate { tournament: Box::new(tournament(status, rows, games)) })
}

fn over_with(winner: Option<Player>, id: &str) -> Event {
    let Event::Msg(ServerMessage::GameOver { room, reason, .. }) = over(winner) else { unreachable!() };
    Event::Msg(ServerMessage::GameOver {
        clocks: None,
        running: None,
        room,
        winner,
        reason,
        line: None,
        moves: vec![],
        game_id: Some(id.into()),
        ratings: None,
    })
}

#[test]
fn in_a_tournament_it_plays_each_pairing_goes_berserk_and_ends_with_its_rank() {
    use tictactoe_protocol::tournament::TournamentStatus::{Finished, Running};
    let (t0, l) = (Instant::now(), limits(0));
    let start = Start::Tournament("T1".into());
    let mut bot = Bot::new(&start, 1, Sizes::default(), &l).in_tournament("T1", "ann-bot", true);
    assert!(bot.on_event(standings(Running, &[]), &l, t0).is_empty());
    // Berserk first, then its move.
    let out = bot.on_event(paired(Player::X), &l, t0);
    assert!(matches!(out.as_slice(), [Do::Quietly(ClientMessage::Berserk {}), Do::Think]), "{out:?}");
    // No rematch after a game, and the room's closing is no end: the server pairs again.
    assert!(bot.on_event(over_with(Some(Player::O), "g1"), &l, t0).is_empty());
    let finished =
        Event::Msg(ServerMessage::RoomClosed { room: Arc::from("R"), reason: ClosedReason::Finished });
    assert!(bot.on_event(finished, &l, t0).is_empty());
    // A reconnect joins again.
    let out = bot.on_event(Event::Resumed, &l, t0);
    assert!(
        matches!(out.as_slice(), [Do::Send(ClientMessage::TournamentJoin { tournament })] if tournament == "T1")
    );
    let _ = bot.on_event(paired(Player::O), &l, t0);
    let _ = bot.on_event(over_with(None, "g2"), &l, t0);
    // Finished, but its last game not counted yet: it waits for the standings that count it.
    assert!(bot.on_event(standings(Finished, &["g1"]), &l, t0).is_empty());
    let out = bot.on_event(standings(Finished, &["g1", "g2"]), &l, t0);
    let [Do::Print(line), Do::Done(tally)] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(*tally, Tally { wins: 0, draws: 1, losses: 1 });
    assert_eq!(
        line,
        "tournament Evening arena: games: 2, wins: 0, draws: 1, losses: 1; final rank 2 of 2, score 1"
    );
}

#[test]
fn a_tournament_it_cannot_join_ends_the_run_in_the_servers_words() {
    let (t0, l) = (Instant::now(), limits(0));
    let start = Start::Tournament("T1".into());
    let mut bot = Bot::new(&start, 1, Sizes::default(), &l).in_tournament("T1", "guest", false);
    let refused = Event::Msg(ServerMessage::error(ErrorCode::AccountRequired, "sign in first", None));
    let out = bot.on_event(refused, &l, t0);
    let [Do::Fail(BotError::Session(SessionError::Refused(why)))] = out.as_slice() else { panic!("{out:?}") };
    assert!(why.starts_with("sign in first (tournaments need an account"), "{why}");
    // Its time up before it played: that is said too.
    let mut bot = Bot::new(&start, 1, Sizes::default(), &l).in_tournament("T1", "guest", false);
    let late = Event::Msg(ServerMessage::error(ErrorCode::TournamentFinished, "it is over", None));
    assert!(matches!(bot.on_event(late, &l, t0).as_slice(), [Do::Fail(_)]));
}
