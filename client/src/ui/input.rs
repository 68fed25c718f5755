//! Reading a cell as a person types it: `b2` (column letter, row number as
//! drawn on the board) or `2 3` (row and column numbers, both from 1).

/// The name of column `col` as drawn: `a`…`z`, then `aa`, `ab`, ….
pub fn column_name(col: usize) -> String {
    let mut n = col + 1;
    let mut name = Vec::new();
    while n > 0 {
        n -= 1;
        name.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    name.reverse();
    String::from_utf8(name).unwrap_or_default()
}

/// A cell's name as drawn, e.g. `b2` for row 1, column 1 (0-based).
pub fn cell_name(row: usize, col: usize) -> String {
    format!("{}{}", column_name(col), row + 1)
}

/// Why typed text is not a cell; `text` is what was typed, trimmed and lower-cased.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CellError {
    /// `R C` with a row that is not a number.
    #[error("{text:?}: row must be a number")]
    Row {
        /// What was typed.
        text: String,
    },
    /// `R C` with a column that is not a number.
    #[error("{text:?}: column must be a number")]
    Column {
        /// What was typed.
        text: String,
    },
    /// Neither `b2` nor `R C`.
    #[error("{text:?}: type a cell like b2, or a row and column like 2 2")]
    Unreadable {
        /// What was typed.
        text: String,
    },
    /// A row number beyond any board.
    #[error("{text:?}: row number too large")]
    RowTooLarge {
        /// What was typed.
        text: String,
    },
    /// A cell outside this board.
    #[error("{text:?} is off the board: cells run from a1 to {last}")]
    OffBoard {
        /// What was typed.
        text: String,
        /// The board's last cell, by name.
        last: String,
    },
}

/// Parses `b2` or `2 2` into a 0-based `(row, col)` on a `size` board.
pub fn parse_cell(text: &str, size: usize) -> Result<(usize, usize), CellError> {
    let text = text.trim().to_ascii_lowercase();
    let (row, col) = if let Some((r, c)) = text.split_once([' ', ',']) {
        let Ok(r) = r.trim().parse::<usize>() else { return Err(CellError::Row { text }) };
        let Ok(c) = c.trim().parse::<usize>() else { return Err(CellError::Column { text }) };
        (r, c)
    } else {
        let letters: String = text.chars().take_while(char::is_ascii_lowercase).collect();
        let digits = &text[letters.len()..];
        if letters.is_empty() || digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return Err(CellError::Unreadable { text });
        }
        let col = letters
            .bytes()
            .fold(0usize, |acc, b| acc.saturating_mul(26).saturating_add(usize::from(b - b'a') + 1));
        let Ok(row) = digits.parse::<usize>() else { return Err(CellError::RowTooLarge { text }) };
        (row, col)
    };
    if row == 0 || col == 0 || row > size || col > size {
        return Err(CellError::OffBoard { text, last: cell_name(size - 1, size - 1) });
    }
    Ok((row - 1, col - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letter_and_number() {
        assert_eq!(parse_cell("b2", 3), Ok((1, 1)));
        assert_eq!(parse_cell(" A1 ", 3), Ok((0, 0)));
        assert_eq!(parse_cell("c3", 3), Ok((2, 2)));
        assert_eq!(parse_cell("j10", 10), Ok((9, 9)));
        assert_eq!(parse_cell("aa27", 30), Ok((26, 26)));
    }

    #[test]
    fn row_and_column_numbers() {
        assert_eq!(parse_cell("1 1", 3), Ok((0, 0)));
        assert_eq!(parse_cell("2 3", 3), Ok((1, 2)));
        assert_eq!(parse_cell("3,1", 3), Ok((2, 0)));
    }

    #[test]
    fn junk_and_out_of_range() {
        for bad in ["", "zz", "b", "2", "x y", "b2b", "🙂"] {
            assert!(parse_cell(bad, 3).is_err(), "{bad}");
        }
        for off in ["d1", "a4", "a0", "0 1", "4 4"] {
            assert!(matches!(parse_cell(off, 3), Err(CellError::OffBoard { .. })), "{off}");
        }
    }

    #[test]
    fn errors_say_what_they_always_said() {
        let said = |text: &str| parse_cell(text, 3).map_err(|e| e.to_string()).err();
        assert_eq!(said("x 1").as_deref(), Some("\"x 1\": row must be a number"));
        assert_eq!(said("1 y").as_deref(), Some("\"1 y\": column must be a number"));
        assert_eq!(said("B"), Some("\"b\": type a cell like b2, or a row and column like 2 2".into()));
        assert_eq!(
            said("a99999999999999999999999").as_deref(),
            Some("\"a99999999999999999999999\": row number too large")
        );
        assert_eq!(said("d1").as_deref(), Some("\"d1\" is off the board: cells run from a1 to c3"));
    }

    #[test]
    fn column_names() {
        assert_eq!(column_name(0), "a");
        assert_eq!(column_name(25), "z");
        assert_eq!(column_name(26), "aa");
        assert_eq!(cell_name(1, 1), "b2");
    }
}
