//! The room state machine under arbitrary event sequences and clock jumps,
//! driven the way connections drive it (a connection in the room sends
//! requests; one outside it may join, spectate or resume; a dropped one comes
//! back as a new connection). Invariants: no panic; every frame is a valid
//! server message; every `moved` is legal for the player whose turn it is and
//! was asked for by the connection holding that seat; one `game_over` per
//! started game, whose moves are the game's; after shutdown no game is left
//! open. A spectator that never leaves sees every broadcast.
#![no_main]

use std::sync::Arc;
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tictactoe_protocol::{EndReason, Game, Player, ServerMessage, Verdict, judge};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tictactoe_server::core::ConnId;
use tictactoe_server::cmd::Request;
use tictactoe_server::room::{Output, Room, Rules, Settings, WallClock};
use tictactoe_server::core::account::Identity;
use tictactoe_server::store::changes::LiveWrite;

const SLOTS: usize = 4;
const OBSERVER: ConnId = ConnId::new(0, 1000);

#[derive(Debug, Arbitrary)]
enum Op {
    Join { slot: u8, swap: bool },
    Spectate { slot: u8 },
    /// Resume with a token seen earlier (by index), or a made-up one.
    Resume { slot: u8, token: u8 },
    Move { slot: u8, row: i8, col: i8 },
    Resign { slot: u8 },
    Rematch { slot: u8 },
    Leave { slot: u8 },
    Disconnect { slot: u8 },
    /// The clock jumps ahead, then the room's timers run.
    Advance { ms: u16 },
    /// The house's search answers the last move asked for (or, `stale`,
    /// another one) with a cell that may be taken or off the board.
    HouseMove { row: u8, col: u8, stale: bool },
}

#[derive(Debug, Arbitrary)]
struct Input {
    size: u8,
    win: u8,
    paired: bool,
    /// Records kept (and ratings, between the paired accounts).
    records: bool,
    /// A private room's creator asks to play O (in a house room: moves first).
    mark: bool,
    /// Not paired: a room against the house at this level instead of a private room.
    house: Option<u8>,
    turn_ms: Option<u16>,
    grace_ms: u16,
    ops: Vec<Op>,
}

/// What the fuzzer knows of the room from its output alone.
struct Watch {
    size: usize,
    win: usize,
    /// The game in progress, replayed from `moved`.
    live: Option<Game>,
    /// Which connection holds each seat (player 1, player 2).
    seats: [Option<ConnId>; 2],
    tokens: Vec<Arc<str>>,
    records: bool,
    recorded: Vec<Arc<str>>,
    started: u32,
    ended: u32,
    /// The room saved the clock of a game in progress (at shutdown).
    clock_saved: bool,
    /// The house plays a seat; `think`: the move number it was last asked for.
    house: bool,
    think: Option<usize>,
}

