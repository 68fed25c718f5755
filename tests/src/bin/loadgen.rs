//! `loadgen`: load for a tictactoe server, with a bare relay as the baseline.
//!
//! Without `--url` it runs both in this process, the baseline relay and then
//! the game server, each on `127.0.0.1:0`, and prints the ratio. With `--url`
//! it loads that server (`--baseline` if it is a relay). `--serve-baseline
//! ADDR` runs just the relay (`--tasks`: the one with the game server's tasks
//! and queues), so that a script can pin it to a core.

use std::time::Duration;

use clap::Parser;
use tokio::net::TcpListener;

use tictactoe_server::{Config, Server};
use tictactoe_tests::load::{self, LoadConfig, Report};
use tictactoe_tests::relay::{Relay, serve_relay};

/// Load generator for ttt-server.
#[derive(Parser)]
#[command(name = "loadgen")]
struct Args {
    /// Target server; without it, an in-process relay and server are measured.
    #[arg(long)]
    url: Option<String>,
    /// Where the second player of each game connects (another instance of
    /// the cluster that --url is in); default --url.
    #[arg(long, requires = "url")]
    join_url: Option<String>,
    /// The target (or the only in-process run) is the bare relay baseline.
    #[arg(long)]
    baseline: bool,
    /// Concurrent games.
    #[arg(long, default_value_t = 200)]
    pairs: usize,
    /// Seconds of play.
    #[arg(long, default_value_t = 10.0)]
    secs: f64,
    /// Total moves per second, spread over the pairs; default closed loop.
    #[arg(long)]
    rate: Option<f64>,
    /// Board size.
    #[arg(long, default_value_t = 3)]
    size: usize,
    /// Play every game on this Fischer clock (minutes+seconds, e.g. 3+2).
    #[arg(long)]
    clock: Option<tictactoe_protocol::Fischer>,
    /// Hold this many idle connections for --secs and report the server's RSS per connection.
    #[arg(long)]
    idle: Option<usize>,
    /// Hold this many games, each waiting for its second move, for --secs and
    /// report the server's RSS per connection in them.
    #[arg(long)]
    live: Option<usize>,
    /// The server's process id, for --idle and --live against --url.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Only run the relay baseline on this address, until killed.
    #[arg(long, value_name = "ADDR")]
    serve_baseline: Option<String>,
    /// With --serve-baseline: the relay with the game server's data flow (a
    /// task per connection and per pair, bounded queues between them).
    #[arg(long, requires = "serve_baseline")]
    tasks: bool,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    // The same runtime choice as ttt-server's default, so that the baseline
    // and the server are compared on equal terms.
    let result = match tictactoe_server::runtime(0) {
        Ok(rt) => rt.block_on(run(args)),
        Err(e) => Err(format!("runtime: {e}")),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadgen: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    if let Some(addr) = &args.serve_baseline {
        let listener = TcpListener::bind(addr).await.map_err(|e| format!("bind {addr}: {e}"))?;
        println!("relay listening on {}", listener.local_addr().map_err(|e| e.to_string())?);
        let relay = if args.tasks { Relay::Tasks } else { Relay::Bare };
        serve_relay(listener, relay, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
        return Ok(());
    }
    let cfg = |url: String, relay: bool| LoadConfig {
        url,
        pairs: args.pairs,
        duration: Duration::from_secs_f64(args.secs),
        rate: args.rate,
        size: args.size,
        clock: args.clock,
        relay,
        join_url: args.join_url.clone(),
    };
    if let Some(n) = args.idle {
        let url = args.url.clone().ok_or("--idle needs --url and --server-pid")?;
        let pid = args.server_pid.ok_or("--idle needs --server-pid")?;
        return held(&url, pid, Held::Idle(n), Duration::from_secs_f64(args.secs)).await;
    }
    if let Some(n) = args.live {
        let url = args.url.clone().ok_or("--live needs --url and --server-pid")?;
        let pid = args.server_pid.ok_or("--live needs --server-pid")?;
        return held(&url, pid, Held::Live(n), Duration::from_secs_f64(args.secs)).await;
    }
    if let Some(url) = &args.url {
        let mut report = load::run(&cfg(url.clone(), args.baseline)).await?;
        let label = if args.baseline { "baseline relay" } else { "game server" };
        println!("{}", report.render(&format!("{label} at {url}, {} pairs", args.pairs)));
        println!("{}", report.summary());
        return check(&report);
    }
    // In-process: the relays first, then the server, in the same process.
    let mut relay = in_process(Some(Relay::Bare), &cfg).await?;
    println!("{}", relay.render(&format!("baseline relay (in-process), {} pairs", args.pairs)));
    if args.baseline {
        return Ok(());
    }
    let mut tasks = in_process(Some(Relay::Tasks), &cfg).await?;
    println!(
        "{}",
        tasks.render(&format!("relay with the server's tasks and queues (in-process), {} pairs", args.pairs))
    );
    let mut server = in_process(None, &cfg).await?;
    println!("{}", server.render(&format!("game server (in-process), {} pairs", args.pairs)));
    let of_relay = |r: &Report| r.moves_per_sec() / relay.moves_per_sec().max(1e-9);
    println!(
        "ratio: the game server does {:.2} of the relay's moves/s (the relay with its tasks and queues: {:.2})",
        of_relay(&server),
        of_relay(&tasks)
    );
    check(&server)
}

/// Runs the load against a relay (or, for `None`, the game server) served in this process.
async fn in_process(
    relay: Option<Relay>,
    cfg: &impl Fn(String, bool) -> LoadConfig,
) -> Result<Report, String> {
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| e.to_string())?;
    let url = format!("ws://{}/", listener.local_addr().map_err(|e| e.to_string())?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let stopped = async {
        let _ = stopped.await;
    };
    let task = if let Some(relay) = relay {
        tokio::spawn(async move {
            serve_relay(listener, relay, stopped).await;
            Ok(())
        })
    } else {
        let config = Config {
            max_messages_per_second: 0,
            turn_timeout_ms: 0,
            max_connections: 100_000,
            database: tictactoe_server::store::Database::None,
            ..Config::default()
        };
        tokio::spawn(Server::new(config).serve(listener, stopped))
    };
    let report = load::run(&cfg(url, relay.is_some())).await;
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    report
}

/// Fails the run when a move was refused or a record did not judge right.
fn check(report: &Report) -> Result<(), String> {
    if report.errors.is_empty() && report.judged_bad == 0 {
        Ok(())
    } else {
        Err(format!("errors {:?}, {} games judged inconsistent", report.errors, report.judged_bad))
    }
}

/// What [`held`] holds: idle connections, or games waiting for a move.
enum Held {
    Idle(usize),
    Live(usize),
}

/// Holds connections for `hold`, reporting the server's RSS per connection.
async fn held(url: &str, pid: u32, what: Held, hold: Duration) -> Result<(), String> {
    let before = load::rss_kib(pid).ok_or("cannot read the server's RSS from /proc")?;
    let (conns, kind) = match what {
        Held::Idle(n) => (load::hold_idle(url, n).await?, "idle"),
        Held::Live(n) => (load::hold_live(url, n).await?, "live"),
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = load::rss_kib(pid).ok_or("cannot read the server's RSS from /proc")?;
    let n = conns.len().max(1);
    let per = (after.saturating_sub(before)) as f64 * 1024.0 / n as f64;
    println!(
        "{kind}: {n} connections held; server RSS {before} KiB -> {after} KiB = {per:.0} bytes per connection"
    );
    println!("summary: {kind}={n} rss_per_conn_bytes={per:.0}");
    tokio::time::sleep(hold).await;
    conns.iter().for_each(|c| c.abort());
    Ok(())
}
