//! A short chaos run inside `cargo test` (CI also runs the longer `chaos` binary).

use std::sync::atomic::Ordering;

use tictactoe_tests::chaos::{ChaosConfig, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_survives_mixed_misbehaviour_and_returns_to_zero() {
    let report = run(&ChaosConfig::scaled(3.0, 1)).await;
    println!("{}", report.render());
    assert_eq!(report.failures(), Vec::<String>::new());
    assert_eq!(report.panics.load(Ordering::Relaxed), 0);
    assert!(report.games.load(Ordering::Relaxed) > 0, "honest games finished");
    assert!(report.resumed.load(Ordering::Relaxed) > 0, "games with a drop and resume finished");
    assert!(report.half_open_closed.load(Ordering::Relaxed) > 0, "stalled handshakes were closed");
    let closes = report.closes.lock().map(|c| c.clone()).unwrap_or_default();
    assert!(closes.contains_key("1009") && closes.contains_key("1008"), "{closes:?}");
}
