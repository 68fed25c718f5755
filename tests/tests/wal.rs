//! The SQLite log stays small under load: 300 pairs playing games back to
//! back while 200 connections register accounts as fast as they can (the
//! per-address limit off, so that only the writer's batching and the
//! checkpoints bound it), for `TTT_WAL_SECS` (default 25) seconds; the
//! largest size of `ttt.db-wal` seen, sampled every 50 ms, is below 64 MiB.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::load::{LoadConfig, run};
use tictactoe_tests::{TempDir, TestServer, test_config};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_stays_below_64_mib_under_games_and_a_registration_flood() {
    let secs = std::env::var("TTT_WAL_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(25);
    let dir = TempDir::new("wal");
    let config = Config {
        database: tictactoe_server::store::Database::Sqlite(dir.path.join("ttt.db")),
        registrations_per_minute: 0,
        max_messages_per_second: 0,
        ..test_config()
    };
    let server = TestServer::start(config).await;
    let wal = dir.path.join("ttt.db-wal");
    let stop = Arc::new(AtomicBool::new(false));
    let largest = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, largest, wal) = (stop.clone(), largest.clone(), wal.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let size = std::fs::metadata(&wal).map_or(0, |m| m.len());
                largest.fetch_max(size, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let registered = Arc::new(AtomicU64::new(0));
    let mut flood = Vec::new();
    for c in 0..200 {
        let (stop, registered, server_url) = (stop.clone(), registered.clone(), server.url());
        flood.push(tokio::spawn(async move {
            let mut client = tictactoe_tests::Client::connect(&server_url).await;
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let name = format!("f{c}x{n}");
                client.send(json!({"type": "register", "name": name, "bot": true})).await;
                if client.recv_type("registered").await["name"] == name {
                    registered.fetch_add(1, Ordering::Relaxed);
                }
                n += 1;
            }
        }));
    }
    let load = LoadConfig {
        url: server.url(),
        pairs: 300,
        duration: Duration::from_secs(secs),
        rate: None,
        size: 3,
        clock: None,
        relay: false,
        join_url: None,
    };
    let report = run(&load).await.expect("load ran");
    stop.store(true, Ordering::Relaxed);
    for f in flood {
        f.await.expect("flood task");
    }
    sampler.await.expect("sampler");
    let largest = largest.load(Ordering::Relaxed);
    eprintln!(
        "wal: largest {:.1} MiB over {secs} s; {} games, {} moves, {} accounts registered",
        largest as f64 / (1 << 20) as f64,
        report.games,
        report.moves,
        registered.load(Ordering::Relaxed)
    );
    assert!(report.games > 0 && registered.load(Ordering::Relaxed) > 0, "no load");
    assert!(largest < 64 << 20, "the log reached {largest} bytes");
    server.shutdown().await;
}
