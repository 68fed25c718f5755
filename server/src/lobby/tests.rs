//! The lobby's rules without tasks: pairing order, sizes, leaving the queue,
//! room codes, and routing joins, spectators and resume tokens.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use rand::SeedableRng;

use super::*;
use crate::room::Output as RoomOutput;

/// How long challenges live in these tests.
pub(super) const LIFETIME: Duration = Duration::from_secs(30);

pub(super) fn settings() -> Settings {
    Settings {
        turn_timeout: None,
        grace: Duration::from_secs(5),
        records: false,
        wall: crate::room::WallClock::now(),
    }
}

/// The `n`th connection of this instance.
pub(super) fn id(n: u64) -> ConnId {
    ConnId::new(0, n)
}

/// What reached a connection, in order, as the lobby's outputs said it.
pub(super) type Mailbox = Rc<RefCell<Vec<Got>>>;

/// One thing the lobby's outputs gave a connection.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // a test's list of what arrived: a box would only add noise
pub(super) enum Got {
    /// A message.
    Msg(ServerMessage),
    /// The `Refused` signal.
    Refused,
    /// Put in a room (asked for, or drafted).
    Entered(Arc<str>),
    Drafted(Arc<str>),
    /// Handed to the bus: its room is not here (the bus found it nowhere).
    Elsewhere,
    /// Moved to the queue of this instance.
    Moved(Arc<str>),
    /// A challenge (or its decline) sent to this instance.
    Sent(Arc<str>),
}

/// A connection in these tests: its id, and the mailbox the outputs fill.
#[derive(Debug, Clone)]
pub(super) struct Conn {
    pub(super) id: ConnId,
    mail: Mailbox,
    /// The connection's task has ended (its `Cancel` not read yet).
    closed: Rc<std::cell::Cell<bool>>,
}

impl Peer for Conn {
    fn id(&self) -> ConnId {
        self.id
    }

    fn is_closed(&self) -> bool {
        self.closed.get()
    }
}

/// A connection and its mailbox.
pub(super) fn conn(n: u64) -> (Conn, Mailbox) {
    let mail = Mailbox::default();
    (Conn { id: id(n), mail: mail.clone(), closed: Rc::default() }, mail)
}

