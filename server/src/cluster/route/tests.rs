//! The router driven directly: its inputs in, its typed outputs and the
//! messages it queues for other instances out; Redis's answers handed back
//! as inputs.

use crate::cluster::relay::Wire;
use crate::cmd::Outbound;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::*;
use crate::core::account::Identity;
use crate::core::ids::ConnId;
use crate::core::queue::{self, Recv};

/// A router for instance "a" that hears of "b", with its lobby's inbox and
/// its outbox.
fn router(now: Instant) -> (Router, mpsc::Receiver<LobbyCmd>, mpsc::Receiver<Outgoing>) {
    let (lobby, lobby_rx) = mpsc::channel(8);
    let (out, out_rx) = mpsc::channel(8);
    let mut router = Router::new("a".into(), lobby, out, 8);
    assert!(router.handle(Input::Resync, now).iter().all(|o| matches!(o, Output::Claim(c) if c.is_empty())));
    router.handle(Input::Listed(vec!["a".into(), "b".into()]), now);
    (router, lobby_rx, out_rx)
}

/// Connection 5 of this instance, and what reaches it.
fn conn() -> (ConnHandle, queue::Receiver<Outbound>) {
    conn_n(5)
}

/// Connection `n` of this instance, and what reaches it.
fn conn_n(n: u64) -> (ConnHandle, queue::Receiver<Outbound>) {
    let (tx, rx) = queue::channel(8);
    (ConnHandle::new(ConnId::new(0, n), tx), rx)
}

fn join(conn: &ConnHandle, looks: u8) -> Input {
    let ask = Ask::JoinRoom { who: Identity::guest("ann"), room: "k7qm3xpa2b".into(), id: None };
    Input::Lobby(ToBus::Ask { conn: conn.clone(), ask, at: Where::Find { looks } })
}

/// The one lookup among `outputs`.
fn lookup(outputs: Vec<Output>) -> Lookup {
    match <[Output; 1]>::try_from(outputs) {
        Ok([Output::Lookup(lookup)]) => lookup,
        Ok(other) => panic!("not a lookup: {other:?}"),
        Err(outputs) => panic!("not one output: {outputs:?}"),
    }
}

/// What a connection was sent, named.
fn sent(rx: &mut queue::Receiver<Outbound>) -> Vec<String> {
    let mut got = Vec::new();
    while let Some(Recv::Item(item)) = rx.try_recv() {
        got.push(match item {
            Outbound::Frame(f) => f.to_string(),
            other => format!("{other:?}"),
        });
    }
    got
}

#[test]
fn a_join_looks_its_room_up_and_goes_to_the_instance_redis_names() {
    let now = Instant::now();
    let (mut router, _lobby, mut out) = router(now);
    let (c, mut rx) = conn();
    let asked = lookup(router.handle(join(&c, 0), now));
    assert_eq!(asked.code, "K7QM3XPA2B");
    let found = Input::Found { lookup: asked, owner: Some(("b".into(), true)) };
    assert!(router.handle(found, now).is_empty());
    let Ok(Outgoing { to, msg: Wire::Ask { conn: 5, ask: Ask::JoinRoom { room, .. } } }) = out.try_recv()
    else {
        panic!("not sent to b");
    };
    assert_eq!((&*to, room.as_str()), ("b", "k7qm3xpa2b"));
    assert!(sent(&mut rx).is_empty());
    assert_eq!(router.counts(), (0, 1));
}

#[test]
fn a_room_nobody_runs_is_looked_up_once_more_then_not_found() {
    let now = Instant::now();
    let (mut router, _lobby, mut out) = router(now);
    let (c, mut rx) = conn();
    let first = lookup(router.handle(join(&c, 0), now));
    // Made a moment ago elsewhere, perhaps: asked again at the next pass.
    assert!(router.handle(Input::Found { lookup: first, owner: None }, now).is_empty());
    let again = lookup(router.handle(Input::Retry, now));
    assert_eq!(again.looks, 1);
    assert!(router.handle(Input::Found { lookup: again, owner: None }, now).is_empty());
    let got = sent(&mut rx);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].contains("room_not_found"), "{got:?}");
    assert_eq!(got[1], "Refused");
    assert!(out.try_recv().is_err());
}

