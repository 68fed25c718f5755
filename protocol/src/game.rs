//! The engine: an n×n board won by `win` marks in a row, decided in O(1)
//! per move.
//!
//! With `win` = n (the classic rule) each row, column and the two diagonals
//! keep a signed counter: `X` adds one, `O` subtracts one. A line is won
//! exactly when its counter reaches `±n`, since it holds at most `n` marks.
//! With a shorter `win` (connect-k), the `bitlines` module finds the run
//! through a move in each direction's bit plane when `win` ≤ 29, and
//! the `runs` module keeps run lengths at their ends for longer wins.
//! Occupancy is one bit per cell; the marks themselves are recovered from the
//! move list when a whole board is wanted.

use thiserror::Error;

use crate::bitlines::{self, BitLines};
pub use crate::line::{Line, LineKind};
pub use crate::player::{Outcome, Player, mark, winner};
use crate::runs::Runs;

/// Where a game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not over; `turn` is to move.
    InProgress {
        /// The player to move next.
        turn: Player,
    },
    /// `winner` holds the whole `line`.
    Won {
        /// Who won.
        winner: Player,
        /// The line they completed.
        line: Line,
    },
    /// The board is full and nobody won.
    Draw,
}

impl Status {
    /// True once the game is won or drawn.
    pub fn is_over(self) -> bool {
        !matches!(self, Status::InProgress { .. })
    }

    /// The classic result number: 0 for no winner (yet), 1 or 2 for the winner.
    pub fn winner_number(self) -> u8 {
        match self {
            Status::Won { winner, .. } => winner.number(),
            _ => 0,
        }
    }
}

/// Why a move was refused. A refused move changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum MoveError {
    /// The row or column is not on the board.
    #[error("the cell is outside the board")]
    OutOfBounds,
    /// Somebody already holds that cell.
    #[error("the cell is already taken")]
    Occupied,
    /// The named player is not the one to move.
    #[error("it is not that player's turn")]
    NotYourTurn,
    /// The game is already won or drawn.
    #[error("the game is already over")]
    GameOver,
}

/// Why a game could not be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SizeError {
    /// Sizes run from 1 to [`Game::MAX_SIZE`].
    #[error("board size {0} is not in 1..={max}", max = Game::MAX_SIZE)]
    OutOfRange(usize),
    /// A win length runs from `min(3, size)` to `size`.
    #[error("win length {win} is not in {}..={size} on a board of {size}", Game::min_win(*size))]
    Win {
        /// The win length asked for.
        win: usize,
        /// The board size.
        size: usize,
    },
}

/// How a game decides a win: the classic counters, or for a shorter win
/// length bit planes or run lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Connect {
    /// `win` = `size`: the counters on [`Game`] itself.
    WholeLine,
    /// `win` < `size` and `win` ≤ [`bitlines::MAX_WIN`].
    Bits(Box<BitLines>),
    /// `win` < `size`, longer wins.
    Runs(Box<Runs>),
}

impl Connect {
    /// The representation for the rule: bit planes for wins up to
    /// `bits_max` (tests lower it to reach the runs on small boards).
    fn new(size: usize, win: usize, bits_max: usize) -> Connect {
        if win == size {
            Connect::WholeLine
        } else if win <= bits_max {
            Connect::Bits(Box::new(BitLines::new(size, win)))
        } else {
            // MAX_SIZE keeps `win` within u16.
            Connect::Runs(Box::new(Runs::new(size, win as u16)))
        }
    }
}

/// One n×n game with its counters (or connect-k bit planes or run lengths),
/// occupancy bits and move list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    size: usize,
    win: usize,
    /// How a win shorter than the board is found.
    connect: Connect,
    rows: Vec<i32>,
    cols: Vec<i32>,
    diag: i32,
    anti: i32,
    occupied: Vec<u64>,
    moves: Vec<[u16; 2]>,
    status: Status,
}

impl Default for Game {
    /// A fresh 3×3 game.
    fn default() -> Self {
        Game::new(3).unwrap_or_else(|_| unreachable!("3 is a valid size"))
    }
}

impl Game {
    /// The largest board the engine accepts (its occupancy is 2 MiB of bits).
    pub const MAX_SIZE: usize = 4096;

    /// A fresh game on a `size`×`size` board won by a whole line, `X` to move.
    pub fn new(size: usize) -> Result<Game, SizeError> {
        Game::with_win(size, size)
    }

