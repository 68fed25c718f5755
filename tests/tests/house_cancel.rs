//! A house search whose move nobody wants any more stops at once, not at
//! its deadline: the real `ttt-server` binary's CPU, read from /proc, falls
//! to idle as soon as the game is left, or is lost by a disconnect. In a
//! file of its own: no other test's searches share the cores with it.

use std::time::Duration;

use serde_json::json;
use tictactoe_tests::Client;
use tictactoe_tests::process::{ServerProcess, load};

/// Starts a 60×60 house game on `c` and returns once the house is
/// thinking (it moves first, or it answers our first move). Its exact
/// search never finishes there: it would use all of its 900 ms.
async fn house_thinking(c: &mut Client) {
    c.send(json!({"type": "play_house", "size": 60, "level": "perfect"})).await;
    let started = c.recv_type("game_started").await;
    if started["you"] == 1 {
        c.send(json!({"type": "move", "row": 30, "col": 30})).await;
        c.recv_type("moved").await;
    }
}

#[tokio::test]
async fn a_search_stops_when_its_game_is_left_or_lost_by_a_disconnect() {
    // 900 ms per move, one search at a time; a dropped player loses at once.
    let args = [
        "--database",
        "none",
        "--house-think-ms",
        "900",
        "--house-searches",
        "1",
        "--reconnect-grace-ms",
        "0",
    ];
    let server = ServerProcess::start(&args);
    let pid = server.child.id();
    let window = Duration::from_millis(400);

    // Left.
    let mut c = server.client().await;
    house_thinking(&mut c).await;
    let thinking = load(pid, Duration::from_millis(200)).await;
    c.send(json!({"type": "leave"})).await;
    c.recv_type("game_over").await;
    // The search had 700 ms to go: the room's end stops it.
    let after_leave = load(pid, window).await;
    println!("CPU in cores: thinking {thinking:.2}, after leave {after_leave:.2}");
    // The house was searching (so the quiet after is the cancel's doing)...
    assert!(thinking > 0.2, "the house was not searching: {thinking:.2} cores");
    // ...and stopped with its game.
    assert!(after_leave < 0.15, "a search went on after its game was left: {after_leave:.2} cores");

    // Lost by a disconnect (no grace). The first game's search has been
    // seen stopped above, so the two do not overlap.
    let mut c = server.client().await;
    house_thinking(&mut c).await;
    let thinking_again = load(pid, Duration::from_millis(200)).await;
    drop(c);
    let after_drop = load(pid, window).await;
    println!("CPU in cores: thinking {thinking_again:.2}, after the drop {after_drop:.2}");
    assert!(thinking_again > 0.2, "the house was not searching: {thinking_again:.2} cores");
    assert!(after_drop < 0.15, "a search went on after its game was lost: {after_drop:.2} cores");
}