impl Watch {
    /// Checks the room's output since the last call; `mover` is the
    /// connection whose `move` caused it.
    fn check(&mut self, room: &mut Room, mover: Option<ConnId>, inside: &mut [bool; SLOTS], conns: &[ConnId; SLOTS]) {
        let (outputs, recipients) = room.drain();
        let mut batch: Vec<(ConnId, ServerMessage, bool)> = Vec::new();
        for output in outputs {
            match output {
                Output::Send { to, msg } => batch.push((to, msg, true)),
                // A broadcast is one message: handled once, for its first recipient.
                Output::Broadcast { msg, to } => {
                    for (i, &to) in recipients[to].iter().enumerate() {
                        batch.push((to, msg.clone(), i == 0));
                    }
                }
                Output::Release { to } | Output::Replace { to } => {
                    if let Some(slot) = conns.iter().position(|&c| c == to) {
                        inside[slot] = false;
                    }
                }
                Output::Live { .. } => {}
                Output::Save(write) => {
                    assert!(self.records, "a game is saved only when records are kept");
                    self.clock_saved |= matches!(write, LiveWrite::Clock { .. });
                }
                Output::Record { record, .. } => {
                    assert!(self.records, "a record only when records are kept");
                    self.recorded.push(record.id.clone());
                }
                Output::Think { seq, game, .. } => {
                    assert!(self.house, "only a house room asks for the house's moves");
                    assert_eq!(game.moves().len() + 1, seq);
                    self.think = Some(seq);
                }
            }
        }
        for (to, msg, first) in batch {
            // Every message is a valid server message on the wire.
            let text = serde_json::to_string(&msg).expect("a message serializes");
            let back: ServerMessage = serde_json::from_str(&text).expect("every frame is a server message");
            assert_eq!(back, msg);
            match msg {
                ServerMessage::GameStarted { size, win, you, resume_token, .. } => {
                    assert_eq!((size, win), (self.size, self.win));
                    // The house's seat has no connection: only its player hears the start.
                    if self.house {
                        self.seats = [None; 2];
                    }
                    self.seats[usize::from(you.number() - 1)] = Some(to);
                    self.tokens.push(resume_token);
                    // The house hears nothing: its player's message starts the game.
                    if you == Player::X || self.house {
                        assert!(self.live.is_none(), "a game started while another was open");
                        self.live = Some(Game::with_win(size, win).expect("rules"));
                        self.started += 1;
                    }
                }
                ServerMessage::State { you: Some(you), moves, .. } => {
                    self.seats[usize::from(you.number() - 1)] = Some(to);
                    if let Some(game) = &self.live {
                        assert_eq!(moves, game.moves(), "a resumed player sees the game's moves");
                    }
                }
                ServerMessage::Moved { row, col, player, seq, .. } if first => {
                    let game = self.live.as_mut().expect("a move outside a game");
                    let who = player;
                    assert_eq!(game.turn(), Some(who), "a move out of turn");
                    game.play_as(who, row, col).expect("a legal move");
                    assert_eq!(seq, game.moves().len());
                    let seat = self.seats[usize::from(player.number() - 1)];
                    assert_eq!(mover, seat, "moved by the connection holding the seat");
                }
                ServerMessage::GameOver { winner, reason, moves, game_id, ratings, .. } if first => {
                    let game = self.live.take().expect("a game_over without a game (or a second one)");
                    assert_eq!(moves, game.moves());
                    // Its record was queued just before it, under the same id.
                    assert_eq!(game_id.as_ref(), self.recorded.last().filter(|_| self.records));
                    // Rated only by play, only with records kept.
                    if ratings.is_some() {
                        assert!(reason != EndReason::Shutdown && self.records);
                    }
                    self.ended += 1;
                    if matches!(reason, EndReason::Line | EndReason::Draw) {
                        let list: Vec<[usize; 2]> =
                            moves.iter().map(|&[r, c]| [usize::from(r), usize::from(c)]).collect();
                        let verdict = judge(self.size, self.win, &list).expect("a legal record");
                        assert_eq!(verdict.winner_number(), winner.map_or(0, Player::number));
                        assert_ne!(verdict, Verdict::Pending);
                    }
                }
                _ => {}
            }
        }
    }
}

