//! The lobby's directory and challenges without tasks: who is listed with
//! what status, finding players by name, challenge limits, accepting,
//! declining, expiry and cancelling.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use super::tests::{Conn, Harness, LIFETIME, Mailbox, NewRoom, conn, got, harness, messages, wire_name};
use super::*;
use crate::core::presence::{Presence, Status};
use crate::room::Output;
use tictactoe_protocol::{ChallengeEndReason, OnlinePlayer, OnlineStatus};

/// A listed connection: its handle, queue and presence.
struct Player {
    conn: Conn,
    rx: Mailbox,
    presence: Arc<Presence>,
}

fn online(lobby: &mut Harness, id: u64, who: Arc<Identity>) -> Player {
    let (conn, rx) = conn(id);
    let presence = Arc::new(Presence::default());
    let cmd = LobbyCmd::Online { conn: conn.clone(), who, presence: presence.clone() };
    lobby.handle(cmd, Instant::now());
    Player { conn, rx, presence }
}

fn guest(lobby: &mut Harness, id: u64, name: &str) -> Player {
    online(lobby, id, Identity::guest(name))
}

/// The messages a player was sent.
fn frames(p: &mut Player) -> Vec<ServerMessage> {
    messages(&mut p.rx)
}

/// The error code of a message, if it is an `error`.
fn code(m: &ServerMessage) -> Option<ErrorCode> {
    match m {
        ServerMessage::Error { code, .. } => Some(*code),
        _ => None,
    }
}

/// Why a `challenge_ended` ended, and its text.
fn ended(m: &ServerMessage) -> (ChallengeEndReason, &str) {
    match m {
        ServerMessage::ChallengeEnded { reason, message, .. } => (*reason, message),
        other => panic!("not challenge_ended: {other:?}"),
    }
}

fn challenge(lobby: &mut Harness, from: &Player, name: &str, now: Instant) {
    challenge_from(lobby, from, LOOPBACK, name, now);
}

/// The address most of these tests' connections come from.
const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn challenge_from(lobby: &mut Harness, from: &Player, ip: IpAddr, name: &str, now: Instant) {
    assert!(lobby.handle(challenge_cmd(&from.conn, ip, name), now).is_none());
}

/// `from`'s challenge to `name` on a classic board.
fn challenge_cmd(from: &Conn, ip: IpAddr, name: &str) -> LobbyCmd<Conn> {
    let ask = Ask::Challenge {
        who: Identity::guest("x"),
        ip,
        name: name.into(),
        rules: Rules::classic(3),
        id: None,
    };
    LobbyCmd::Ask { conn: from.clone(), ask }
}

/// The id of the challenge a player was just offered.
fn offered(p: &mut Player) -> String {
    match &frames(p)[..] {
        [ServerMessage::Challenged { challenge, .. }] => challenge.to_string(),
        other => panic!("not one challenged: {other:?}"),
    }
}

fn accept(lobby: &mut Harness, p: &Player, challenge: &str) -> Option<NewRoom> {
    let cmd = LobbyCmd::Ask {
        conn: p.conn.clone(),
        ask: Ask::Accept { who: Identity::guest("x"), challenge: challenge.into(), id: None },
    };
    lobby.handle(cmd, Instant::now())
}

#[test]
fn who_lists_the_house_then_players_by_name_with_their_status() {
    let mut lobby = harness();
    let mut zed = guest(&mut lobby, 1, "zed");
    let ann = guest(&mut lobby, 2, "Ann");
    ann.presence.swap(Status::Idle, Status::Playing).unwrap();
    lobby.handle(LobbyCmd::Ask { conn: zed.conn.clone(), ask: Ask::Who { id: None } }, Instant::now());
    let listed = |m: &ServerMessage| match m {
        ServerMessage::Online { players, .. } => players.clone(),
        other => panic!("not online: {other:?}"),
    };
    let names: Vec<_> =
        listed(&frames(&mut zed)[0]).into_iter().map(|p| (p.name.to_string(), p.status)).collect();
    use tictactoe_protocol::OnlineStatus::{Idle, Playing};
    let want = [("house", Idle), ("Ann", Playing), ("zed", Idle)];
    assert_eq!(names, want.map(|(n, s)| (n.to_owned(), s)));
    // Renamed, then gone.
    lobby.handle(
        LobbyCmd::Online {
            conn: ann.conn.clone(),
            who: Identity::guest("bea"),
            presence: ann.presence.clone(),
        },
        Instant::now(),
    );
    lobby.handle(LobbyCmd::Ask { conn: conn(1).0, ask: Ask::Offline }, Instant::now());
    lobby.handle(LobbyCmd::Ask { conn: zed.conn.clone(), ask: Ask::Who { id: None } }, Instant::now());
    let names: Vec<_> = listed(&frames(&mut zed)[0]).into_iter().map(|p| p.name.to_string()).collect();
    assert_eq!(names, ["house", "bea"]);
}

