//! `chaos`: the chaos run against an in-process server (see
//! `tictactoe_tests::chaos`), then, with `--server-bin`, the crash phase
//! against the real binary (see `tictactoe_tests::crash`), and with
//! `--cluster` its cluster forms (two instances, one killed; then two
//! instances, one paused past its lease and woken); prints the figures and
//! exits non-zero if anything went wrong.

use clap::Parser;
use tictactoe_tests::chaos::{ChaosConfig, run};
use tictactoe_tests::crash::{self, CrashConfig};

/// Many misbehaving clients at once against one server, then a check of the aftermath.
#[derive(Parser)]
#[command(name = "chaos")]
struct Args {
    /// How long new clients keep starting, in seconds.
    #[arg(long, default_value_t = 20.0)]
    secs: f64,
    /// Clients of each kind: 8×scale honest pairs, 4×scale resuming pairs, and so on.
    #[arg(long, default_value_t = 4)]
    scale: usize,
    /// The `ttt-server` binary: run the crash phase (4×scale pairs, SIGKILL
    /// after secs/2, then secs/2 more) against it.
    #[arg(long)]
    server_bin: Option<std::path::PathBuf>,
    /// With `--server-bin`: then the cluster phase, two instances on a
    /// throwaway Postgres and Redis, the players spread over both, one
    /// instance SIGKILLed and its games finished on the other; then again
    /// with the instance SIGSTOPped for 9 s (past its 4 s lease) instead,
    /// its games adopted and finished on the other, and woken to say
    /// nothing that contradicts the records.
    #[arg(long, requires = "server_bin")]
    cluster: bool,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let report = run(&ChaosConfig::scaled(args.secs, args.scale)).await;
    println!("{}", report.render());
    let mut failures = report.failures();
    if let Some(server_bin) = args.server_bin {
        let half = std::time::Duration::from_secs_f64(args.secs / 2.0);
        let mut cfg = CrashConfig {
            server_bin,
            pairs: 4 * args.scale,
            before: half,
            after: half,
            cluster: false,
            stop: None,
        };
        let crash = crash::run(&cfg).await;
        println!("{}", crash.render());
        failures.extend(crash.failures());
        if args.cluster {
            cfg.cluster = true;
            let cluster = crash::run(&cfg).await;
            println!("{}", cluster.render());
            failures.extend(cluster.failures());
            cfg.stop = Some(std::time::Duration::from_secs(9));
            let paused = crash::run(&cfg).await;
            println!("{}", paused.render());
            failures.extend(paused.failures());
        }
    }
    if failures.is_empty() {
        println!("chaos: ok");
        std::process::ExitCode::SUCCESS
    } else {
        for f in failures.iter().take(20) {
            eprintln!("chaos: FAILED: {f}");
        }
        eprintln!("chaos: {} failures", failures.len());
        std::process::ExitCode::FAILURE
    }
}
