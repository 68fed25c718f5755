//! The counter engine: an n×n board decided in O(1) per move.
//!
//! Each row, column and the two diagonals keep a signed counter: `X` adds one,
//! `O` subtracts one. A line is won exactly when its counter reaches `±n`, since
//! it holds at most `n` marks. Occupancy is one bit per cell; the marks
//! themselves are recovered from the move list when a whole board is wanted.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One of the two seats, and its mark. `X` is player 1 and always moves
/// first. On the wire a player is its number, 1 or 2 (a `mark` field says
/// `"X"` or `"O"` through [`mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Player {
    /// Player 1, moves first.
    X,
    /// Player 2.
    O,
}

impl Player {
    /// The protocol's number for this player: 1 for `X`, 2 for `O`.
    pub fn number(self) -> u8 {
        match self {
            Player::X => 1,
            Player::O => 2,
        }
    }

    /// The player with protocol number 1 or 2; `None` for anything else.
    pub fn from_number(n: u8) -> Option<Player> {
        match n {
            1 => Some(Player::X),
            2 => Some(Player::O),
            _ => None,
        }
    }

    /// The other seat.
    pub fn other(self) -> Player {
        match self {
            Player::X => Player::O,
            Player::O => Player::X,
        }
    }

    /// The mark drawn for this player: `'X'` or `'O'`.
    pub fn mark(self) -> char {
        match self {
            Player::X => 'X',
            Player::O => 'O',
        }
    }

    /// The player who makes move `index` (0-based) of a game.
    pub fn for_move(index: usize) -> Player {
        if index % 2 == 0 { Player::X } else { Player::O }
    }

    fn delta(self) -> i32 {
        match self {
            Player::X => 1,
            Player::O => -1,
        }
    }
}

impl Serialize for Player {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.number())
    }
}

impl<'de> Deserialize<'de> for Player {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Player, D::Error> {
        let n = u8::deserialize(d)?;
        Player::from_number(n).ok_or_else(|| serde::de::Error::custom(format!("player {n} is not 1 or 2")))
    }
}

impl JsonSchema for Player {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Player".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "enum": [1, 2]})
    }
}

/// A player as its mark, `"X"` or `"O"`: `#[serde(with = "mark")]`.
pub mod mark {
    use super::Player;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `"X"` or `"O"`.
    pub fn serialize<S: Serializer>(p: &Player, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if *p == Player::X { "X" } else { "O" })
    }

    /// Reads `"X"` or `"O"`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Player, D::Error> {
        match <&str>::deserialize(d)? {
            "X" => Ok(Player::X),
            "O" => Ok(Player::O),
            other => Err(serde::de::Error::custom(format!("mark {other:?} is not X or O"))),
        }
    }

    /// The schema of a mark.
    pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "enum": ["X", "O"]})
    }
}

/// A game's winner as the classic number, 0 for none, 1 or 2:
/// `#[serde(with = "winner")]` on an `Option<Player>`.
pub mod winner {
    use super::Player;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes 0, 1 or 2.
    pub fn serialize<S: Serializer>(w: &Option<Player>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(w.map_or(0, Player::number))
    }

    /// Reads 0, 1 or 2.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Player>, D::Error> {
        match u8::deserialize(d)? {
            0 => Ok(None),
            n => Player::from_number(n)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom(format!("winner {n} is not 0, 1 or 2"))),
        }
    }

    /// The schema of a winner.
    pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "enum": [0, 1, 2]})
    }
}

/// How a finished game came out, for the players: the shape of shakmaty's
/// `Outcome`. A game can also end with no outcome at all (a shutdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `winner` won (by a line, or because the other resigned, timed out or left).
    Decisive {
        /// Who won.
        winner: Player,
    },
    /// Nobody won: the board filled up.
    Draw,
}

impl Outcome {
    /// The winner, if there is one.
    pub fn winner(self) -> Option<Player> {
        match self {
            Outcome::Decisive { winner } => Some(winner),
            Outcome::Draw => None,
        }
    }
}

/// Which kind of line won a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// A whole row; the line's index is the row number.
    Row,
    /// A whole column; the line's index is the column number.
    Col,
    /// The main diagonal, top-left to bottom-right; index 0.
    Diag,
    /// The anti-diagonal, top-right to bottom-left; index 0.
    AntiDiag,
}

/// A winning line: its kind and its row or column number (0 for diagonals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// Row, column, diagonal or anti-diagonal.
    pub kind: LineKind,
    /// The row or column number; 0 for the diagonals.
    pub index: usize,
}

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
}

/// One n×n game with its counters, occupancy bits and move list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    size: usize,
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

    /// A fresh game on a `size`×`size` board, `X` to move.
    pub fn new(size: usize) -> Result<Game, SizeError> {
        if size == 0 || size > Self::MAX_SIZE {
            return Err(SizeError::OutOfRange(size));
        }
        Ok(Game {
            size,
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

        let d = player.delta();
        let full = n as i32 * d;
        self.rows[row] += d;
        self.cols[col] += d;
        let mut line = None;
        if self.rows[row] == full {
            line = Some(Line { kind: LineKind::Row, index: row });
        } else if self.cols[col] == full {
            line = Some(Line { kind: LineKind::Col, index: col });
        }
        if row == col {
            self.diag += d;
            if line.is_none() && self.diag == full {
                line = Some(Line { kind: LineKind::Diag, index: 0 });
            }
        }
        if row + col == n - 1 {
            self.anti += d;
            if line.is_none() && self.anti == full {
                line = Some(Line { kind: LineKind::AntiDiag, index: 0 });
            }
        }
        self.status = match line {
            Some(line) => Status::Won { winner: player, line },
            None if self.moves.len() == n * n => Status::Draw,
            None => Status::InProgress { turn: player.other() },
        };
        Ok(self.status)
    }

    /// Takes back the last move, if any, and returns it. O(1).
    pub fn undo(&mut self) -> Option<[u16; 2]> {
        let last = self.moves.pop()?;
        let (row, col) = (usize::from(last[0]), usize::from(last[1]));
        let player = Player::for_move(self.moves.len());
        let d = player.delta();
        let n = self.size;
        self.rows[row] -= d;
        self.cols[col] -= d;
        if row == col {
            self.diag -= d;
        }
        if row + col == n - 1 {
            self.anti -= d;
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
        assert_eq!(s, Status::Won { winner: Player::X, line: Line { kind: LineKind::Row, index: 0 } });
    }

    #[test]
    fn each_kind_of_line_wins() {
        let cases = [
            (vec![(1, 0), (0, 0), (1, 1), (0, 1), (1, 2)], LineKind::Row, 1),
            (vec![(0, 2), (0, 0), (1, 2), (0, 1), (2, 2)], LineKind::Col, 2),
            (vec![(0, 0), (0, 1), (1, 1), (0, 2), (2, 2)], LineKind::Diag, 0),
            (vec![(0, 2), (0, 0), (1, 1), (0, 1), (2, 0)], LineKind::AntiDiag, 0),
        ];
        for (moves, kind, index) in cases {
            let g = play_all(3, &moves);
            assert_eq!(g.status(), Status::Won { winner: Player::X, line: Line { kind, index } });
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
}