#[test]
fn a_name_reaches_its_account_before_any_guest_and_ignores_case() {
    let mut lobby = harness();
    let mut ann = guest(&mut lobby, 1, "ann");
    let acct =
        Arc::new(Identity { name: "Bob".into(), account: Some(7), bot: true, ratings: Box::default() });
    let mut bob = online(&mut lobby, 2, acct);
    let mut guest_bob = guest(&mut lobby, 3, "BOB");
    challenge(&mut lobby, &ann, "bOb", Instant::now());
    assert!(matches!(&frames(&mut ann)[0], ServerMessage::ChallengeSent { name, .. } if &**name == "Bob"));
    offered(&mut bob);
    assert!(frames(&mut guest_bob).is_empty(), "the guest under the account's name is not reached");
    challenge(&mut lobby, &ann, "nobody", Instant::now());
    assert_eq!(code(&frames(&mut ann)[0]), Some(ErrorCode::PlayerNotFound));
    challenge(&mut lobby, &ann, "ANN", Instant::now());
    assert_eq!(code(&frames(&mut ann)[0]), Some(ErrorCode::PlayerNotFound), "not yourself");
}

#[test]
fn accepting_drafts_the_challenger_and_ends_both_sides_other_challenges() {
    let mut lobby = harness();
    let now = Instant::now();
    let mut ann = guest(&mut lobby, 1, "ann");
    let mut bob = guest(&mut lobby, 2, "bob");
    let mut cy = guest(&mut lobby, 3, "cy");
    challenge(&mut lobby, &ann, "bob", now);
    challenge(&mut lobby, &cy, "ann", now);
    let to_bob = offered(&mut bob);
    let f = frames(&mut ann);
    assert!(
        matches!(&f[..], [ServerMessage::ChallengeSent { .. }, ServerMessage::Challenged { .. }]),
        "{f:?}"
    );
    frames(&mut cy);
    assert_eq!(ann.presence.challenges(), 2);
    let new = accept(&mut lobby, &bob, &to_bob).expect("a room");
    assert_eq!(lobby.open_challenges(), 0);
    assert_eq!(ann.presence.status(), Status::Drafted);
    let code = new.room.code().to_string();
    let mut members: Vec<u64> = new.members.iter().map(|m| m.id.seq()).collect();
    members.sort_unstable();
    assert_eq!(members, [1, 2]);
    assert_eq!(ended(&frames(&mut cy)[0]).0, ChallengeEndReason::Canceled);
    assert_eq!(got(&mut ann.rx), ["challenge_ended".to_owned(), format!("drafted:{code}")]);
    assert_eq!(got(&mut bob.rx), [format!("entered:{code}")]);
    // Accepting it again: gone.
    assert!(accept(&mut lobby, &bob, &to_bob).is_none());
    assert!(got(&mut bob.rx).iter().any(|g| g == "error:challenge_not_found"));
}

#[test]
fn a_challenger_that_left_idle_cannot_be_drafted() {
    let mut lobby = harness();
    let mut ann = guest(&mut lobby, 1, "ann");
    let mut bob = guest(&mut lobby, 2, "bob");
    challenge(&mut lobby, &ann, "bob", Instant::now());
    let id = offered(&mut bob);
    frames(&mut ann);
    // Ann queued meanwhile, her Engaged not yet read by the lobby.
    ann.presence.swap(Status::Idle, Status::Queued).unwrap();
    assert!(accept(&mut lobby, &bob, &id).is_none());
    // The challenge's end first, then the refusal of the accept.
    assert_eq!(got(&mut bob.rx), ["challenge_ended", "error:challenge_not_found", "refused"]);
    assert_eq!(ended(&frames(&mut ann)[0]).0, ChallengeEndReason::Canceled);
}

