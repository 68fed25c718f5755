//! `ttt`: the tictactoe command-line client.

mod judge_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Play tic-tac-toe on a tictactoe server, or judge a move list.
#[derive(Parser)]
#[command(name = "ttt", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a move list and print A, B, Draw or Pending.
    Judge(judge_cmd::JudgeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Judge(args) => judge_cmd::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ttt: {message}");
            ExitCode::FAILURE
        }
    }
}