#[test]
fn an_owner_not_listed_yet_is_alive_if_its_list_is_there() {
    let now = Instant::now();
    let (mut router, _lobby, mut out) = router(now);
    let (c, mut rx) = conn();
    let asked = lookup(router.handle(join(&c, 1), now));
    router.handle(Input::Found { lookup: asked, owner: Some(("c".into(), true)) }, now);
    assert!(matches!(out.try_recv(), Ok(Outgoing { to, .. }) if &*to == "c"));
    // Its own name, or one whose list is gone: answered here.
    for owner in [("a", true), ("d", false)] {
        let asked = lookup(router.handle(join(&c, 1), now));
        router.handle(Input::Found { lookup: asked, owner: Some((owner.0.into(), owner.1)) }, now);
        assert!(sent(&mut rx)[0].contains("room_not_found"));
    }
    assert!(out.try_recv().is_err());
}

#[test]
fn a_resume_nobody_runs_goes_back_to_the_lobby_to_wait_for_adoption() {
    let now = Instant::now();
    let (mut router, _lobby, _out) = router(now);
    let (c, _rx) = conn();
    let ask = Ask::Resume { token: "K7QM3XPA2B.secret".into(), id: None };
    let asked = router.handle(Input::Lobby(ToBus::Ask { conn: c, ask, at: Where::Find { looks: 3 } }), now);
    let asked = lookup(asked);
    assert_eq!(asked.code, "K7QM3XPA2B");
    let parked = router.handle(Input::Found { lookup: asked, owner: None }, now);
    assert!(
        matches!(&parked[..], [Output::Lobby(LobbyCmd::Park { looks: 3, token, .. })] if token == "K7QM3XPA2B.secret"),
        "{parked:?}"
    );
}

#[test]
fn rooms_opened_and_closed_are_written_and_claimed_again_when_the_bus_is_back() {
    let now = Instant::now();
    let (mut router, _lobby, _out) = router(now);
    let opened = router.handle(Input::Lobby(ToBus::Opened("ROOM1".into())), now);
    assert!(matches!(&opened[..], [Output::Room { code, open: true }] if &**code == "ROOM1"));
    router.handle(Input::Lobby(ToBus::Opened("ROOM2".into())), now);
    let closed = router.handle(Input::Lobby(ToBus::Closed("ROOM2".into())), now);
    assert!(matches!(&closed[..], [Output::Room { code, open: false }] if &**code == "ROOM2"));
    router.handle(Input::Down, now);
    let back = router.handle(Input::Resync, now + Duration::from_secs(1));
    assert!(matches!(&back[..], [Output::Claim(own)] if own.len() == 1 && &*own[0] == "ROOM1"), "{back:?}");
}

#[test]
fn an_ask_for_an_instance_not_heard_of_lately_is_answered_here() {
    let now = Instant::now();
    let (mut router, _lobby, mut out) = router(now);
    let (c, mut rx) = conn();
    let later = now + GONE_AFTER;
    let ask = Ask::Decline { challenge: "b~1".into(), reason: None, id: None };
    router.handle(Input::Lobby(ToBus::Ask { conn: c, ask, at: Where::At("b".into()) }), later);
    assert!(sent(&mut rx)[0].contains("challenge_not_found"));
    assert!(out.try_recv().is_err());
}

#[test]
fn a_fanout_from_a_room_s_instance_reaches_each_connection_named_in_order() {
    let now = Instant::now();
    let (mut router, _lobby, mut out) = router(now);
    let mut rxs = Vec::new();
    for n in [5, 6] {
        let (c, rx) = conn_n(n);
        let asked = lookup(router.handle(join(&c, 0), now));
        router.handle(Input::Found { lookup: asked, owner: Some(("b".into(), true)) }, now);
        assert!(matches!(out.try_recv(), Ok(Outgoing { msg: Wire::Ask { .. }, .. })));
        rxs.push(rx);
    }
    let (one, two) = (Utf8Bytes::from("one"), Utf8Bytes::from("two"));
    let msgs = vec![
        Wire::Fanout { conns: vec![5, 6, 7], frame: one },
        Wire::Out { conn: 6, item: Outbound::Frame(Utf8Bytes::from("own")) },
        Wire::Fanout { conns: vec![6, 5], frame: two },
    ];
    router.handle(Input::Incoming(Envelope { from: "b".into(), run: 1, msgs }), now);
    assert_eq!(sent(&mut rxs[0]), ["one", "two"]);
    assert_eq!(sent(&mut rxs[1]), ["one", "own", "two"]);
    // Nobody here is 7: its ghost there can go.
    assert!(matches!(out.try_recv(), Ok(Outgoing { to, msg: Wire::Gone { conn: 7 } }) if &*to == "b"));
    assert!(out.try_recv().is_err());
}