#[test]
fn declines_expiry_disconnects_and_limits() {
    let mut lobby = harness();
    let t0 = Instant::now();
    let mut ann = guest(&mut lobby, 1, "ann");
    let mut bob = guest(&mut lobby, 2, "bob");
    // Declined with a reason: the challenger hears it, the decliner nothing.
    challenge(&mut lobby, &ann, "bob", t0);
    let id = offered(&mut bob);
    frames(&mut ann);
    lobby.handle(
        LobbyCmd::Ask {
            conn: bob.conn.clone(),
            ask: Ask::Decline { challenge: id.clone(), reason: Some("busy now".into()), id: None },
        },
        t0,
    );
    let f = frames(&mut ann);
    let (reason, text) = ended(&f[0]);
    assert_eq!(reason, ChallengeEndReason::Declined);
    assert!(text.contains("busy now"), "{text}");
    assert!(frames(&mut bob).is_empty());
    // Declined twice: not found.
    lobby.handle(
        LobbyCmd::Ask { conn: bob.conn.clone(), ask: Ask::Decline { challenge: id, reason: None, id: None } },
        t0,
    );
    assert_eq!(code(&frames(&mut bob)[0]), Some(ErrorCode::ChallengeNotFound));
    // Unanswered: expires at the lifetime, not before.
    challenge(&mut lobby, &ann, "bob", t0);
    offered(&mut bob);
    frames(&mut ann);
    assert_eq!(lobby.next_deadline(), Some(t0 + LIFETIME));
    assert!(lobby.tick(t0 + LIFETIME - Duration::from_millis(1)).is_empty());
    assert!(frames(&mut ann).is_empty());
    assert!(lobby.tick(t0 + LIFETIME).is_empty());
    assert_eq!(ended(&frames(&mut ann)[0]).0, ChallengeEndReason::Expired);
    assert_eq!(ended(&frames(&mut bob)[0]).0, ChallengeEndReason::Expired);
    assert_eq!((ann.presence.challenges(), bob.presence.challenges()), (0, 0));
    // At most MAX_SENT open at once.
    for _ in 0..MAX_SENT {
        challenge(&mut lobby, &ann, "bob", t0);
    }
    challenge(&mut lobby, &ann, "bob", t0);
    let f = frames(&mut ann);
    assert_eq!(code(f.last().unwrap()), Some(ErrorCode::Busy));
    // A busy target: busy.
    let mut cy = guest(&mut lobby, 3, "cy");
    cy.presence.swap(Status::Idle, Status::Playing).unwrap();
    challenge(&mut lobby, &bob, "cy", t0);
    assert_eq!(code(frames(&mut bob).last().unwrap()), Some(ErrorCode::Busy));
    assert!(frames(&mut cy).is_empty());
    // The challenger disconnects: the target hears it.
    frames(&mut bob);
    lobby.handle(LobbyCmd::Ask { conn: conn(1).0, ask: Ask::Offline }, t0);
    let f = frames(&mut bob);
    assert_eq!(f.len(), MAX_SENT);
    assert!(f.iter().all(|m| ended(m).0 == ChallengeEndReason::Canceled));
    assert_eq!(lobby.open_challenges(), 0);
}

#[test]
fn engaging_in_another_game_cancels_challenges() {
    let mut lobby = harness();
    let mut ann = guest(&mut lobby, 1, "ann");
    let mut bob = guest(&mut lobby, 2, "bob");
    challenge(&mut lobby, &ann, "bob", Instant::now());
    offered(&mut bob);
    frames(&mut ann);
    // Bob queues: what he received stays open (he may still accept).
    lobby.handle(LobbyCmd::Ask { conn: conn(2).0, ask: Ask::Engaged { all: false } }, Instant::now());
    assert!(frames(&mut ann).is_empty());
    assert_eq!(lobby.open_challenges(), 1);
    // Ann queues: what she sent ends (she can no longer be drafted).
    lobby.handle(LobbyCmd::Ask { conn: conn(1).0, ask: Ask::Engaged { all: false } }, Instant::now());
    let (a, b) = (frames(&mut ann), frames(&mut bob));
    assert_eq!(
        (ended(&a[0]).0, ended(&b[0]).0),
        (ChallengeEndReason::Canceled, ChallengeEndReason::Canceled)
    );
    assert!(ended(&a[0]).1.contains("ann is waiting for another game"), "{a:?}");
    // A game starting ends everything.
    challenge(&mut lobby, &bob, "ann", Instant::now());
    offered(&mut ann);
    frames(&mut bob);
    lobby.handle(LobbyCmd::Ask { conn: conn(1).0, ask: Ask::Engaged { all: true } }, Instant::now());
    let b = frames(&mut bob);
    assert!(ended(&b[0]).1.contains("ann started another game"), "{b:?}");
}

