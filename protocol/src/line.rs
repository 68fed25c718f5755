//! A winning run of marks: its direction, which line of the board it lies on,
//! and its cells.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The direction of a winning run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Along a row, left to right.
    Row,
    /// Along a column, top to bottom.
    Col,
    /// Down and to the right.
    Diag,
    /// Down and to the left.
    AntiDiag,
}

impl LineKind {
    /// Every kind, in the order that names a move's line when it completes
    /// several at once.
    pub const ALL: [LineKind; 4] = [LineKind::Row, LineKind::Col, LineKind::Diag, LineKind::AntiDiag];

    /// One step along the run, as (rows, columns), in the order of its cells.
    pub fn step(self) -> (isize, isize) {
        match self {
            LineKind::Row => (0, 1),
            LineKind::Col => (1, 0),
            LineKind::Diag => (1, 1),
            LineKind::AntiDiag => (1, -1),
        }
    }
}

/// A winning run: `len` cells from `start` one [`LineKind::step`] apart. On
/// the wire it is `{"kind", "index", "cells"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "LineWire", try_from = "LineWire")]
pub struct Line {
    /// Row, column, diagonal or anti-diagonal.
    pub kind: LineKind,
    /// Which line of its kind: the row or the column number; for a diagonal
    /// `col - row` (`row + col` for an anti-diagonal) when the win length is
    /// shorter than the board, and 0 when a whole diagonal wins.
    pub index: i64,
    /// Its first cell, `[row, col]`: the leftmost, or the topmost.
    pub start: [u16; 2],
    /// How many cells it has (the win length or more).
    pub len: u16,
}

impl Line {
    /// The run's cells in order: left to right, or top to bottom.
    pub fn cells(&self) -> impl Iterator<Item = [u16; 2]> + use<> {
        let (dr, dc) = self.kind.step();
        let [r, c] = self.start;
        (0..self.len as isize).map(move |i| [(r as isize + i * dr) as u16, (c as isize + i * dc) as u16])
    }

    /// The run of `len` cells along `kind` through `(row, col)` that starts
    /// `back` cells behind it, indexed by the connect-k rule.
    pub(crate) fn through(kind: LineKind, row: usize, col: usize, back: usize, len: u16) -> Line {
        let index = match kind {
            LineKind::Row => row as i64,
            LineKind::Col => col as i64,
            LineKind::Diag => col as i64 - row as i64,
            LineKind::AntiDiag => (row + col) as i64,
        };
        let (dr, dc) = kind.step();
        let start = [row as isize - back as isize * dr, col as isize - back as isize * dc];
        Line { kind, index, start: [start[0] as u16, start[1] as u16], len }
    }

    /// Whether `(row, col)` is one of its cells.
    pub fn contains(&self, row: usize, col: usize) -> bool {
        self.cells().any(|[r, c]| usize::from(r) == row && usize::from(c) == col)
    }
}

/// The wire form of a [`Line`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(
    title = "Line",
    description = "A winning run: its direction, which line it lies on, and its cells."
)]
pub struct LineWire {
    /// `row`, `col`, `diag` (down-right) or `anti_diag` (down-left).
    pub kind: LineKind,
    /// The row or column number; `col - row` for `diag` and `row + col` for
    /// `anti_diag` when `win` < `size`; 0 for a whole diagonal.
    pub index: i64,
    /// The run's `[row, col]` cells through the winning move, in order: left
    /// to right, or top to bottom.
    pub cells: Vec<[u16; 2]>,
}

impl From<Line> for LineWire {
    fn from(l: Line) -> LineWire {
        LineWire { kind: l.kind, index: l.index, cells: l.cells().collect() }
    }
}

impl TryFrom<LineWire> for Line {
    type Error = String;

    fn try_from(w: LineWire) -> Result<Line, String> {
        let start = *w.cells.first().ok_or("a line has at least one cell")?;
        let len = u16::try_from(w.cells.len()).map_err(|_| "too many cells".to_owned())?;
        let line = Line { kind: w.kind, index: w.index, start, len };
        if line.cells().eq(w.cells.iter().copied()) {
            Ok(line)
        } else {
            Err("a line's cells are consecutive along its kind".into())
        }
    }
}

impl JsonSchema for Line {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Line".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        LineWire::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_run_left_to_right_or_top_to_bottom_and_round_trip() {
        let anti = Line { kind: LineKind::AntiDiag, index: 6, start: [1, 5], len: 3 };
        assert_eq!(anti.cells().collect::<Vec<_>>(), [[1, 5], [2, 4], [3, 3]]);
        assert!(anti.contains(2, 4) && !anti.contains(2, 5));
        let json = serde_json::to_value(anti).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "anti_diag", "index": 6, "cells": [[1, 5], [2, 4], [3, 3]]})
        );
        assert_eq!(serde_json::from_value::<Line>(json).unwrap(), anti);
        let broken = serde_json::json!({"kind": "row", "index": 0, "cells": [[0, 0], [0, 2]]});
        assert!(serde_json::from_value::<Line>(broken).is_err());
    }
}