    /// The shortest win length a board of `size` allows: `min(3, size)`.
    pub fn min_win(size: usize) -> usize {
        size.min(3)
    }

    /// The win lengths a board of `size` allows, from [`Game::min_win`] up
    /// to a whole line: the one check of a win length, for the engine, the
    /// server's requests and the client's command line alike.
    pub fn win_lengths(size: usize) -> std::ops::RangeInclusive<usize> {
        Game::min_win(size)..=size
    }

    /// A fresh game on a `size`×`size` board won by `win` marks in a row
    /// (horizontal, vertical or any diagonal), `X` to move.
    pub fn with_win(size: usize, win: usize) -> Result<Game, SizeError> {
        Game::with_engine(size, win, bitlines::MAX_WIN)
    }

    /// Whether [`Game::with_win`] takes `size` and `win`: the one check,
    /// shared with [`crate::OpenLines::new`].
    pub(crate) fn check_rules(size: usize, win: usize) -> Result<(), SizeError> {
        if size == 0 || size > Self::MAX_SIZE {
            return Err(SizeError::OutOfRange(size));
        }
        if !Game::win_lengths(size).contains(&win) {
            return Err(SizeError::Win { win, size });
        }
        Ok(())
    }

    /// [`Game::with_win`] with bit planes for wins up to `bits_max` only.
    fn with_engine(size: usize, win: usize, bits_max: usize) -> Result<Game, SizeError> {
        Game::check_rules(size, win)?;
        Ok(Game {
            size,
            win,
            connect: Connect::new(size, win, bits_max),
            rows: vec![0; size],
            cols: vec![0; size],
            diag: 0,
            anti: 0,
            occupied: vec![0; (size * size).div_ceil(64)],
            moves: Vec::new(),
            status: Status::InProgress { turn: Player::X },
        })
    }

    /// The board's side length.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many marks in a row win.
    pub fn win(&self) -> usize {
        self.win
    }

    /// Where the game stands.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The player to move, or `None` once the game is over.
    pub fn turn(&self) -> Option<Player> {
        match self.status {
            Status::InProgress { turn } => Some(turn),
            _ => None,
        }
    }

    /// Every accepted move as `[row, col]`, in play order.
    pub fn moves(&self) -> &[[u16; 2]] {
        &self.moves
    }

    /// Whether `(row, col)` holds a mark; `false` off the board.
    pub fn is_occupied(&self, row: usize, col: usize) -> bool {
        row < self.size && col < self.size && self.bit(row * self.size + col)
    }

    /// Plays `(row, col)` for whoever is to move.
    pub fn play(&mut self, row: usize, col: usize) -> Result<Status, MoveError> {
        let player = self.turn().ok_or(MoveError::GameOver)?;
        self.play_as(player, row, col)
    }

    /// Plays `(row, col)` for `player`, refusing it if it is not their turn.
    /// Checks run in the order: game over, turn, bounds, occupancy.
    pub fn play_as(&mut self, player: Player, row: usize, col: usize) -> Result<Status, MoveError> {
        let turn = self.turn().ok_or(MoveError::GameOver)?;
        if turn != player {
            return Err(MoveError::NotYourTurn);
        }
        let n = self.size;
        if row >= n || col >= n {
            return Err(MoveError::OutOfBounds);
        }
        let cell = row * n + col;
        if self.bit(cell) {
            return Err(MoveError::Occupied);
        }
        self.occupied[cell / 64] |= 1 << (cell % 64);
        // MAX_SIZE keeps both coordinates below u16::MAX.
        self.moves.push([row as u16, col as u16]);

        let line = match &mut self.connect {
            Connect::Bits(bits) => bits.play(player, row, col),
            Connect::Runs(runs) => runs.play(player, row, col),
            Connect::WholeLine => self.count(player, row, col),
        };
        let status = match line {
            Some(line) => Status::Won { winner: player, line },
            None if self.moves.len() == n * n => Status::Draw,
            None => Status::InProgress { turn: player.other() },
        };
        // Returned from the local, not read back from `self`: a wide load of
        // what was just stored piecewise stalls on store forwarding.
        self.status = status;
        Ok(status)
    }