#[test]
fn play_house_opens_a_room_with_the_house() {
    let mut lobby = harness();
    let (a, mut ra) = conn(1);
    let cmd = LobbyCmd::Ask {
        conn: a,
        ask: Ask::PlayHouse {
            who: Identity::guest("ann"),
            rules: Rules::classic(3),
            level: tictactoe_protocol::HouseLevel::Random,
            id: None,
        },
    };
    let mut new = lobby.handle(cmd, Instant::now()).expect("a room");
    assert_eq!(got(&mut ra), [format!("entered:{}", new.room.code())]);
    let (outputs, _) = new.room.drain();
    let started = outputs
        .filter_map(|o| match o {
            Output::Send { msg: ServerMessage::GameStarted { players, .. }, .. } => Some(players),
            _ => None,
        })
        .next()
        .expect("game_started");
    assert!(started.iter().any(|p| &*p.name == "house" && p.bot && !p.account));
}

#[test]
fn a_player_still_waiting_after_house_after_plays_the_house() {
    let mut lobby = harness();
    let t0 = Instant::now();
    let quick = |conn: &Conn, house| LobbyCmd::Ask {
        conn: conn.clone(),
        ask: Ask::QuickMatch { who: Identity::guest("p"), rules: Rules::classic(3), house, id: None },
    };
    let (a, mut ra) = conn(1);
    let wait = Duration::from_millis(500);
    let level = tictactoe_protocol::HouseLevel::Random;
    assert!(lobby.handle(quick(&a, Some((wait, level))), t0).is_none());
    assert_eq!(lobby.next_deadline(), Some(t0 + wait));
    assert!(lobby.tick(t0 + wait - Duration::from_millis(1)).is_empty());
    let opened = lobby.tick(t0 + wait);
    assert_eq!(opened.len(), 1);
    assert_eq!(got(&mut ra), ["queued".to_owned(), format!("entered:{}", opened[0].room.code())]);
    assert_eq!(lobby.next_deadline(), None);
    // Paired before the time is up: no house.
    let (b, _rb) = conn(2);
    let (c, _rc) = conn(3);
    lobby.handle(quick(&b, Some((wait, level))), t0);
    assert!(lobby.handle(quick(&c, None), t0).is_some(), "b and c are paired");
    assert!(lobby.tick(t0 + wait).is_empty());
    // Left the queue before: no house either.
    let (d, _rd) = conn(4);
    lobby.handle(quick(&d, Some((wait, level))), t0);
    lobby.handle(LobbyCmd::Ask { conn: conn(4).0, ask: Ask::Cancel { rules: Rules::classic(3) } }, t0);
    assert!(lobby.tick(t0 + wait).is_empty());
}

/// The code (of an `error`) or the type of the last message a player was
/// sent, and an error's text.
fn last(p: &mut Player) -> (String, String) {
    let m = frames(p).pop().expect("a message");
    let text = match &m {
        ServerMessage::Error { message, .. } => message.clone(),
        _ => String::new(),
    };
    (wire_name(&m), text)
}

#[test]
fn an_account_shares_its_limit_over_its_connections() {
    let mut lobby = harness();
    let t0 = Instant::now();
    let acct =
        || Arc::new(Identity { name: "Ann".into(), account: Some(7), bot: false, ratings: Box::default() });
    let mut a1 = online(&mut lobby, 1, acct());
    let mut a2 = online(&mut lobby, 2, acct());
    let mut targets: Vec<Player> = (0..6).map(|i| guest(&mut lobby, 10 + i, &format!("t{i}"))).collect();
    for i in 0..MAX_SENT {
        let from = if i < 3 { &mut a1 } else { &mut a2 };
        challenge(&mut lobby, from, &format!("t{i}"), t0);
        assert_eq!(last(from).0, "challenge_sent");
    }
    challenge(&mut lobby, &a2, "t5", t0);
    let (code, text) = last(&mut a2);
    assert_eq!(code, "busy");
    assert!(text.contains("on all your connections"), "{text}");
    assert!(frames(&mut targets[5]).is_empty());
    // A decline frees a slot for the account, on whichever connection.
    let id = offered(&mut targets[0]);
    let decline = LobbyCmd::Ask {
        conn: targets[0].conn.clone(),
        ask: Ask::Decline { challenge: id, reason: None, id: None },
    };
    lobby.handle(decline, t0);
    frames(&mut a1);
    challenge(&mut lobby, &a2, "t5", t0);
    assert_eq!(last(&mut a2).0, "challenge_sent");
    // A connection that closes frees the slots it used.
    lobby.handle(LobbyCmd::Ask { conn: conn(1).0, ask: Ask::Offline }, t0);
    frames(&mut a2);
    for i in 0..2 {
        challenge(&mut lobby, &a2, &format!("t{i}"), t0);
        assert_eq!(last(&mut a2).0, "challenge_sent");
    }
    challenge(&mut lobby, &a2, "t2", t0);
    assert_eq!(last(&mut a2).0, "busy");
    lobby.handle(LobbyCmd::Ask { conn: conn(2).0, ask: Ask::Offline }, t0);
    assert_eq!(lobby.open_challenges(), 0);
    assert!(lobby.counts_empty());
}

