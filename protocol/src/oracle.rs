//! A slow reference engine for tests and fuzzing: a plain grid of marks,
//! decided after each move by walking the board from the move in each
//! direction. O(win) per move and O(n²) memory, with nothing shared with
//! [`crate::Game`]'s counters and runs, so that the two can check each other.

use crate::game::{MoveError, Status};
use crate::line::{Line, LineKind};
use crate::player::Player;

/// A board of marks and the rules that decide it.
#[derive(Debug, Clone)]
pub struct Board {
    size: usize,
    win: usize,
    cells: Vec<Option<Player>>,
    played: usize,
    status: Status,
}

impl Board {
    /// An empty `size`×`size` board won by `win` in a row.
    pub fn new(size: usize, win: usize) -> Board {
        Board {
            size,
            win,
            cells: vec![None; size * size],
            played: 0,
            status: Status::InProgress { turn: Player::X },
        }
    }

    /// Where the game stands.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Plays `(row, col)` for whoever is to move.
    pub fn play(&mut self, row: usize, col: usize) -> Result<Status, MoveError> {
        let Status::InProgress { turn } = self.status else {
            return Err(MoveError::GameOver);
        };
        let n = self.size;
        if row >= n || col >= n {
            return Err(MoveError::OutOfBounds);
        }
        if self.cells[row * n + col].is_some() {
            return Err(MoveError::Occupied);
        }
        self.cells[row * n + col] = Some(turn);
        self.played += 1;
        self.status = match LineKind::ALL.into_iter().find_map(|kind| self.run(turn, row, col, kind)) {
            Some(line) => Status::Won { winner: turn, line },
            None if self.played == n * n => Status::Draw,
            None => Status::InProgress { turn: turn.other() },
        };
        Ok(self.status)
    }

    /// The whole run of `who`'s marks through `(row, col)` along `kind`, if
    /// it is `win` or longer.
    fn run(&self, who: Player, row: usize, col: usize, kind: LineKind) -> Option<Line> {
        let (dr, dc) = kind.step();
        let holds = |r: isize, c: isize| {
            r >= 0
                && c >= 0
                && (r as usize) < self.size
                && (c as usize) < self.size
                && self.cells[r as usize * self.size + c as usize] == Some(who)
        };
        let (r0, c0) = (row as isize, col as isize);
        let mut back = 0;
        while holds(r0 - (back + 1) * dr, c0 - (back + 1) * dc) {
            back += 1;
        }
        let mut ahead = 0;
        while holds(r0 + (ahead + 1) * dr, c0 + (ahead + 1) * dc) {
            ahead += 1;
        }
        let len = (back + 1 + ahead) as usize;
        if len < self.win {
            return None;
        }
        let start = [(r0 - back * dr) as u16, (c0 - back * dc) as u16];
        let whole = self.win == self.size;
        let index = match kind {
            LineKind::Row => row as i64,
            LineKind::Col => col as i64,
            LineKind::Diag if whole => 0,
            LineKind::AntiDiag if whole => 0,
            LineKind::Diag => col as i64 - row as i64,
            LineKind::AntiDiag => (row + col) as i64,
        };
        Some(Line { kind, index, start, len: len as u16 })
    }
}