    /// The classic rule: counts the move on its row, column and diagonals;
    /// returns the first of them it completes.
    fn count(&mut self, player: Player, row: usize, col: usize) -> Option<Line> {
        let n = self.size;
        let d = player.delta();
        let full = n as i32 * d;
        let whole = |kind, index, start: [usize; 2]| Line {
            kind,
            index,
            start: [start[0] as u16, start[1] as u16],
            len: n as u16,
        };
        self.rows[row] += d;
        self.cols[col] += d;
        let mut line = None;
        if self.rows[row] == full {
            line = Some(whole(LineKind::Row, row as i64, [row, 0]));
        } else if self.cols[col] == full {
            line = Some(whole(LineKind::Col, col as i64, [0, col]));
        }
        if row == col {
            self.diag += d;
            if line.is_none() && self.diag == full {
                line = Some(whole(LineKind::Diag, 0, [0, 0]));
            }
        }
        if row + col == n - 1 {
            self.anti += d;
            if line.is_none() && self.anti == full {
                line = Some(whole(LineKind::AntiDiag, 0, [0, n - 1]));
            }
        }
        line
    }

    /// Takes back the last move, if any, and returns it. O(1).
    pub fn undo(&mut self) -> Option<[u16; 2]> {
        let last = self.moves.pop()?;
        let (row, col) = (usize::from(last[0]), usize::from(last[1]));
        let player = Player::for_move(self.moves.len());
        let n = self.size;
        match &mut self.connect {
            Connect::Bits(bits) => bits.undo(player, row, col),
            Connect::Runs(runs) => runs.undo(player, row, col),
            Connect::WholeLine => {
                let d = player.delta();
                self.rows[row] -= d;
                self.cols[col] -= d;
                if row == col {
                    self.diag -= d;
                }
                if row + col == n - 1 {
                    self.anti -= d;
                }
            }
        }
        let cell = row * n + col;
        self.occupied[cell / 64] &= !(1 << (cell % 64));
        self.status = Status::InProgress { turn: player };
        Some(last)
    }

    /// The board as rows of `X`, `O` and `.`, rebuilt from the move list: O(n²),
    /// for display and snapshots, never on the per-move path.
    pub fn board(&self) -> Vec<String> {
        let n = self.size;
        let mut cells = vec![b'.'; n * n];
        for (i, [r, c]) in self.moves.iter().enumerate() {
            cells[usize::from(*r) * n + usize::from(*c)] = Player::for_move(i).mark() as u8;
        }
        cells.chunks(n).map(|row| row.iter().map(|&b| char::from(b)).collect()).collect()
    }

