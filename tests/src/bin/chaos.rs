//! `chaos`: the chaos run against an in-process server (see `tictactoe_tests::chaos`);
//! prints the figures and exits non-zero if anything went wrong.

use clap::Parser;
use tictactoe_tests::chaos::{ChaosConfig, run};

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
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let report = run(&ChaosConfig::scaled(args.secs, args.scale)).await;
    println!("{}", report.render());
    let failures = report.failures();
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
