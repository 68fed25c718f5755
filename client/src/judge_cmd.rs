//! `ttt judge [--size N] [--win K] [MOVES]`: replay a JSON move list and print the verdict.

use clap::Args;
use std::io::Read;
use tictactoe_protocol::{JudgeError, MoveError, judge};

/// Why a move list got no verdict.
#[derive(Debug, thiserror::Error)]
pub enum JudgeCmdError {
    /// Stdin could not be read.
    #[error("cannot read the moves from stdin: {0}")]
    Stdin(std::io::Error),
    /// The text is not a JSON list of pairs of integers.
    #[error("moves must be a JSON array of [row, col] pairs of integers: {0}")]
    NotJson(serde_json::Error),
    /// A move with a negative coordinate.
    #[error("move {index} [{row}, {col}] is illegal: the cell is outside the board")]
    Negative {
        /// The move's 0-based index.
        index: usize,
        /// Its row as given.
        row: i64,
        /// Its column as given.
        col: i64,
    },
    /// A move the game refuses.
    #[error("move {index} [{row}, {col}] is illegal: {reason}")]
    Illegal {
        /// The move's 0-based index.
        index: usize,
        row: usize,
        col: usize,
        /// Why the game refuses it.
        reason: MoveError,
    },
    /// The board or win length itself is refused.
    #[error(transparent)]
    Judge(JudgeError),
}

/// Arguments of `ttt judge`.
#[derive(Args)]
pub struct JudgeArgs {
    /// Board size.
    #[arg(long, default_value_t = 3)]
    size: usize,
    /// Marks in a row that win (default: the size, a whole line).
    #[arg(long)]
    win: Option<usize>,
    /// The moves as a JSON array of [row, col] pairs; read from stdin if absent.
    moves: Option<String>,
}

/// Reads the move list, judges it and prints the verdict; `Err` is the one-line
/// message for stderr.
pub fn run(args: &JudgeArgs) -> Result<(), JudgeCmdError> {
    let text = match &args.moves {
        Some(text) => text.clone(),
        None => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(JudgeCmdError::Stdin)?;
            text
        }
    };
    println!("{}", verdict(args.size, args.win.unwrap_or(args.size), &text)?);
    Ok(())
}

/// Parses `text` and judges it: the printed verdict, or a message that names
/// the offending move's 0-based index where there is one.
fn verdict(size: usize, win: usize, text: &str) -> Result<String, JudgeCmdError> {
    let raw: Vec<[i64; 2]> = serde_json::from_str(text).map_err(JudgeCmdError::NotJson)?;
    let mut moves = Vec::with_capacity(raw.len());
    for (index, [row, col]) in raw.into_iter().enumerate() {
        match (usize::try_from(row), usize::try_from(col)) {
            (Ok(r), Ok(c)) => moves.push([r, c]),
            _ => {
                return Err(JudgeCmdError::Negative { index, row, col });
            }
        }
    }
    match judge(size, win, &moves) {
        Ok(v) => Ok(v.to_string()),
        Err(JudgeError::IllegalMove { index, reason }) => {
            let [row, col] = moves[index];
            Err(JudgeCmdError::Illegal { index, row, col, reason })
        }
        Err(e) => Err(JudgeCmdError::Judge(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn prints_verdicts_and_names_bad_moves() {
        assert_eq!(verdict(3, 3, "[[0,0],[1,0],[0,1],[1,1],[0,2]]").unwrap(), "A");
        assert_eq!(verdict(3, 3, " [] ").unwrap(), "Pending");
        let err = verdict(3, 3, "[[0,0],[0,0]]").unwrap_err().to_string();
        assert!(err.contains("move 1") && err.contains("taken"), "{err}");
        let err = verdict(3, 3, "[[0,0],[-1,2]]").unwrap_err().to_string();
        assert!(err.contains("move 1") && err.contains("outside"), "{err}");
        assert!(verdict(3, 3, "[[0]]").unwrap_err().to_string().contains("JSON"));
        assert!(verdict(0, 0, "[]").unwrap_err().to_string().contains("size 0"));
    }
}
