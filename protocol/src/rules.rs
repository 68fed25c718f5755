//! The terms of a game: board size, win length and time control, which
//! rooms, queues and records key on (ratings key on the board alone: see
//! [`Rules::pool`]); and the one check of the board a client asks for,
//! shared by the WebSocket requests and the HTTP API.

use std::ops::RangeInclusive;

use crate::{ErrorCode, Fischer, Game, MoveError, Status};

/// The terms of a room's games: the board's size, how many in a row win,
/// and the clock (quick match pairs only equal terms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Rules {
    /// The board's side length.
    pub size: usize,
    /// Marks in a row that win: `min(3, size)..=size`.
    pub win: usize,
    /// A Fischer clock; `None`: the server's per-move timer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Fischer>,
}

impl Rules {
    /// The classic rule on a `size` board: a whole line wins, per-move timer.
    pub fn classic(size: usize) -> Rules {
        Rules { size, win: size, clock: None }
    }

    /// The rating pool these terms play in: the board alone, whatever the
    /// clock (ratings are per size and win).
    pub fn pool(self) -> Rules {
        Rules { clock: None, ..self }
    }

    /// An opening played out on this board (`create_room`'s `opening`, an
    /// arena's openings): its moves, or the refusal naming the move by its
    /// index from 0 — off the board, on a taken cell, completing a line, or
    /// filling the board (an opening leaves the game open and a move to play).
    pub fn opening(self, moves: &[[i64; 2]]) -> Result<Vec<[u16; 2]>, String> {
        let mut game = Game::with_win(self.size, self.win).map_err(|e| e.to_string())?;
        let n = self.size;
        for (i, &[row, col]) in moves.iter().enumerate() {
            let at = format!("opening move {i} ([{row}, {col}])");
            let played = match (usize::try_from(row), usize::try_from(col)) {
                (Ok(r), Ok(c)) => game.play(r, c),
                _ => Err(MoveError::OutOfBounds),
            };
            match played {
                Ok(Status::InProgress { .. }) => {}
                Ok(Status::Won { .. }) => {
                    return Err(format!("{at} completes a line: an opening leaves the game open"));
                }
                Ok(Status::Draw) => {
                    return Err(format!("{at} fills the board: an opening leaves a move to play"));
                }
                Err(MoveError::OutOfBounds) => return Err(format!("{at} is off the {n}x{n} board")),
                Err(_) => return Err(format!("{at} is on a taken cell")),
            }
        }
        Ok(game.moves().to_vec())
    }

    /// The same board with `clock`.
    pub fn with_clock(self, clock: Option<Fischer>) -> Rules {
        Rules { clock, ..self }
    }

    /// The rules a client asks for: `size` (3 when absent) within `sizes`
    /// (the server's `--min-size..=--max-size`), `win` (`size` when absent)
    /// within `Game::win_lengths(size)`. A refusal carries its code
    /// (`invalid_size` or `invalid_win`) and words a person can act on.
    pub fn checked(
        size: Option<i64>,
        win: Option<i64>,
        sizes: RangeInclusive<usize>,
    ) -> Result<Rules, (ErrorCode, String)> {
        let size = size.map_or(Ok(3), usize::try_from).ok().filter(|s| sizes.contains(s));
        let Some(size) = size else {
            let text = format!("size must be from {} to {}", sizes.start(), sizes.end());
            return Err((ErrorCode::InvalidSize, text));
        };
        let least = Game::min_win(size);
        match win.map_or(Ok(size), usize::try_from) {
            Ok(win) if Game::win_lengths(size).contains(&win) => Ok(Rules { size, win, clock: None }),
            _ if least == size => Err((
                ErrorCode::InvalidWin,
                format!("a {size}x{size} board is only won by a whole line: leave win out, or send {size}"),
            )),
            _ => Err((
                ErrorCode::InvalidWin,
                format!(
                    "on a {size}x{size} board, win is how many in a row win: from {least} to {size} \
                     (leave it out for a whole line)"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_wins_are_checked_against_the_range_and_the_board() {
        let ok = |s, w| Rules::checked(s, w, 2..=100).map_err(|e| e.0);
        assert_eq!(ok(None, None), Ok(Rules::classic(3)));
        assert_eq!(ok(Some(15), Some(5)), Ok(Rules { clock: None, size: 15, win: 5 }));
        assert_eq!(ok(Some(2), None), Ok(Rules::classic(2)));
        assert_eq!(ok(Some(100), Some(3)), Ok(Rules { clock: None, size: 100, win: 3 }));
        for size in [0, 1, 101, -1, i64::MAX, i64::MIN] {
            assert_eq!(ok(Some(size), None), Err(ErrorCode::InvalidSize), "{size}");
        }
        for (size, win) in [(3, 2), (3, 4), (15, 2), (15, 16), (15, -5), (15, i64::MAX), (2, 3), (2, 1)] {
            assert_eq!(ok(Some(size), Some(win)), Err(ErrorCode::InvalidWin), "{size}/{win}");
        }
        let (_, text) = Rules::checked(Some(7), None, 2..=6).unwrap_err();
        assert_eq!(text, "size must be from 2 to 6");
    }
}
