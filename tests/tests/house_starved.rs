//! The house bot cannot be starved: abusive connections keep 100×100 house
//! games thinking (each answering the house at once, so that a search is
//! always wanted) while an honest player plays 3×3 against the house and
//! times every reply. The real `ttt-server` binary at its defaults, so that
//! its CPU time can be read from /proc once the abusers leave. In a file of
//! its own: no other test's searches share the cores with it.
//!
//! `TTT_HOUSE_ABUSERS` sets how many abusers (default 40, so that a loaded
//! CI machine runs it in time; the figure was 200).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_tests::process::{ServerProcess, load};
use tictactoe_tests::{Client, http_get};

/// Replies of the house the honest player times.
const SAMPLES: usize = 40;

/// The value of the `ttt_house_moves_total` line with `label`, or 0.
fn house_moves(page: &str, label: &str) -> u64 {
    let line = format!("ttt_house_moves_total{{search=\"{label}\"}} ");
    page.lines().find_map(|l| l.strip_prefix(&line)).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// One abuser: a 100×100 house game, answered the moment the house moves,
/// for ever (a whole line of 100 is never made); `started` counts it once
/// its game has started. Ends when its connection does.
async fn abuse(mut c: Client, i: usize, started: Arc<AtomicUsize>) {
    c.send(json!({"type": "hello", "name": format!("abuser{i}")})).await;
    c.send(json!({"type": "play_house", "size": 100, "level": "perfect"})).await;
    let mut taken = HashSet::new();
    let mut me = Value::Null;
    let mut next = 0usize;
    let play = |taken: &HashSet<usize>, next: &mut usize| {
        while taken.contains(next) {
            *next += 1;
        }
        json!({"type": "move", "row": *next / 100, "col": *next % 100})
    };
    while let Some(msg) = c.next_json().await {
        let ours = match msg["type"].as_str() {
            Some("game_started") => {
                started.fetch_add(1, Ordering::Relaxed);
                me = msg["you"].clone();
                me == 1
            }
            Some("moved") => {
                let (r, col) = (msg["row"].as_u64().unwrap_or(0), msg["col"].as_u64().unwrap_or(0));
                taken.insert((r * 100 + col) as usize);
                msg["next"] == me
            }
            _ => false,
        };
        if ours && !c.try_send(play(&taken, &mut next)).await {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_3x3_player_gets_the_house_within_a_second_while_abusers_play_100x100() {
    let abusers: usize = std::env::var("TTT_HOUSE_ABUSERS").ok().and_then(|n| n.parse().ok()).unwrap_or(40);
    // Defaults but for the database: the house's 500 ms and its pool of all cores but one.
    let server = ServerProcess::start(&["--database", "none"]);
    let pid = server.child.id();
    let mut crowd = tokio::task::JoinSet::new();
    let started = Arc::new(AtomicUsize::new(0));
    for i in 0..abusers {
        let c = server.client().await;
        crowd.spawn(abuse(c, i, started.clone()));
    }
    // Every abuser's game has started (within 20 s), and so the pool is full.
    for _ in 0..200 {
        if started.load(Ordering::Relaxed) == abusers {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(started.load(Ordering::Relaxed), abusers, "abusers' games started");
    let busy = load(pid, Duration::from_secs(1)).await;

    let mut honest = server.client().await;
    honest.send(json!({"type": "hello", "name": "honest"})).await;
    let mut asked = Instant::now();
    honest.send(json!({"type": "play_house", "size": 3, "level": "perfect"})).await;
    let mut replies = Vec::new();
    let (mut me, mut free) = (Value::Null, Vec::new());
    let mut games = 0;
    while replies.len() < SAMPLES {
        let msg = honest.recv_json().await;
        match msg["type"].as_str() {
            Some("game_started") => {
                games += 1;
                me = msg["you"].clone();
                free = (0..9).collect();
                if me == 1 {
                    asked = Instant::now();
                    let cell = free.remove(0);
                    honest.send(json!({"type": "move", "row": cell / 3, "col": cell % 3})).await;
                }
            }
            Some("moved") => {
                let cell = msg["row"].as_u64().unwrap_or(0) * 3 + msg["col"].as_u64().unwrap_or(0);
                free.retain(|&f| f != cell);
                if msg["player"] != me {
                    replies.push(asked.elapsed());
                }
                if msg["next"] == me {
                    asked = Instant::now();
                    // Not the first free cell: the house gets positions to think about.
                    let cell = free.remove(free.len() / 2);
                    honest.send(json!({"type": "move", "row": cell / 3, "col": cell % 3})).await;
                }
            }
            Some("game_over") => {
                asked = Instant::now();
                honest.send(json!({"type": "rematch"})).await;
            }
            Some("error") => panic!("the honest player was refused: {msg}"),
            _ => {}
        }
    }
    let page = http_get(server.addr, "/metrics").await.1;
    let (no_turn, late) = (house_moves(&page, "no_turn"), house_moves(&page, "late"));

    // The abusers leave; the server's CPU is idle 2 s later.
    crowd.abort_all();
    while crowd.join_next().await.is_some() {}
    let left = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = load(pid, Duration::from_secs(1)).await;

    let in_order = replies.clone();
    replies.sort();
    let p99 = replies[(replies.len() * 99).div_ceil(100) - 1];
    let p50 = replies[replies.len() / 2];
    println!(
        "{abusers} abusers, {games} honest games: reply p50 {p50:?}, p99 {p99:?}, max {:?}; \
         server CPU {:.0}% of a core under abuse, {:.1}% from {:?} after they left; \
         house moves without a turn {no_turn}, late {late}",
        replies[replies.len() - 1],
        busy * 100.0,
        after * 100.0,
        left.elapsed() - Duration::from_secs(1),
    );
    println!("replies in order (ms): {:?}", in_order.iter().map(Duration::as_millis).collect::<Vec<_>>());
    // The abusers did load the server (a search place is a core, all but
    // one of them): the pool was full and the house answered some of them
    // without a search.
    assert!(busy > 0.25, "the abusers used only {:.0}% of a core: not an attack", busy * 100.0);
    assert!(no_turn + late > 0, "every house move had a search: the pool was never full");
    assert!(p99 <= Duration::from_secs(1), "the honest player's p99 reply was {p99:?}: {replies:?}");
    assert!(after < 0.1, "the server still used {:.0}% of a core 2 s after the abusers left", after * 100.0);
}
