//! Refused connections are logged as a summary at most once a second, with
//! counts, never a line each: a flood of refusals is not a flood of logs.

mod common;

use std::time::Duration;

use common::Server;

#[tokio::test]
async fn a_flood_of_refused_connections_is_one_summary_line_a_second() {
    let server = Server::start(&["--database", "none", "--max-connections-per-ip", "2"]);
    let _held = (server.client().await, server.client().await);
    for _ in 0..300 {
        let refused = tokio_tungstenite::connect_async(server.url()).await;
        assert!(refused.is_err(), "a connection past the cap was let in");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let log = server.log.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let summaries: Vec<&String> = log.iter().filter(|l| l.contains("connections refused")).collect();
    assert!(!summaries.is_empty() && summaries.len() <= 3, "{summaries:#?}");
    let counted: u64 = summaries
        .iter()
        .filter_map(|l| l.split("per_ip=").nth(1)?.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(counted, 300, "{summaries:#?}");
    assert!(log.iter().filter(|l| l.contains("refused")).count() <= 3, "a line per refusal");
}