#[test]
fn an_address_over_its_lookup_budget_is_refused_at_once_with_the_request_s_id() {
    let now = Instant::now();
    let (mut router, _lobby, mut out) = router(now);
    let (c, mut rx) = conn();
    let c = c.with_ip([192, 0, 2, 7].into());
    let join_id = |n: u64| {
        let ask = Ask::JoinRoom {
            who: Identity::guest("ann"),
            room: format!("K7QM3XPA{n:02}"),
            id: Some(tictactoe_protocol::RequestId::Int(n as i64)),
        };
        Input::Lobby(ToBus::Ask { conn: c.clone(), ask, at: Where::Find { looks: 0 } })
    };
    let whole = budget::Charge {
        ip: [192, 0, 2, 7].into(),
        burst: budget::LOOKUPS_PER_SECOND * budget::BURST_SECONDS,
        per_second: budget::LOOKUPS_PER_SECOND,
    };
    for n in 0..u64::from(budget::LOOKUPS_PER_SECOND * budget::BURST_SECONDS) {
        // Each is charged across the cluster too, to the same address.
        assert_eq!(lookup(router.handle(join_id(n), now)).charge, Some(whole));
    }
    assert_eq!(whole.key(), "ttt:lookups:192.0.2.7");
    // Seen through an IPv6 socket, the same client has the same bucket.
    let mapped = budget::Charge { ip: "::ffff:192.0.2.7".parse().expect("an address"), ..whole };
    assert_eq!(mapped.key(), whole.key());
    assert!(router.handle(join_id(99), now).is_empty(), "no lookup over the budget");
    let got = sent(&mut rx);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].contains("\"rate_limited\"") && got[0].contains("\"id\":99"), "{got:?}");
    assert!(got[0].contains("\"retry_after_ms\":100"), "{got:?}");
    assert_eq!(got[1], "Refused");
    // A parked `resume`'s repeated looks are not charged again.
    let ask = Ask::Resume { token: "K7QM3XPA2B.secret".into(), id: None };
    let again = lookup(
        router.handle(Input::Lobby(ToBus::Ask { conn: c.clone(), ask, at: Where::Find { looks: 2 } }), now),
    );
    assert_eq!(again.charge, None);
    // A handle with no address (as a ghost's) is not counted here: its own instance counts it.
    assert_eq!(lookup(router.handle(join(&conn().0, 0), now)).charge, None);
    // The budget refills.
    lookup(router.handle(join_id(100), now + Duration::from_millis(100)));
    assert!(out.try_recv().is_err());
}

#[test]
fn a_lookup_redis_refused_for_the_address_s_cluster_wide_budget_is_rate_limited_with_its_id() {
    let now = Instant::now();
    let (mut router, _lobby, mut out) = router(now);
    let (c, mut rx) = conn();
    let c = c.with_ip([192, 0, 2, 8].into());
    let id = Some(tictactoe_protocol::RequestId::Str("w".into()));
    let ask = Ask::Spectate { room: "K7QM3XPA2B".into(), id };
    let asked =
        lookup(router.handle(Input::Lobby(ToBus::Ask { conn: c, ask, at: Where::Find { looks: 0 } }), now));
    assert!(asked.charge.is_some());
    let limited = Input::Limited { lookup: asked, wait: Duration::from_millis(250) };
    assert!(router.handle(limited, now).is_empty(), "nothing more asked of Redis");
    let got = sent(&mut rx);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].contains("\"rate_limited\"") && got[0].contains("\"id\":\"w\""), "{got:?}");
    assert!(got[0].contains("\"retry_after_ms\":250"), "{got:?}");
    assert_eq!(got[1], "Refused");
    assert!(out.try_recv().is_err(), "nothing sent to another instance");
    assert_eq!(router.counts(), (0, 0));
}
