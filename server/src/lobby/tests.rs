//! The lobby's rules without tasks: pairing order, sizes, leaving the queue,
//! room codes, and routing joins, spectators and resume tokens.

use crate::session::account::Identity;

use super::*;
use crate::net::queue::Recv;
use crate::room::{Output, Rules};
use std::time::Duration;

/// How long challenges live in these tests.
pub(super) const LIFETIME: Duration = Duration::from_secs(30);

pub(super) fn settings() -> Settings {
    Settings { turn_timeout: None, grace: Duration::from_secs(5), records: None }
}

/// A connection's handle and the far end of its queue.
pub(super) fn conn(id: u64) -> (ConnHandle, queue::Receiver<Outbound>) {
    let (tx, rx) = queue::channel(16);
    (ConnHandle::new(id, tx), rx)
}

/// What a connection was sent: messages decoded, signals named.
pub(super) fn got(rx: &mut queue::Receiver<Outbound>) -> Vec<String> {
    let mut all = Vec::new();
    while let Some(Recv::Item(item)) = rx.try_recv() {
        all.push(match item {
            Outbound::Frame(f) => {
                let msg: serde_json::Value = serde_json::from_str(&f).unwrap();
                match msg["code"].as_str() {
                    Some(code) => format!("error:{code}"),
                    None => msg["type"].as_str().unwrap().to_owned(),
                }
            }
            Outbound::Entered { room, .. } => format!("entered:{room}"),
            Outbound::Drafted { room, .. } => format!("drafted:{room}"),
            Outbound::Refused => "refused".into(),
            Outbound::Released { .. } => "released".into(),
            other => format!("{other:?}"),
        });
    }
    all
}

fn quick(lobby: &mut Lobby, c: &ConnHandle, size: usize) -> Option<NewRoom> {
    quick_k(lobby, c, Rules::classic(size))
}

fn quick_k(lobby: &mut Lobby, c: &ConnHandle, rules: Rules) -> Option<NewRoom> {
    let cmd = LobbyCmd::QuickMatch {
        conn: c.clone(),
        name: Identity::guest(&format!("p{}", c.id)),
        rules,
        house: None,
        id: None,
    };
    lobby.handle(cmd, Instant::now())
}

