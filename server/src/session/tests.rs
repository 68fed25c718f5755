//! The session without a socket: frames in, actions out.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use tictactoe_protocol::{ErrorCode, ServerMessage};

use super::*;
use crate::core::queue;
use crate::store::{Account, StoreError};
use tictactoe_protocol::Rules;

const UP: World = World { can_write: true, store_enabled: true };

fn session(rate: u32) -> Session {
    let limits = Arc::new(Limits { sizes: 3..=15, rate });
    Session::new(ConnId::new(0, 1), IpAddr::V4(Ipv4Addr::LOCALHOST), limits, Instant::now())
}

fn text(s: &mut Session, frame: &str) -> Vec<Action> {
    s.on_frame(Frame::Text(frame), Instant::now(), || UP).into_vec()
}

/// The error code of a lone `error` reply.
fn refused(actions: &[Action]) -> Option<ErrorCode> {
    match actions {
        [Action::Reply(ServerMessage::Error { code, .. })] => Some(*code),
        // The frame rate limit's refusal: sent the same, uncounted.
        [Action::Throttled(ServerMessage::Error { code: code @ ErrorCode::RateLimited, .. })] => Some(*code),
        _ => None,
    }
}

fn link() -> (RoomLink, queue::Receiver<RoomCmd>) {
    let (tx, rx) = queue::channel(4);
    (RoomLink::local(tx), rx)
}

fn account(name: &str, token: &str) -> (Account, crate::core::account::TokenHash) {
    let mut standing = crate::ratings::Standing::default();
    standing.rating.rating = 1612.0;
    let acc =
        Account { id: 7, name: name.into(), bot: false, standings: vec![(Rules::classic(3), standing)] };
    (acc, crate::core::account::hash(token))
}