fuzz_target!(|input: Input| {
    let size = usize::from(input.size % 4) + 2;
    let least = Game::min_win(size);
    let win = least + usize::from(input.win) % (size - least + 1);
    let rules = Rules { size, win, clock: None };
    let settings = Settings {
        turn_timeout: input.turn_ms.map(|ms| Duration::from_millis(u64::from(ms).max(1))),
        grace: Duration::from_millis(u64::from(input.grace_ms % 3000)),
        records: input.records,
        wall: WallClock::now(),
    };
    let start = Instant::now();
    let mut now = start;
    let mut conns: [ConnId; SLOTS] = [1, 2, 3, 4].map(|n| ConnId::new(0, n));
    let mut next_conn = 5;
    let mut inside = [false; SLOTS];
    let name = Identity::guest("fuzz");
    let account = |id| Arc::new(Identity { name: Arc::from(format!("acct{id}")), account: Some(id), bot: false, ratings: Box::default() });
    let code: Arc<str> = Arc::from("FUZZROOM42");
    let levels = tictactoe_protocol::HouseLevel::ALL;
    let rng = StdRng::seed_from_u64(u64::from(input.mark));
    let mut room = if input.paired {
        inside[0] = true;
        inside[1] = true;
        Room::paired(code, rules, settings, rng, (conns[0], account(1)), (conns[1], account(2)), now)
    } else if let Some(level) = input.house {
        inside[0] = true;
        let level = levels[usize::from(level) % levels.len()];
        Room::house(code, rules, settings, rng, (conns[0], name.clone()), level, now)
    } else {
        inside[0] = true;
        Room::private(code, rules, settings, rng, (conns[0], name.clone()), input.mark.then_some(Player::O), None, None)
    }
    .expect("a valid size");
    // A spectator that stays to the end sees every game_over, even of a game
    // whose players have both dropped.
    room.spectate(OBSERVER, None, now);
    let mut watch = Watch {
        size,
        win,
        live: None,
        seats: [None; 2],
        tokens: Vec::new(),
        records: input.records,
        recorded: Vec::new(),
        started: 0,
        ended: 0,
        clock_saved: false,
        house: !input.paired && input.house.is_some(),
        think: None,
    };
    watch.check(&mut room, None, &mut inside, &conns);

    for op in input.ops {
        if room.is_closed() {
            break;
        }
        let slot = |s: u8| usize::from(s) % SLOTS;
        let mut mover = None;
        match op {
            Op::Join { slot: s, swap } if !inside[slot(s)] => {
                inside[slot(s)] = true;
                room.join(conns[slot(s)], name.clone(), None, swap, now);
            }
            Op::Spectate { slot: s } if !inside[slot(s)] => {
                inside[slot(s)] = true;
                room.spectate(conns[slot(s)], None, now);
            }
            Op::Resume { slot: s, token } if !inside[slot(s)] => {
                inside[slot(s)] = true;
                let made_up = Arc::from("not-a-token");
                let token = watch.tokens.get(usize::from(token)).cloned().unwrap_or(made_up);
                room.resume(conns[slot(s)], &token, None, now);
            }
            Op::Move { slot: s, row, col } if inside[slot(s)] => {
                mover = Some(conns[slot(s)]);
                let request = Request::Move { row: i64::from(row), col: i64::from(col), lag_ms: 0 };
                room.request(conns[slot(s)], request, None, now);
            }
            Op::Resign { slot: s } if inside[slot(s)] => room.request(conns[slot(s)], Request::Resign, None, now),
            Op::Rematch { slot: s } if inside[slot(s)] => room.request(conns[slot(s)], Request::Rematch, None, now),
            Op::Leave { slot: s } if inside[slot(s)] => room.request(conns[slot(s)], Request::Leave, None, now),
            Op::Disconnect { slot: s } if inside[slot(s)] => {
                room.disconnect(conns[slot(s)], now);
                // The client comes back, if at all, as a new connection.
                inside[slot(s)] = false;
                conns[slot(s)] = ConnId::new(0, next_conn);
                next_conn += 1;
            }
            Op::Advance { ms } => {
                now += Duration::from_millis(u64::from(ms));
                room.tick(now);
            }
            Op::HouseMove { row, col, stale } => {
                let seq = watch.think.unwrap_or(1) + usize::from(stale);
                room.house_move(seq, Some((usize::from(row), usize::from(col))), now);
            }
            _ => continue,
        }
        watch.check(&mut room, mover, &mut inside, &conns);
        if let Some(deadline) = room.next_deadline() {
            assert!(deadline >= start, "a deadline in the past of the room's start");
        }
    }
    room.shutdown(now, true);
    watch.check(&mut room, None, &mut inside, &conns);
    assert!(room.is_closed(), "shutdown closes the room");
    // With records kept, a game in progress is saved (with its clock) to go
    // on after a restart and ends for nobody; without, it ends with `shutdown`.
    let suspended = watch.records && watch.live.take().is_some();
    assert!(!suspended || watch.clock_saved, "a game in progress is saved at shutdown");
    assert!(watch.live.is_none(), "a started game never got its game_over");
    assert_eq!(watch.started, watch.ended + u32::from(suspended));
    let counts = room.counts();
    assert_eq!((counts.started, counts.finished()), (u64::from(watch.started), u64::from(watch.ended)));
});
