//! The classic `move(row, col, player) -> 0 | 1 | 2` API, a thin wrapper over
//! the counter engine in [`crate::game`].

use crate::game::{Game, MoveError, Player, SizeError};

/// The LeetCode-style tic-tac-toe: players are numbered 1 and 2 and take turns.
///
/// ```
/// use tictactoe_protocol::TicTacToe;
/// let mut t = TicTacToe::new(3).unwrap();
/// assert_eq!(t.r#move(0, 0, 1), Ok(0)); // X
/// assert_eq!(t.r#move(0, 2, 2), Ok(0)); // O
/// assert_eq!(t.r#move(2, 2, 1), Ok(0));
/// assert_eq!(t.r#move(1, 1, 2), Ok(0));
/// assert_eq!(t.r#move(2, 0, 1), Ok(0));
/// assert_eq!(t.r#move(1, 0, 2), Ok(0)); // nobody has won yet
/// assert_eq!(t.r#move(2, 1, 1), Ok(1)); // X completes the bottom row
/// ```
#[derive(Debug, Clone)]
pub struct TicTacToe {
    game: Game,
}

impl TicTacToe {
    /// A fresh `n`×`n` game; player 1 moves first.
    pub fn new(n: usize) -> Result<TicTacToe, SizeError> {
        Ok(TicTacToe { game: Game::new(n)? })
    }

    /// Places `player`'s mark (1 or 2) at `(row, col)` and returns the winner
    /// so far: 0 for nobody, 1 or 2. A player number other than 1 or 2, or a
    /// move out of turn, is [`MoveError::NotYourTurn`].
    pub fn r#move(&mut self, row: usize, col: usize, player: u8) -> Result<u8, MoveError> {
        let player = Player::from_number(player).ok_or(MoveError::NotYourTurn)?;
        Ok(self.game.play_as(player, row, col)?.winner_number())
    }

    /// The engine underneath, for status, moves and the board.
    pub fn game(&self) -> &Game {
        &self.game
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_example_from_the_classic_problem() {
        let mut t = TicTacToe::new(3).unwrap();
        let seq = [(0, 0, 1), (0, 2, 2), (2, 2, 1), (1, 1, 2), (2, 0, 1), (1, 0, 2)];
        for (r, c, p) in seq {
            assert_eq!(t.r#move(r, c, p), Ok(0));
        }
        assert_eq!(t.r#move(2, 1, 1), Ok(1));
        assert_eq!(t.r#move(0, 1, 2), Err(MoveError::GameOver));
    }

    #[test]
    fn player_two_can_win_and_bad_players_are_refused() {
        let mut t = TicTacToe::new(2).unwrap();
        assert_eq!(t.r#move(0, 0, 2), Err(MoveError::NotYourTurn));
        assert_eq!(t.r#move(0, 0, 3), Err(MoveError::NotYourTurn));
        assert_eq!(t.r#move(0, 0, 1), Ok(0));
        assert_eq!(t.r#move(1, 0, 2), Ok(0));
        assert_eq!(t.r#move(0, 1, 1), Ok(1));
        let mut t = TicTacToe::new(3).unwrap();
        for (r, c, p) in [(0, 0, 1), (1, 0, 2), (0, 1, 1), (1, 1, 2), (2, 2, 1)] {
            assert_eq!(t.r#move(r, c, p), Ok(0));
        }
        assert_eq!(t.r#move(1, 2, 2), Ok(2));
    }
}
