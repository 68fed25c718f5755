//! The judge: replay a move list and say who won.

use crate::game::{Game, MoveError, Player, SizeError, Status};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The outcome of a replayed move list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// Player 1 (`X`) completed a line.
    A,
    /// Player 2 (`O`) completed a line.
    B,
    /// The board is full and nobody won.
    Draw,
    /// The game is not over yet.
    Pending,
}

impl Verdict {
    /// The verdict for an engine status.
    pub fn from_status(status: Status) -> Verdict {
        match status {
            Status::Won { winner: Player::X, .. } => Verdict::A,
            Status::Won { winner: Player::O, .. } => Verdict::B,
            Status::Draw => Verdict::Draw,
            Status::InProgress { .. } => Verdict::Pending,
        }
    }

    /// The protocol's `winner` number this verdict stands for (0 for a draw or
    /// pending game).
    pub fn winner_number(self) -> u8 {
        match self {
            Verdict::A => 1,
            Verdict::B => 2,
            Verdict::Draw | Verdict::Pending => 0,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::A => "A",
            Verdict::B => "B",
            Verdict::Draw => "Draw",
            Verdict::Pending => "Pending",
        })
    }
}

/// Why a move list is not a legal game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum JudgeError {
    /// The board size itself is invalid.
    #[error(transparent)]
    Size(#[from] SizeError),
    /// Move `index` (0-based) is illegal for `reason`.
    #[error("move {index} is illegal: {reason}")]
    IllegalMove {
        /// 0-based index of the offending move in the list.
        index: usize,
        /// Out of bounds, occupied, or played after the game was won.
        reason: MoveError,
    },
}

/// Replays `moves` (`[row, col]`, players alternating, player 1 first) on a
/// `size`×`size` board won by `win` in a row (`win` = `size`: a whole line)
/// and returns the verdict, or the first illegal move.
pub fn judge(size: usize, win: usize, moves: &[[usize; 2]]) -> Result<Verdict, JudgeError> {
    let mut game = Game::with_win(size, win)?;
    for (index, &[row, col]) in moves.iter().enumerate() {
        game.play(row, col).map_err(|reason| JudgeError::IllegalMove { index, reason })?;
    }
    Ok(Verdict::from_status(game.status()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(judge(3, 3, &[]), Ok(Verdict::Pending));
        assert_eq!(judge(3, 3, &[[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]]), Ok(Verdict::A));
        assert_eq!(judge(3, 3, &[[0, 0], [1, 0], [0, 1], [1, 1], [2, 2], [1, 2]]), Ok(Verdict::B));
        let draw = [[0, 0], [0, 1], [0, 2], [1, 1], [1, 0], [1, 2], [2, 1], [2, 0], [2, 2]];
        assert_eq!(judge(3, 3, &draw), Ok(Verdict::Draw));
    }

    #[test]
    fn illegal_lists_name_the_move() {
        let err = |index, reason| Err(JudgeError::IllegalMove { index, reason });
        assert_eq!(judge(3, 3, &[[0, 0], [3, 1]]), err(1, MoveError::OutOfBounds));
        assert_eq!(judge(3, 3, &[[0, 0], [1, 1], [0, 0]]), err(2, MoveError::Occupied));
        let after_win = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [2, 2]];
        assert_eq!(judge(3, 3, &after_win), err(5, MoveError::GameOver));
        assert!(matches!(judge(0, 0, &[]), Err(JudgeError::Size(_))));
    }
}