fn members(new: &NewRoom) -> Vec<u64> {
    let mut ids: Vec<u64> = new.members.iter().map(|m| m.id).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn quick_match_pairs_first_come_first_served_within_a_size() {
    let mut lobby = Lobby::new(settings(), LIFETIME);
    let (a, mut ra) = conn(1);
    let (b, _rb) = conn(2);
    let (c, _rc) = conn(3);
    let (d, _rd) = conn(4);
    let (e, _re) = conn(5);
    assert!(quick(&mut lobby, &a, 3).is_none());
    assert!(quick(&mut lobby, &d, 4).is_none(), "another size waits apart");
    let first = quick(&mut lobby, &b, 3).expect("a and b are paired");
    assert_eq!(members(&first), [1, 2]);
    assert_eq!(got(&mut ra), ["queued".to_owned(), format!("entered:{}", first.room.code())]);
    assert!(quick(&mut lobby, &c, 3).is_none());
    assert_eq!((lobby.waiting(Rules::classic(3)), lobby.waiting(Rules::classic(4))), (1, 1));
    let second = quick(&mut lobby, &e, 3).expect("c, waiting longest, is paired with e");
    assert_eq!(members(&second), [3, 5]);
    assert_ne!(first.room.code(), second.room.code());
    assert_eq!(lobby.rooms(), 2);
}

#[test]
fn a_paired_room_starts_its_game_with_a_random_first_player() {
    let mut lobby = Lobby::new(settings(), LIFETIME);
    let mut firsts = std::collections::HashSet::new();
    for i in 0..64 {
        let (a, _ra) = conn(2 * i);
        let (b, _rb) = conn(2 * i + 1);
        quick(&mut lobby, &a, 3);
        let mut new = quick(&mut lobby, &b, 3).expect("paired");
        let (outputs, _) = new.room.drain();
        for output in outputs {
            if let Output::Send {
                to,
                msg: ServerMessage::GameStarted { you: tictactoe_protocol::Player::X, .. },
            } = output
            {
                firsts.insert(to % 2);
            }
        }
    }
    assert_eq!(firsts.len(), 2, "sometimes the one who waited moves first, sometimes not");
}

#[test]
fn quick_match_pairs_only_the_same_win_length() {
    let mut lobby = Lobby::new(settings(), LIFETIME);
    let (a, _ra) = conn(1);
    let (b, _rb) = conn(2);
    let (c, _rc) = conn(3);
    assert!(quick_k(&mut lobby, &a, Rules { size: 15, win: 5 }).is_none());
    assert!(quick_k(&mut lobby, &b, Rules { size: 15, win: 15 }).is_none(), "same size, other rule");
    let new = quick_k(&mut lobby, &c, Rules { size: 15, win: 5 }).expect("the same rules pair");
    assert_eq!(members(&new), [1, 3]);
    assert_eq!(lobby.waiting(Rules { size: 15, win: 15 }), 1);
}

#[test]
fn leaving_the_queue_and_gone_connections_are_not_paired() {
    let mut lobby = Lobby::new(settings(), LIFETIME);
    let (a, _ra) = conn(1);
    let (b, rb) = conn(2);
    let (c, _rc) = conn(3);
    quick(&mut lobby, &a, 3);
    lobby.handle(LobbyCmd::Cancel { conn: 1, rules: Rules::classic(3) }, Instant::now());
    assert_eq!(lobby.waiting(Rules::classic(3)), 0);
    quick(&mut lobby, &b, 3);
    drop(rb);
    assert!(quick(&mut lobby, &c, 3).is_none(), "b's connection is gone");
    assert_eq!(lobby.waiting(Rules::classic(3)), 1);
}

#[test]
fn a_private_room_is_found_by_its_code_as_typed() {
    let mut lobby = Lobby::new(settings(), LIFETIME);
    let (a, mut ra) = conn(1);
    let (b, mut rb) = conn(2);
    let cmd = LobbyCmd::CreateRoom {
        conn: a.clone(),
        name: Identity::guest("a"),
        rules: Rules::classic(3),
        mark: None,
        id: None,
    };
    let mut new = lobby.handle(cmd, Instant::now()).expect("a room");
    let code = new.room.code().clone();
    assert_eq!(got(&mut ra), [format!("entered:{code}")]);
    let typed = format!("  {}  ", code.to_lowercase());
    lobby.handle(
        LobbyCmd::JoinRoom { conn: b.clone(), name: Identity::guest("b"), room: typed, id: None },
        Instant::now(),
    );
    assert_eq!(got(&mut rb), [format!("entered:{code}")]);
    assert!(matches!(new.inbox.try_recv(), Some(Recv::Item(RoomCmd::Join { conn, .. })) if conn.id == 2));
    // Once the room's task reports it closed, the code is gone.
    lobby.handle(LobbyCmd::RoomClosed { room: code.clone() }, Instant::now());
    let cmd = LobbyCmd::Spectate { conn: b.clone(), room: code.to_string(), id: Some(RequestId::Int(7)) };
    lobby.handle(cmd, Instant::now());
    assert_eq!(got(&mut rb), ["error:room_not_found", "refused"]);
    assert_eq!(lobby.rooms(), 0);
}

#[test]
fn a_resume_token_is_routed_to_the_room_it_names() {
    let mut lobby = Lobby::new(settings(), LIFETIME);
    let (a, _ra) = conn(1);
    let (b, _rb) = conn(2);
    let (c, mut rc) = conn(3);
    quick(&mut lobby, &a, 3);
    let mut new = quick(&mut lobby, &b, 3).expect("paired");
    let code = new.room.code().clone();
    let token = format!("{code}0123456789abcdef0123456789abcdef");
    lobby.handle(LobbyCmd::Resume { conn: c.clone(), token: token.clone(), id: None }, Instant::now());
    assert_eq!(got(&mut rc), [format!("entered:{code}")]);
    assert!(matches!(new.inbox.try_recv(), Some(Recv::Item(RoomCmd::Resume { token: t, .. })) if t == token));
    for bad in ["", "short", "NOSUCHROOM0123456789abcdef0123456789abcdef"] {
        lobby.handle(LobbyCmd::Resume { conn: c.clone(), token: bad.into(), id: None }, Instant::now());
        assert_eq!(got(&mut rc), ["error:invalid_token", "refused"], "{bad:?}");
    }
}

#[test]
fn a_room_that_stopped_reading_refuses_at_once() {
    let mut lobby = Lobby::new(settings(), LIFETIME);
    let (a, _ra) = conn(1);
    let (b, mut rb) = conn(2);
    let cmd = LobbyCmd::CreateRoom {
        conn: a,
        name: Identity::guest("a"),
        rules: Rules::classic(3),
        mark: None,
        id: None,
    };
    let new = lobby.handle(cmd, Instant::now()).expect("a room");
    let code = new.room.code().to_string();
    drop(new);
    lobby.handle(
        LobbyCmd::JoinRoom { conn: b, name: Identity::guest("b"), room: code.clone(), id: None },
        Instant::now(),
    );
    assert_eq!(got(&mut rb), [format!("entered:{code}"), "error:room_not_found".into(), "released".into()]);
}