#[test]
fn one_address_cannot_challenge_everyone_nor_fill_one_players_slots() {
    let mut lobby = harness();
    let t0 = Instant::now();
    let (a, b): (IpAddr, IpAddr) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
    let targets = MAX_SENT_PER_ADDRESS / MAX_RECEIVED_PER_ADDRESS + 1;
    let _targets: Vec<Player> =
        (0..targets).map(|i| guest(&mut lobby, 1000 + i as u64, &format!("t{i}"))).collect();
    let mut crowd: Vec<Player> = (0..MAX_SENT_PER_ADDRESS / MAX_SENT + 1)
        .map(|i| guest(&mut lobby, 100 + i as u64, &format!("c{i}")))
        .collect();
    // Every challenger of the crowd sends its five, round the targets:
    // no target gets more than five from the address.
    let mut sent = 0;
    for (i, c) in crowd.iter_mut().enumerate().take(MAX_SENT_PER_ADDRESS / MAX_SENT) {
        for k in 0..MAX_SENT {
            let target = (i * MAX_SENT + k) % targets;
            challenge_from(&mut lobby, c, a, &format!("t{target}"), t0);
            assert_eq!(last(c).0, "challenge_sent", "{i}/{k}");
            sent += 1;
        }
    }
    assert_eq!(sent, MAX_SENT_PER_ADDRESS);
    // The address is at its limit: a fresh connection from it is refused,
    // even towards a target with room.
    let fresh = crowd.last_mut().unwrap();
    challenge_from(&mut lobby, fresh, a, &format!("t{}", targets - 1), t0);
    let (code, text) = last(fresh);
    assert_eq!(code, "busy");
    assert!(text.contains("from your address"), "{text}");
    // Another address is not held up.
    challenge_from(&mut lobby, fresh, b, "t0", t0);
    assert_eq!(last(fresh).0, "challenge_sent");
    // Expiry frees every count.
    lobby.tick(t0 + LIFETIME);
    assert_eq!(lobby.open_challenges(), 0);
    assert!(lobby.counts_empty());

    // Five from one address may wait for one player; the sixth may not,
    // from any connection of that address, though the player has room.
    let mut bob = guest(&mut lobby, 1, "bob");
    for (i, c) in crowd.iter_mut().enumerate().take(MAX_RECEIVED_PER_ADDRESS) {
        challenge_from(&mut lobby, c, a, "bob", t0);
        assert_eq!(last(c).0, "challenge_sent", "{i}");
    }
    let sixth = &mut crowd[MAX_RECEIVED_PER_ADDRESS];
    challenge_from(&mut lobby, sixth, a, "bob", t0);
    let (code, text) = last(sixth);
    assert_eq!(code, "busy");
    assert!(text.contains("bob has 5 open challenges from your address"), "{text}");
    challenge_from(&mut lobby, sixth, b, "bob", t0);
    assert_eq!(last(sixth).0, "challenge_sent");
    assert_eq!(frames(&mut bob).len(), MAX_RECEIVED_PER_ADDRESS + 1);
}

