//! `ttt judge [--size N] [--win K] [MOVES]`: replay a JSON move list and print the verdict.

use clap::Args;
use std::io::Read;
use tictactoe_protocol::{JudgeError, judge};

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
pub fn run(args: &JudgeArgs) -> Result<(), String> {
    let text = match &args.moves {
        Some(text) => text.clone(),
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read the moves from stdin: {e}"))?;
            text
        }
    };
    println!("{}", verdict(args.size, args.win.unwrap_or(args.size), &text)?);
    Ok(())
}

/// Parses `text` and judges it: the printed verdict, or a message that names
/// the offending move's 0-based index where there is one.
fn verdict(size: usize, win: usize, text: &str) -> Result<String, String> {
    let raw: Vec<[i64; 2]> = serde_json::from_str(text)
        .map_err(|e| format!("moves must be a JSON array of [row, col] pairs of integers: {e}"))?;
    let mut moves = Vec::with_capacity(raw.len());
    for (index, [row, col]) in raw.into_iter().enumerate() {
        match (usize::try_from(row), usize::try_from(col)) {
            (Ok(r), Ok(c)) => moves.push([r, c]),
            _ => {
                return Err(format!("move {index} [{row}, {col}] is illegal: the cell is outside the board"));
            }
        }
    }
    match judge(size, win, &moves) {
        Ok(v) => Ok(v.to_string()),
        Err(JudgeError::IllegalMove { index, reason }) => {
            let [r, c] = moves[index];
            Err(format!("move {index} [{r}, {c}] is illegal: {reason}"))
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn prints_verdicts_and_names_bad_moves() {
        assert_eq!(verdict(3, 3, "[[0,0],[1,0],[0,1],[1,1],[0,2]]").unwrap(), "A");
        assert_eq!(verdict(3, 3, " [] ").unwrap(), "Pending");
        let err = verdict(3, 3, "[[0,0],[0,0]]").unwrap_err();
        assert!(err.contains("move 1") && err.contains("taken"), "{err}");
        let err = verdict(3, 3, "[[0,0],[-1,2]]").unwrap_err();
        assert!(err.contains("move 1") && err.contains("outside"), "{err}");
        assert!(verdict(3, 3, "[[0]]").unwrap_err().contains("JSON"));
        assert!(verdict(0, 0, "[]").unwrap_err().contains("size 0"));
    }
}
