//! The per-move hot path outside the network, each beside a baseline:
//! decoding a `move` frame (typed, vs. a generic `serde_json::Value` parse),
//! a room handling a move (seat and turn checks, engine, one shared `moved`,
//! serialized once as its task does),
//! and encoding `moved` once for all recipients (vs. once per recipient).
#![allow(missing_docs)]

use std::hint::black_box;

use rand::SeedableRng;
use rand::rngs::StdRng;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tictactoe_protocol::{ClientFrame, Player, ServerMessage};
use tictactoe_server::cmd::{Request, encode};
use tictactoe_server::core::ConnId;
use tictactoe_server::core::account::Identity;
use tictactoe_server::room::{Output, Room, Rules, Settings};

const MOVE: &str = r#"{"type":"move","row":7,"col":3}"#;

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode_move");
    g.bench_function("ClientFrame::decode", |b| b.iter(|| ClientFrame::decode(black_box(MOVE))));
    g.bench_function("baseline: serde_json::Value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(MOVE)))
    });
    g.finish();
}

fn room_move(c: &mut Criterion) {
    let settings = Settings {
        turn_timeout: Some(Duration::from_secs(30)),
        grace: Duration::from_secs(30),
        records: false,
        wall: tictactoe_server::room::WallClock::now(),
    };
    let n = 100usize;
    c.bench_function("room_handles_a_move", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut done = 0u64;
            while done < iters {
                let now = Instant::now();
                let Ok(mut room) = Room::paired(
                    "BENCHROOM1".into(),
                    Rules::classic(n),
                    settings.clone(),
                    StdRng::seed_from_u64(1),
                    (ConnId::new(0, 1), Identity::guest("a")),
                    (ConnId::new(0, 2), Identity::guest("b")),
                    now,
                ) else {
                    return total;
                };
                room.spectate(ConnId::new(0, 3), None, now);
                room.drain().0.for_each(drop);
                // Row-major order on 100x100: 5000 moves without completing a line.
                let batch = (iters - done).min(5000);
                let start = Instant::now();
                for i in 0..batch as usize {
                    let conn = ConnId::new(0, if i % 2 == 0 { 1 } else { 2 });
                    room.request(
                        conn,
                        Request::Move { lag_ms: 0, row: (i / n) as i64, col: (i % n) as i64 },
                        None,
                        now,
                    );
                    // Serialized as the room's task does: each message once.
                    room.drain().0.for_each(|out| match out {
                        Output::Send { msg, .. } | Output::Broadcast { msg, .. } => {
                            drop(black_box(encode(&msg)))
                        }
                        other => drop(black_box(other)),
                    });
                }
                total += start.elapsed();
                done += batch;
            }
            total
        })
    });
}

fn encode_moved(c: &mut Criterion) {
    let moved = ServerMessage::Moved {
        clocks: None,
        running: None,
        room: "K7QM3XPA2B".into(),
        row: 1,
        col: 2,
        player: Player::X,
        seq: 5,
        next: Some(Player::O),
        clock_ms: Some(30_000),
        id: None,
    };
    let mut g = c.benchmark_group("encode_moved_for_2_players_and_10_spectators");
    g.bench_function("once, shared", |b| {
        b.iter(|| {
            let frame = encode(black_box(&moved));
            (0..12).map(|_| frame.clone()).collect::<Vec<_>>()
        })
    });
    g.bench_function("baseline: once per recipient", |b| {
        b.iter(|| (0..12).map(|_| encode(black_box(&moved))).collect::<Vec<_>>())
    });
    g.finish();
}

criterion_group!(benches, decode, room_move, encode_moved);
criterion_main!(benches);