#[test]
fn in_a_cluster_a_player_online_elsewhere_is_challenged_there_and_its_challenges_declined_there() {
    let mut lobby = harness();
    lobby.lobby.in_cluster("a");
    let tina = OnlinePlayer { name: "Tina".into(), account: false, bot: false, status: OnlineStatus::Idle };
    lobby.lobby.online_elsewhere(vec![("b".into(), tina)]);
    let mut carl = guest(&mut lobby, 1, "carl");
    let ip: IpAddr = [127, 0, 0, 1].into();
    let challenge = |name: &str| challenge_cmd(&carl.conn, ip, name);
    lobby.handle(challenge("tina"), Instant::now());
    assert_eq!(got(&mut carl.rx), ["sent:b"]);
    lobby.handle(challenge("nobody"), Instant::now());
    assert_eq!(got(&mut carl.rx), ["error:player_not_found"]);
    // Not while it waits for a game.
    carl.presence.swap(Status::Idle, Status::Queued).expect("idle");
    lobby.handle(challenge("tina"), Instant::now());
    assert_eq!(got(&mut carl.rx), ["error:busy"]);
    // A challenge id names the instance that holds it.
    let decline = |challenge: &str| LobbyCmd::Ask {
        conn: carl.conn.clone(),
        ask: Ask::Decline { challenge: challenge.into(), reason: None, id: None },
    };
    lobby.handle(decline("b~c1-ABCDEF"), Instant::now());
    assert_eq!(got(&mut carl.rx), ["sent:b"]);
    for unknown in ["a~c9-ABCDEF", "c9-ABCDEF"] {
        lobby.handle(decline(unknown), Instant::now());
        assert_eq!(got(&mut carl.rx), ["error:challenge_not_found"]);
    }
    carl.presence.swap(Status::Queued, Status::Idle).expect("queued");
    let mut dora = guest(&mut lobby, 2, "dora");
    lobby.handle(challenge("dora"), Instant::now());
    let sent = messages(&mut carl.rx);
    let ServerMessage::ChallengeSent { challenge: id, .. } = &sent[0] else { panic!("{sent:?}") };
    assert!(id.starts_with("a~"), "{id}");
    assert_eq!(got(&mut dora.rx), ["challenged"]);
}

#[test]
fn a_challenge_and_withdraw_loop_offers_its_target_a_bounded_number() {
    let mut lobby = harness();
    let t0 = Instant::now();
    let mut ann = guest(&mut lobby, 1, "ann");
    let mut bob = guest(&mut lobby, 2, "bob");
    let withdraw = |lobby: &mut Harness, ann: &Player, id: &str, at: Instant| {
        let ask = Ask::Decline { challenge: id.into(), reason: None, id: None };
        lobby.handle(LobbyCmd::Ask { conn: ann.conn.clone(), ask }, at);
    };
    for i in 0..players::MAX_OFFERS {
        let at = t0 + std::time::Duration::from_millis(i as u64);
        challenge(&mut lobby, &ann, "bob", at);
        let id = offered(&mut bob);
        withdraw(&mut lobby, &ann, &id, at);
        frames(&mut ann);
        frames(&mut bob);
    }
    challenge(&mut lobby, &ann, "bob", t0 + std::time::Duration::from_secs(1));
    let refused = frames(&mut ann);
    assert_eq!(refused.iter().filter_map(code).collect::<Vec<_>>(), [ErrorCode::Busy], "{refused:?}");
    assert!(frames(&mut bob).is_empty(), "the target hears nothing more");
    // Once the window has passed, challenges reach it again.
    challenge(&mut lobby, &ann, "bob", t0 + players::OFFERS_WINDOW + std::time::Duration::from_secs(1));
    offered(&mut bob);
}

#[test]
fn a_tournament_meeting_drafts_both_players_but_none_once_the_time_is_up() {
    let mut lobby = harness();
    let now = Instant::now();
    let (ann, mut bob) = (guest(&mut lobby, 1, "ann"), guest(&mut lobby, 2, "bob"));
    let wall = crate::room::WallClock::now().unix_ms(now);
    let rules = Rules {
        clock: Some(tictactoe_protocol::Fischer { initial_ms: 60_000, increment_ms: 0 }),
        ..Rules::classic(3)
    };
    let meet = |ends_at: i64| Ask::TournamentMeet {
        who: Identity::guest("ann"),
        tournament: "T".into(),
        rules,
        opponent: 2,
        at: None,
        ends_at,
    };
    // The time is up: the drafted asker is freed, the opponent left be.
    ann.presence.swap(Status::Idle, Status::Drafted).expect("drafted");
    assert!(lobby.handle(LobbyCmd::Ask { conn: ann.conn.clone(), ask: meet(wall - 1) }, now).is_none());
    assert_eq!((ann.presence.status(), bob.presence.status()), (Status::Idle, Status::Idle));
    // In time: a room with both drafted.
    ann.presence.swap(Status::Idle, Status::Drafted).expect("drafted");
    let room = lobby.handle(LobbyCmd::Ask { conn: ann.conn.clone(), ask: meet(wall + 60_000) }, now);
    assert!(room.is_some(), "a room opens");
    assert_eq!(bob.presence.status(), Status::Drafted);
    assert!(got(&mut bob.rx).iter().any(|g| g.starts_with("drafted:")));
}
