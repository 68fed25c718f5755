use std::time::{Duration, Instant};

use tictactoe_protocol::tournament::TournamentStatus;
use tictactoe_protocol::{ClientMessage, EndReason, ErrorCode, ServerMessage};

use super::*;
use crate::fixtures::{standing, tournament};

fn update(status: TournamentStatus, games: &[&str]) -> ServerMessage {
    let view =
        tournament(status, vec![standing(1, "ann", &[2], false), standing(2, "bob", &[0], false)], games);
    ServerMessage::TournamentUpdate { tournament: Box::new(view) }
}

fn over(game_id: &str) -> ServerMessage {
    ServerMessage::GameOver {
        clocks: None,
        running: None,
        room: "R".into(),
        winner: None,
        reason: EndReason::Draw,
        line: None,
        moves: vec![],
        game_id: Some(game_id.into()),
        ratings: None,
    }
}

#[test]
fn it_is_over_once_finished_and_the_last_game_is_counted() {
    let t0 = Instant::now();
    let mut f = Following::new(" T1 ", "ann");
    assert_eq!(f.join(), ClientMessage::TournamentJoin { tournament: "T1".into() });
    assert!(f.on_msg(&update(TournamentStatus::Running, &[]), t0, 1_000_000));
    assert_eq!(f.standing(Marks::Plain).as_deref(), Some("rank 1 of 2, score 2"));
    assert_eq!(f.title(), "Evening arena");
    // Another tournament's standings are not this one's.
    let mut other = tournament(TournamentStatus::Finished, Vec::new(), &[]);
    other.summary.id = "T9".into();
    assert!(!f.on_msg(&ServerMessage::TournamentUpdate { tournament: Box::new(other) }, t0, 1_000_000));
    assert!(!f.finished());
    f.on_msg(&over("g1"), t0, 1_000_000);
    f.on_msg(&update(TournamentStatus::Finished, &[]), t0, 1_070_000);
    assert!(f.finished());
    assert!(!f.over(true, t0), "a game in progress is played out");
    assert!(!f.over(false, t0), "the last game is not counted yet");
    f.on_msg(&update(TournamentStatus::Finished, &["g1"]), t0, 1_070_000);
    assert!(f.over(false, t0));
}

#[test]
fn an_uncounted_last_game_is_waited_for_a_while_then_given_up_on() {
    let t0 = Instant::now();
    let mut f = Following::new("T1", "ann");
    f.on_msg(&over("g1"), t0, 0);
    f.on_msg(&update(TournamentStatus::Finished, &["g0"]), t0, 1_070_000);
    assert!(!f.over(false, t0));
    let give_up = f.next_poke().expect("a time to give up");
    assert_eq!(give_up, t0 + COUNT_WAIT);
    assert!(!f.over(false, give_up - Duration::from_millis(1)));
    assert!(f.over(false, give_up));
    assert_eq!(f.poked(give_up), None, "nothing to ask once finished");
}

#[test]
fn past_its_end_without_word_of_it_the_standings_are_asked_for() {
    let t0 = Instant::now();
    let mut f = Following::new("T1", "ann");
    assert_eq!(f.next_poke(), None);
    // 10 s left by this machine's clock.
    f.on_msg(&update(TournamentStatus::Running, &[]), t0, 1_050_000);
    let at = f.next_poke().expect("a poke");
    assert_eq!(at, t0 + Duration::from_secs(10) + POKE_EVERY);
    assert_eq!(f.poked(at), Some(ClientMessage::TournamentWatch { tournament: "T1".into() }));
    assert_eq!(f.next_poke(), Some(at + POKE_EVERY));
    // Joining a tournament whose time is up says so.
    f.on_msg(&ServerMessage::error(ErrorCode::TournamentFinished, "over", None), at, 0);
    assert!(f.finished() && f.over(false, at));
}

#[test]
fn refusals_end_the_session_in_the_servers_words_with_what_to_do() {
    let say = |code, played| refusal(&ServerMessage::error(code, "no\u{1b}[2J way", None), played);
    let account = say(ErrorCode::AccountRequired, false).expect("refused");
    assert!(account.starts_with("no[2J way (tournaments need an account: `"), "{account}");
    assert!(account.ends_with(" register NAME`, then play under that name)"), "{account}");
    assert!(
        say(ErrorCode::TournamentNotFound, true).expect("refused").contains(" tournament list` lists them")
    );
    assert_eq!(say(ErrorCode::TournamentFinished, false).as_deref(), Some("no[2J way"));
    assert_eq!(say(ErrorCode::TournamentFinished, true), None, "after playing, its end is no failure");
    assert_eq!(say(ErrorCode::CannotBerserk, false), None);
}

#[test]
fn a_berserk_halves_the_clock_and_drops_the_berserkers_increment() {
    use tictactoe_protocol::{Fischer, Player};
    let mut view = crate::view::View {
        you: Some(Player::O),
        fischer: Some(Fischer { initial_ms: 60_000, increment_ms: 2_000 }),
        ..Default::default()
    };
    let t0 = Instant::now();
    let msg =
        |player| ServerMessage::Berserked { room: "R".into(), player, clocks: [60_000, 30_000], id: None };
    berserked(&mut view, &msg(Player::X), t0);
    assert_eq!(view.fischer.map(|f| f.increment_ms), Some(2_000), "the opponent's berserk is theirs");
    assert_eq!(view.note, "X went berserk: half the clock, no increment");
    berserked(&mut view, &msg(Player::O), t0);
    assert_eq!(view.clocks.map(|c| c.left), Some([60_000, 30_000]));
    assert_eq!(view.fischer.map(|f| f.increment_ms), Some(0));
    assert_eq!(view.note, "you went berserk: half the clock, no increment");
}