    fn bit(&self, cell: usize) -> bool {
        self.occupied[cell / 64] & (1 << (cell % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Board;
    use proptest::prelude::{Just, Strategy, prop_assert, prop_assert_eq};

    fn play_all(size: usize, moves: &[(usize, usize)]) -> Game {
        let mut g = Game::new(size).unwrap();
        for &(r, c) in moves {
            g.play(r, c).unwrap();
        }
        g
    }

    #[test]
    fn size_zero_and_too_large_are_errors() {
        assert_eq!(Game::new(0), Err(SizeError::OutOfRange(0)));
        assert!(Game::new(Game::MAX_SIZE + 1).is_err());
        assert!(Game::new(1000).is_ok());
    }

    #[test]
    fn size_one_first_move_wins() {
        let mut g = Game::new(1).unwrap();
        let s = g.play(0, 0).unwrap();
        let line = Line { kind: LineKind::Row, index: 0, start: [0, 0], len: 1 };
        assert_eq!(s, Status::Won { winner: Player::X, line });
    }

    #[test]
    fn each_kind_of_line_wins() {
        let cases = [
            (vec![(1, 0), (0, 0), (1, 1), (0, 1), (1, 2)], LineKind::Row, 1, [1, 0]),
            (vec![(0, 2), (0, 0), (1, 2), (0, 1), (2, 2)], LineKind::Col, 2, [0, 2]),
            (vec![(0, 0), (0, 1), (1, 1), (0, 2), (2, 2)], LineKind::Diag, 0, [0, 0]),
            (vec![(0, 2), (0, 0), (1, 1), (0, 1), (2, 0)], LineKind::AntiDiag, 0, [0, 2]),
        ];
        for (moves, kind, index, start) in cases {
            let g = play_all(3, &moves);
            assert_eq!(
                g.status(),
                Status::Won { winner: Player::X, line: Line { kind, index, start, len: 3 } }
            );
        }
    }

    #[test]
    fn full_board_without_line_is_draw() {
        let g = play_all(3, &[(0, 0), (0, 1), (0, 2), (1, 1), (1, 0), (1, 2), (2, 1), (2, 0), (2, 2)]);
        assert_eq!(g.status(), Status::Draw);
        assert_eq!(g.board(), vec!["XOX", "XOO", "OXX"]);
    }

    #[test]
    fn refused_moves_change_nothing() {
        let mut g = play_all(3, &[(0, 0)]);
        let before = g.clone();
        assert_eq!(g.play(3, 0), Err(MoveError::OutOfBounds));
        assert_eq!(g.play(0, 0), Err(MoveError::Occupied));
        assert_eq!(g.play_as(Player::X, 1, 1), Err(MoveError::NotYourTurn));
        assert_eq!(g, before);
        let mut won = play_all(3, &[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]);
        let before = won.clone();
        assert_eq!(won.play(2, 2), Err(MoveError::GameOver));
        assert_eq!(won, before);
    }

    #[test]
    fn undo_restores_the_previous_game() {
        let mut g = play_all(3, &[(0, 0), (1, 0), (0, 1), (1, 1)]);
        let before = g.clone();
        g.play(0, 2).unwrap();
        assert!(g.status().is_over());
        assert_eq!(g.undo(), Some([0, 2]));
        assert_eq!(g, before);
        assert_eq!(Game::new(2).unwrap().undo(), None);
    }

    #[test]
    fn connect_k_joins_runs_from_both_sides_on_any_diagonal() {
        // 7×7, four in a row: X builds the anti-diagonal 3+4=7 as (1,6) (2,5)
        // then (4,3), and joins them with (3,4); O plays along the bottom.
        let mut g = Game::with_win(7, 4).unwrap();
        for (r, c) in [(1, 6), (6, 0), (2, 5), (6, 1), (4, 3), (6, 2)] {
            assert!(!g.play(r, c).unwrap().is_over());
        }
        let line = Line { kind: LineKind::AntiDiag, index: 7, start: [1, 6], len: 4 };
        assert_eq!(g.play(3, 4), Ok(Status::Won { winner: Player::X, line }));
        assert_eq!(line.cells().collect::<Vec<_>>(), [[1, 6], [2, 5], [3, 4], [4, 3]]);
        // An off-centre diagonal (col - row = -2), won by O.
        let mut g = Game::with_win(6, 3).unwrap();
        for (r, c) in [(0, 0), (2, 0), (0, 1), (3, 1), (5, 5), (4, 2)] {
            g.play(r, c).unwrap();
        }
        let line = Line { kind: LineKind::Diag, index: -2, start: [2, 0], len: 3 };
        assert_eq!(g.status(), Status::Won { winner: Player::O, line });
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The run lengths decide what the bit planes decide on every board
        /// the bit planes take, and take moves back as exactly.
        #[test]
        fn runs_match_the_reference_board(
            (n, win, cells) in (4..=12usize).prop_flat_map(|n| {
                (Just(n), Game::min_win(n)..n, Just((0..n * n).collect::<Vec<_>>()).prop_shuffle())
            })
        ) {
            let mut game = Game::with_engine(n, win, 0).unwrap();
            prop_assert!(matches!(game.connect, Connect::Runs(_)));
            let mut board = Board::new(n, win);
            let mut states = vec![game.clone()];
            for cell in cells {
                if game.status().is_over() {
                    break;
                }
                let (r, c) = (cell / n, cell % n);
                prop_assert_eq!(game.play(r, c).unwrap(), board.play(r, c).unwrap());
                states.push(game.clone());
            }
            while game.undo().is_some() {
                states.pop();
                prop_assert_eq!(&game, states.last().unwrap());
            }
        }
    }

    #[test]
    fn win_lengths_run_from_three_to_the_size() {
        assert_eq!(Game::with_win(15, 2), Err(SizeError::Win { win: 2, size: 15 }));
        assert_eq!(Game::with_win(15, 16), Err(SizeError::Win { win: 16, size: 15 }));
        assert!(Game::with_win(2, 2).is_ok() && Game::with_win(1, 1).is_ok());
        assert_eq!(Game::with_win(15, 5).unwrap().win(), 5);
        assert_eq!(Game::new(4).unwrap().win(), 4);
    }
}