/// A variant's name as the wire spells it (`GameStarted` is `game_started`).
fn snake(debug: String) -> String {
    let name = debug.split([' ', '{', '(']).next().unwrap_or_default();
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// A message's type as the wire names it, or an error's code.
pub(super) fn wire_name(msg: &ServerMessage) -> String {
    match msg {
        ServerMessage::Error { code, .. } => snake(format!("{code:?}")),
        msg => snake(format!("{msg:?}")),
    }
}

/// What a connection got since the last look, named: message types (an
/// error by its code), signals as `entered:CODE`, `drafted:CODE`, `refused`.
pub(super) fn got(mail: &mut Mailbox) -> Vec<String> {
    mail.borrow_mut()
        .drain(..)
        .map(|g| match g {
            Got::Msg(msg @ ServerMessage::Error { .. }) => format!("error:{}", wire_name(&msg)),
            Got::Msg(msg) => wire_name(&msg),
            Got::Refused => "refused".into(),
            Got::Entered(room) => format!("entered:{room}"),
            Got::Drafted(room) => format!("drafted:{room}"),
            Got::Elsewhere => "elsewhere".into(),
            Got::Moved(to) => format!("moved:{to}"),
            Got::Sent(to) => format!("sent:{to}"),
        })
        .collect()
}

/// The messages a connection got since the last look.
pub(super) fn messages(mail: &mut Mailbox) -> Vec<ServerMessage> {
    let all: Vec<Got> = mail.borrow_mut().drain(..).collect();
    all.into_iter().filter_map(|g| if let Got::Msg(m) = g { Some(m) } else { None }).collect()
}

/// What a room was handed, in order.
pub(super) type Inbox = Rc<RefCell<VecDeque<RoomCmd<Conn>>>>;

/// A room the lobby opened, with what it was handed since.
pub(super) struct NewRoom {
    pub(super) room: Room,
    pub(super) members: Vec<Conn>,
    pub(super) inbox: Inbox,
}

/// The lobby with its outputs delivered as a shell would: messages and
/// signals into mailboxes, forwarded requests into the rooms' inboxes.
pub(super) struct Harness {
    pub(super) lobby: Lobby<Conn>,
    inboxes: HashMap<Arc<str>, Inbox>,
    /// The connections whose `Cancel` the bus was handed.
    cancelled_elsewhere: Vec<ConnId>,
}

/// An empty lobby in these tests' settings, with a fixed seed.
pub(super) fn harness() -> Harness {
    let lobby = Lobby::new(settings(), LIFETIME, 0, rand::rngs::StdRng::seed_from_u64(7));
    Harness { lobby, inboxes: HashMap::new(), cancelled_elsewhere: Vec::new() }
}

impl Harness {
    /// Handles `cmd`; returns the room it opened, if any.
    pub(super) fn handle(&mut self, cmd: LobbyCmd<Conn>, now: Instant) -> Option<NewRoom> {
        let outputs = self.lobby.handle(cmd, now);
        let mut opened = self.deliver(outputs);
        assert!(opened.len() <= 1);
        opened.pop()
    }

    /// Time passes; returns the rooms opened.
    pub(super) fn tick(&mut self, now: Instant) -> Vec<NewRoom> {
        let outputs = self.lobby.tick(now);
        self.deliver(outputs)
    }

    /// A look for games to adopt brought `rooms`; returns those opened.
    pub(super) fn looked(&mut self, rooms: Vec<Room>) -> Vec<NewRoom> {
        let outputs = self.lobby.looked(rooms);
        self.deliver(outputs)
    }

    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.lobby.next_deadline()
    }

    pub(super) fn waiting(&self, rules: Rules) -> usize {
        self.lobby.waiting(rules)
    }

    pub(super) fn rooms(&self) -> usize {
        self.lobby.rooms()
    }

    pub(super) fn open_challenges(&self) -> usize {
        self.lobby.players.open()
    }

    pub(super) fn counts_empty(&self) -> bool {
        self.lobby.players.counts_empty()
    }

    fn deliver(&mut self, outputs: Vec<Output<Conn>>) -> Vec<NewRoom> {
        let mut opened = Vec::new();
        for output in outputs {
            match output {
                Output::Send { to, msg } => to.mail.borrow_mut().push(Got::Msg(msg)),
                Output::Refused { to } => to.mail.borrow_mut().push(Got::Refused),
                Output::Open { room, members, drafted } => {
                    let code = room.code().clone();
                    for m in &members {
                        let got = if drafted.contains(&m.id) {
                            Got::Drafted(code.clone())
                        } else {
                            Got::Entered(code.clone())
                        };
                        m.mail.borrow_mut().push(got);
                    }
                    let inbox = Rc::new(RefCell::new(VecDeque::new()));
                    self.inboxes.insert(code, inbox.clone());
                    opened.push(NewRoom { room: *room, members, inbox });
                }
                Output::Forward { to, cmd } => {
                    let conn = match &cmd {
                        RoomCmd::Join { conn, .. }
                        | RoomCmd::Spectate { conn, .. }
                        | RoomCmd::Resume { conn, .. } => conn.clone(),
                        other => panic!("the lobby forwards only entries: {other:?}"),
                    };
                    conn.mail.borrow_mut().push(Got::Entered(to.code.clone()));
                    self.inboxes[&to.code].borrow_mut().push_back(cmd);
                }
                Output::Closed { room } => {
                    self.inboxes.remove(&room.code);
                }
                // As a bus that finds the room on no instance: a `resume`
                // comes back to wait for the looks, others are refused.
                Output::Elsewhere { conn, ask, at } => match (ask, at) {
                    (Ask::Resume { token, id }, Where::Find { looks }) => {
                        let outputs =
                            self.lobby.handle(LobbyCmd::Park { conn, token, id, looks }, Instant::now());
                        opened.extend(self.deliver(outputs));
                    }
                    (Ask::JoinRoom { .. } | Ask::Spectate { .. }, Where::Find { .. }) => {
                        conn.mail.borrow_mut().push(Got::Elsewhere)
                    }
                    (Ask::Requeue { .. }, Where::At(to)) => conn.mail.borrow_mut().push(Got::Moved(to)),
                    (Ask::Cancel { .. }, Where::Followed) => self.cancelled_elsewhere.push(conn.id),
                    (Ask::Challenge { .. } | Ask::Decline { .. }, Where::At(at)) => {
                        conn.mail.borrow_mut().push(Got::Sent(at))
                    }
                    (Ask::Engaged { .. } | Ask::Offline, Where::Followed) => {}
                    other => panic!("not an ask for elsewhere: {other:?}"),
                },
            }
        }
        opened
    }
}

