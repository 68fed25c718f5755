//! `ttt-server`: parse flags, set up logging, run the server until SIGINT or
//! SIGTERM; `ttt-server import FILE` puts a spill file's records back.

use clap::Parser;
use std::process::ExitCode;
use tictactoe_server::{Config, runtime, serve};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

/// mimalloc: the server allocates small frames and messages on every move,
/// where it is faster than the system allocator (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).init();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "import") {
        return import(Import::parse_from(args.iter().skip(1)));
    }
    let config = Config::parse();
    match runtime(config.threads) {
        Ok(rt) => rt.block_on(run(config)),
        Err(e) => {
            eprintln!("ttt-server: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `ttt-server import FILE`: the records of a spill file
/// (`ttt-unsaved-*.jsonl`, left by a stop whose database could not be
/// written) put into the database.
#[derive(Debug, Parser)]
#[command(name = "ttt-server import")]
struct Import {
    file: std::path::PathBuf,
    /// The database to put them in.
    #[arg(long, default_value = "sqlite:ttt.db", env = "TTT_DATABASE")]
    database: tictactoe_server::store::Database,
}

fn import(args: Import) -> ExitCode {
    match tictactoe_server::store::import(&args.database, &args.file) {
        Ok(new) => {
            println!("{}: {new} game records imported into {}", args.file.display(), args.database);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ttt-server import: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: Config) -> ExitCode {
    let listener = match TcpListener::bind(config.bind).await {
        Ok(l) => l,
        Err(e) => {
            let hint = match e.kind() {
                std::io::ErrorKind::AddrInUse => format!(
                    "; another program (perhaps another ttt-server) listens on {0} already: stop it, or \
                     give this one another address with --bind (e.g. --bind 127.0.0.1:0 for any free port)",
                    config.bind
                ),
                std::io::ErrorKind::PermissionDenied if config.bind.port() < 1024 => format!(
                    "; ports below 1024 need privileges: give --bind a higher port than {}",
                    config.bind.port()
                ),
                _ => String::new(),
            };
            eprintln!("ttt-server: cannot listen on {} (--bind): {e}{hint}", config.bind);
            return ExitCode::FAILURE;
        }
    };
    match serve(listener, config, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ttt-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM. The handlers are
/// installed here, before the server listens: a signal that comes right
/// after "listening" must stop it gracefully, not kill it.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (int, term) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()));
        async move {
            let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
                match s {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = wait(int) => {},
                _ = wait(term) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