#[test]
fn a_move_outside_a_game_is_refused_and_one_inside_goes_to_the_room() {
    let mut s = session(0);
    assert_eq!(refused(&text(&mut s, r#"{"type":"move","row":0,"col":0}"#)), Some(ErrorCode::NotInGame));
    let actions = text(&mut s, r#"{"type":"quick_match","size":3}"#);
    assert!(
        matches!(&actions[..], [Action::Lobby(Ask::QuickMatch { rules, .. })] if *rules == Rules::classic(3))
    );
    let again = text(&mut s, r#"{"type":"quick_match","size":3}"#);
    assert_eq!(refused(&again), Some(ErrorCode::Busy), "already waiting");
    let (room, _inbox) = link();
    assert!(s.on_signal(Outbound::Entered { room: "R1".into(), link: room }).is_empty());
    let actions = text(&mut s, r#"{"type":"move","row":1,"col":2,"id":5}"#);
    assert!(
        matches!(
            &actions[..],
            [Action::InRoom(RoomCmd::Request {
                request: RoomRequest::Move { row: 1, col: 2, lag_ms: 0 },
                ..
            })]
        ),
        "{actions:?}"
    );
    assert!(s.room().is_some());
    // The room turns out closed: the move is refused, and the session is free.
    let closed = s.room_closed(None).into_vec();
    assert_eq!(refused(&closed), Some(ErrorCode::NotInGame));
    assert!(s.room().is_none());
}

#[test]
fn what_needs_the_store_is_refused_while_it_cannot_write() {
    let mut s = session(0);
    let down = World { can_write: false, store_enabled: true };
    for frame in [
        r#"{"type":"quick_match","size":3}"#,
        r#"{"type":"register","name":"ann"}"#,
        r#"{"type":"hello","name":"ann","token":"t"}"#,
    ] {
        let actions = s.on_frame(Frame::Text(frame), Instant::now(), || down).into_vec();
        assert_eq!(refused(&actions), Some(ErrorCode::Unavailable), "{frame}");
    }
    // A guest's hello needs no writing.
    let actions =
        s.on_frame(Frame::Text(r#"{"type":"hello","name":"ann"}"#), Instant::now(), || down).into_vec();
    assert!(matches!(&actions[..], [Action::CheckGuest { name, .. }] if name == "ann"));
}

#[test]
fn hello_as_a_guest_is_listed_unless_an_account_owns_the_name() {
    let mut s = session(0);
    let actions = text(&mut s, r#"{"type":"hello","name":" ann "}"#);
    assert!(matches!(&actions[..], [Action::CheckGuest { name, .. }] if name == "ann"));
    let taken = s.guest_checked("ann", Ok(Some(account("Ann", "x"))), None).into_vec();
    assert_eq!(refused(&taken), Some(ErrorCode::NameTaken));
    let broken = s.guest_checked("ann", Err(StoreError::Unavailable), None).into_vec();
    assert_eq!(refused(&broken), Some(ErrorCode::Unavailable));
    let listed = s.guest_checked("ann", Ok(None), None).into_vec();
    assert!(matches!(&listed[..], [Action::Online { who, .. }] if &*who.name == "ann"));
    assert_eq!(s.account(), None);
    // Without a database there is nothing to ask.
    let mut alone = session(0);
    let none = World { can_write: true, store_enabled: false };
    let actions = alone.on_frame(Frame::Text(r#"{"type":"hello","name":"bo"}"#), Instant::now(), || none);
    assert!(matches!(&actions[..], [Action::Online { .. }]));
}

#[test]
fn signing_in_takes_the_right_token_for_the_accounts_own_name() {
    let mut s = session(0);
    let actions = text(&mut s, r#"{"type":"hello","name":"ann","token":"ttt_good"}"#);
    assert!(
        matches!(&actions[..], [Action::SignIn { name, token, .. }] if name == "ann" && token == "ttt_good")
    );
    let wrong = s.signed_in("ann", "ttt_bad", Ok(Some(account("Ann", "ttt_good"))), None, UP);
    assert_eq!((refused(&wrong), s.account()), (Some(ErrorCode::AuthFailed), None));
    let alike = s.signed_in("Ånn", "ttt_good", Ok(Some(account("Ann", "ttt_good"))), None, UP);
    assert_eq!(refused(&alike), Some(ErrorCode::AuthFailed), "a look-alike name is not the account's");
    let ok = s.signed_in("ann", "ttt_good", Ok(Some(account("Ann", "ttt_good"))), None, UP);
    assert!(matches!(&ok[..], [Action::Reply(ServerMessage::Authenticated { .. }), Action::Online { .. }]));
    assert_eq!(s.account(), Some(7));
    // Its ratings are the store's, then what its rated games made them.
    let rules = Rules::classic(3);
    let Some(Action::Online { who, .. }) = ok.last() else { panic!("listed") };
    assert_eq!((who.rating(rules), who.rating(Rules::classic(4))), (Some(1612), Some(1500)));
    // Another account's rating (it signed in as another since) changes nothing.
    assert!(s.on_signal(Outbound::Rated { account: 8, rules, shown: 1700 }).is_empty());
    let told = s.on_signal(Outbound::Rated { account: 7, rules, shown: 1630 }).into_vec();
    assert!(matches!(&told[..], [Action::LobbyIfRoom(Ask::Rated { shown: 1630, .. })]), "{told:?}");
    let queued = text(&mut s, r#"{"type":"quick_match","size":3}"#);
    let Some(Action::Lobby(Ask::QuickMatch { who: name, .. })) = queued.last() else { panic!("queued") };
    assert_eq!(name.rating(rules), Some(1630));
}

#[test]
fn register_checks_the_name_and_that_accounts_are_kept() {
    let mut s = session(0);
    assert_eq!(refused(&text(&mut s, r#"{"type":"register","name":"House"}"#)), Some(ErrorCode::NameTaken));
    assert_eq!(refused(&text(&mut s, r#"{"type":"register","name":""}"#)), Some(ErrorCode::InvalidName));
    let actions = text(&mut s, r#"{"type":"register","name":"ann","bot":true}"#);
    assert!(matches!(&actions[..], [Action::Register { name, bot: true, .. }] if name == "ann"));
    let none = World { can_write: true, store_enabled: false };
    let actions = s.on_frame(Frame::Text(r#"{"type":"register","name":"ann"}"#), Instant::now(), || none);
    assert_eq!(refused(&actions), Some(ErrorCode::AuthFailed));
}

#[test]
fn a_flood_is_refused_then_closed_and_binary_frames_are_refused() {
    let mut s = session(10);
    let t = Instant::now();
    let ping = r#"{"type":"ping"}"#;
    for _ in 0..10 {
        assert!(matches!(
            &s.on_frame(Frame::Text(ping), t, || UP)[..],
            [Action::Reply(ServerMessage::Pong { .. })]
        ));
    }
    assert_eq!(refused(&s.on_frame(Frame::Text(ping), t, || UP)), Some(ErrorCode::RateLimited));
    assert!(s.on_frame(Frame::Control, t, || UP).is_empty(), "a refused ping gets no error");
    let closed = (0..20).find_map(|_| match &s.on_frame(Frame::Text(ping), t, || UP)[..] {
        [Action::End(End::Close(code, _))] => Some(*code),
        _ => None,
    });
    assert_eq!(closed, Some(1008));
    let mut fresh = session(10);
    let later = t + Duration::from_secs(5);
    assert_eq!(refused(&fresh.on_frame(Frame::Binary, later, || UP)), Some(ErrorCode::BadMessage));
    assert_eq!(refused(&fresh.on_frame(Frame::Text("{nope"), later, || UP)), Some(ErrorCode::BadMessage));
}

#[test]
fn the_end_tells_the_queue_or_the_room_and_the_directory() {
    let mut queued = session(0);
    text(&mut queued, r#"{"type":"quick_match","size":3}"#);
    let actions = queued.close().into_vec();
    assert!(matches!(&actions[..], [Action::Lobby(Ask::Cancel { .. })]), "{actions:?}");

    let mut seated = session(0);
    seated.guest_checked("ann", Ok(None), None);
    text(&mut seated, r#"{"type":"create_room","size":3}"#);
    let (room, _inbox) = link();
    seated.on_signal(Outbound::Entered { room: "R1".into(), link: room });
    let actions = seated.close().into_vec();
    assert!(
        matches!(
            &actions[..],
            [Action::RoomLastWord(_, RoomCmd::Disconnected { .. }), Action::Lobby(Ask::Offline)]
        ),
        "{actions:?}"
    );
}

#[test]
fn a_replaced_seat_closes_with_4000_and_leaving_a_room_is_its_last_word() {
    let mut s = session(0);
    text(&mut s, r#"{"type":"resume","token":"R1xyz"}"#);
    let (room, _inbox) = link();
    s.on_signal(Outbound::Entered { room: "R1".into(), link: room });
    let leave = text(&mut s, r#"{"type":"leave"}"#);
    assert!(matches!(
        &leave[..],
        [Action::RoomLastWord(_, RoomCmd::Request { request: RoomRequest::Leave, .. })]
    ));
    let (room, _inbox) = link();
    text(&mut s, r#"{"type":"resume","token":"R2xyz"}"#);
    s.on_signal(Outbound::Entered { room: "R2".into(), link: room });
    let replaced = s.on_signal(Outbound::Replaced { room: "R2".into() }).into_vec();
    assert!(matches!(&replaced[..], [Action::End(End::Close(4000, _))]));
}