fn quick(lobby: &mut Harness, c: &Conn, size: usize) -> Option<NewRoom> {
    quick_k(lobby, c, Rules::classic(size))
}

fn quick_k(lobby: &mut Harness, c: &Conn, rules: Rules) -> Option<NewRoom> {
    let cmd = LobbyCmd::Ask {
        conn: c.clone(),
        ask: Ask::QuickMatch {
            who: Identity::guest(&format!("p{}", c.id.seq())),
            rules,
            house: None,
            id: None,
        },
    };
    lobby.handle(cmd, Instant::now())
}

fn members(new: &NewRoom) -> Vec<u64> {
    let mut ids: Vec<u64> = new.members.iter().map(|m| m.id.seq()).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn quick_match_pairs_first_come_first_served_within_a_size() {
    let mut lobby = harness();
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
    let mut lobby = harness();
    let mut firsts = std::collections::HashSet::new();
    for i in 0..64 {
        let (a, _ra) = conn(2 * i);
        let (b, _rb) = conn(2 * i + 1);
        quick(&mut lobby, &a, 3);
        let mut new = quick(&mut lobby, &b, 3).expect("paired");
        let (outputs, _) = new.room.drain();
        for output in outputs {
            if let RoomOutput::Send {
                to,
                msg: ServerMessage::GameStarted { you: tictactoe_protocol::Player::X, .. },
            } = output
            {
                firsts.insert(to.seq() % 2);
            }
        }
    }
    assert_eq!(firsts.len(), 2, "sometimes the one who waited moves first, sometimes not");
}

#[test]
fn quick_match_pairs_only_the_same_win_length() {
    let mut lobby = harness();
    let (a, _ra) = conn(1);
    let (b, _rb) = conn(2);
    let (c, _rc) = conn(3);
    assert!(quick_k(&mut lobby, &a, Rules { clock: None, size: 15, win: 5 }).is_none());
    assert!(
        quick_k(&mut lobby, &b, Rules { clock: None, size: 15, win: 15 }).is_none(),
        "same size, other rule"
    );
    let new = quick_k(&mut lobby, &c, Rules { clock: None, size: 15, win: 5 }).expect("the same rules pair");
    assert_eq!(members(&new), [1, 3]);
    assert_eq!(lobby.waiting(Rules { clock: None, size: 15, win: 15 }), 1);
}

#[test]
fn leaving_the_queue_and_gone_connections_are_not_paired() {
    let mut lobby = harness();
    let (a, _ra) = conn(1);
    let (b, rb) = conn(2);
    let (c, _rc) = conn(3);
    quick(&mut lobby, &a, 3);
    lobby.handle(
        LobbyCmd::Ask { conn: conn(1).0, ask: Ask::Cancel { rules: Rules::classic(3) } },
        Instant::now(),
    );
    assert_eq!(lobby.waiting(Rules::classic(3)), 0);
    quick(&mut lobby, &b, 3);
    // B's connection ends; its `Cancel` is not read yet.
    drop(rb);
    b.closed.set(true);
    assert!(quick(&mut lobby, &c, 3).is_none(), "b's connection is gone");
    // Nor is a connection gone before its `quick_match` was read queued.
    let (d, _rd) = conn(4);
    d.closed.set(true);
    assert!(quick(&mut lobby, &d, 3).is_none());
    assert_eq!(lobby.waiting(Rules::classic(3)), 1);
}

#[test]
fn a_private_room_is_found_by_its_code_as_typed() {
    let mut lobby = harness();
    let (a, mut ra) = conn(1);
    let (b, mut rb) = conn(2);
    let cmd = LobbyCmd::Ask {
        conn: a.clone(),
        ask: Ask::CreateRoom {
            organise: None,
            who: Identity::guest("a"),
            rules: Rules::classic(3),
            mark: None,
            id: None,
        },
    };
    let new = lobby.handle(cmd, Instant::now()).expect("a room");
    let code = new.room.code().clone();
    assert_eq!(got(&mut ra), [format!("entered:{code}")]);
    let typed = format!("  {}  ", code.to_lowercase());
    lobby.handle(
        LobbyCmd::Ask {
            conn: b.clone(),
            ask: Ask::JoinRoom { who: Identity::guest("b"), room: typed, id: None },
        },
        Instant::now(),
    );
    assert_eq!(got(&mut rb), [format!("entered:{code}")]);
    assert!(
        matches!(new.inbox.borrow_mut().pop_front(), Some(RoomCmd::Join { conn, .. }) if conn.id == id(2))
    );
    // Once the room's task reports it closed, the code is gone.
    lobby.handle(LobbyCmd::RoomClosed { room: code.clone(), ended: Vec::new() }, Instant::now());
    let cmd = LobbyCmd::Ask {
        conn: b.clone(),
        ask: Ask::Spectate { room: code.to_string(), id: Some(RequestId::Int(7)) },
    };
    lobby.handle(cmd, Instant::now());
    assert_eq!(got(&mut rb), ["error:room_not_found", "refused"]);
    assert_eq!(lobby.rooms(), 0);
}

#[test]
fn a_resume_token_is_routed_to_the_room_it_names() {
    let mut lobby = harness();
    let (a, _ra) = conn(1);
    let (b, _rb) = conn(2);
    let (c, mut rc) = conn(3);
    quick(&mut lobby, &a, 3);
    let new = quick(&mut lobby, &b, 3).expect("paired");
    let code = new.room.code().clone();
    let token = format!("{code}0123456789abcdef0123456789abcdef");
    lobby.handle(
        LobbyCmd::Ask { conn: c.clone(), ask: Ask::Resume { token: token.clone(), id: None } },
        Instant::now(),
    );
    assert_eq!(got(&mut rc), [format!("entered:{code}")]);
    assert!(
        matches!(new.inbox.borrow_mut().pop_front(), Some(RoomCmd::Resume { token: t, .. }) if t == token)
    );
    for bad in ["", "short", "NOSUCHROOM0123456789abcdef0123456789abcdef"] {
        lobby.handle(
            LobbyCmd::Ask { conn: c.clone(), ask: Ask::Resume { token: bad.into(), id: None } },
            Instant::now(),
        );
        assert_eq!(got(&mut rc), ["error:invalid_token", "refused"], "{bad:?}");
    }
}

#[test]
fn in_a_cluster_a_resume_waits_for_the_looks_that_may_bring_its_game() {
    // A game on another instance, which this one adopts.
    let mut there = harness();
    let (a, _ra) = conn(1);
    let (b, _rb) = conn(2);
    quick(&mut there, &a, 3);
    let adopted = quick(&mut there, &b, 3).expect("paired").room;
    let code = adopted.code().clone();

    let mut here = harness();
    here.lobby.in_cluster("here");
    let (c, mut rc) = conn(3);
    let token = format!("{code}0123456789abcdef0123456789abcdef");
    here.handle(
        LobbyCmd::Ask { conn: c.clone(), ask: Ask::Resume { token: token.clone(), id: None } },
        Instant::now(),
    );
    assert!(got(&mut rc).is_empty(), "it waits for the next look");
    let opened = here.looked(vec![adopted]);
    assert_eq!(opened.len(), 1);
    assert_eq!(got(&mut rc), [format!("entered:{code}")]);
    assert!(matches!(
        here.inboxes[&code].borrow_mut().pop_front(),
        Some(RoomCmd::Resume { token: t, .. }) if t == token
    ));

    // A token whose game never comes is refused once a dead instance's
    // lease would have run out, and two looks more.
    let unknown = "NOSUCHROOM0123456789abcdef0123456789abcdef";
    here.handle(
        LobbyCmd::Ask { conn: c.clone(), ask: Ask::Resume { token: unknown.into(), id: None } },
        Instant::now(),
    );
    for _ in 1..cluster::PARKED_LOOKS {
        here.looked(Vec::new());
    }
    assert!(got(&mut rc).is_empty());
    here.looked(Vec::new());
    assert_eq!(got(&mut rc), ["error:invalid_token", "refused"]);
    // One that names no room at all is refused at once.
    here.handle(
        LobbyCmd::Ask { conn: c.clone(), ask: Ask::Resume { token: "short".into(), id: None } },
        Instant::now(),
    );
    assert_eq!(got(&mut rc), ["error:invalid_token", "refused"]);
    // Once the looks end, what waits is refused.
    here.handle(
        LobbyCmd::Ask { conn: c.clone(), ask: Ask::Resume { token: unknown.into(), id: None } },
        Instant::now(),
    );
    let outputs = here.lobby.not_looking();
    here.deliver(outputs);
    assert_eq!(got(&mut rc), ["error:invalid_token", "refused"]);

    // Alone, it is refused at once.
    let mut alone = harness();
    alone.handle(
        LobbyCmd::Ask { conn: c.clone(), ask: Ask::Resume { token: unknown.into(), id: None } },
        Instant::now(),
    );
    assert_eq!(got(&mut rc), ["error:invalid_token", "refused"]);
}

#[test]
fn in_a_cluster_rooms_not_here_are_looked_for_elsewhere_and_waiting_players_move_when_paired() {
    let mut here = harness();
    here.lobby.in_cluster("here");
    let (c, mut rc) = conn(1);
    let name = Identity::guest("c");
    // A code not here may be another instance's: the bus is asked.
    let join = LobbyCmd::Ask {
        conn: c.clone(),
        ask: Ask::JoinRoom { who: name.clone(), room: "k7qm3xpa2b".into(), id: None },
    };
    here.handle(join, Instant::now());
    here.handle(
        LobbyCmd::Ask { conn: c.clone(), ask: Ask::Spectate { room: "K7QM3XPA2B".into(), id: None } },
        Instant::now(),
    );
    assert_eq!(got(&mut rc), ["elsewhere", "elsewhere"]);
    // A ghost of another instance's connection is never sent back out.
    let ghost = Conn { id: ConnId::new(crate::core::ids::RELAYED, 9), ..conn(9).0 };
    let mut rg = ghost.mail.clone();
    let join = LobbyCmd::Ask {
        conn: ghost.clone(),
        ask: Ask::JoinRoom { who: name.clone(), room: "K7QM3XPA2B".into(), id: None },
    };
    here.handle(join, Instant::now());
    assert_eq!(got(&mut rg), ["error:room_not_found", "refused"]);

    // A waiting player is listed for the matchmaker, and moves when paired.
    let t0 = Instant::now();
    quick(&mut here, &c, 3);
    let waiting = here.lobby.waiting_here(t0 + Duration::from_millis(250), 10_000);
    assert_eq!(waiting.len(), 1);
    assert_eq!((waiting[0].conn, waiting[0].movable, waiting[0].rules), (1, true, Rules::classic(3)));
    assert!((9_700..=9_760).contains(&waiting[0].since), "{waiting:?}");
    got(&mut rc);
    let host: Arc<str> = "b".into();
    here.handle(LobbyCmd::Paired { conn: c.id, rules: Rules::classic(4), host: host.clone() }, t0);
    assert!(got(&mut rc).is_empty(), "paired for rules it does not wait for");
    here.handle(LobbyCmd::Paired { conn: c.id, rules: Rules::classic(3), host: host.clone() }, t0);
    assert_eq!(got(&mut rc), ["moved:b"]);
    assert_eq!(here.waiting(Rules::classic(3)), 0);
    // Leaving the queue it moved to: the bus tells that instance.
    here.handle(LobbyCmd::Ask { conn: c.clone(), ask: Ask::Cancel { rules: Rules::classic(3) } }, t0);
    assert_eq!(here.cancelled_elsewhere, [c.id]);

    // A ghost waiting here is listed as staying put; a player moved here
    // (no `queued` again) is paired with it.
    let requeue = LobbyCmd::Ask {
        conn: ghost.clone(),
        ask: Ask::Requeue { who: name.clone(), rules: Rules::classic(3), house: None },
    };
    assert!(here.handle(requeue, t0).is_none());
    assert!(got(&mut rg).is_empty(), "its `queued` was sent where it asked");
    assert!(!here.lobby.waiting_here(t0, 10_000)[0].movable);
    let (d, _rd) = conn(4);
    let room = quick(&mut here, &d, 3).expect("paired with the ghost");
    assert_eq!(members(&room), [4, 9]);
}
