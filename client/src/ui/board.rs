//! Drawing the board and the status line as text, with or without colour.

use crossterm::style::Stylize;
use tictactoe_protocol::Player;
#[cfg(test)]
use tictactoe_protocol::Status;

use super::input::column_name;
use crate::view::{Connection, View};

/// The board as lines: column letters on top, row numbers on the left. With
/// `colour`, marks are coloured, the last move is reversed, the winning line
/// is green and the `cursor` cell is highlighted; without, the same are
/// marked with characters (`[X]`, `*`, `+`).
pub fn render(view: &View, cursor: Option<(usize, usize)>, colour: bool) -> Vec<String> {
    let n = view.game.size();
    let cell_w = column_name(n - 1).len() + 1;
    let label_w = n.to_string().len();
    let board = view.game.board();
    let line = view.over.and_then(|(_, _, line)| line);
    let mut out = Vec::with_capacity(n + 1);
    let mut header = " ".repeat(label_w + 1);
    for c in 0..n {
        header.push_str(&format!("{:>cell_w$}", column_name(c)));
    }
    out.push(header);
    for (r, row) in board.iter().enumerate() {
        let mut text = format!("{:>label_w$} ", r + 1);
        for (c, mark) in row.chars().enumerate() {
            let pad = " ".repeat(cell_w - 1);
            if !colour {
                // Without colour the highlights are characters in the gap
                // before a cell: the cursor in brackets, `*` before a cell of
                // the winning run, `+` before the last move.
                let marker = if cursor == Some((r, c)) {
                    '['
                } else if c > 0 && cursor == Some((r, c - 1)) {
                    ']'
                } else if line.is_some_and(|l| l.contains(r, c)) {
                    '*'
                } else if view.last == Some((r, c)) {
                    '+'
                } else {
                    ' '
                };
                text.push_str(&pad[1..]);
                text.push(marker);
                text.push(mark);
                if c + 1 == n && cursor == Some((r, c)) {
                    text.push(']');
                }
                continue;
            }
            let mut cell = match mark {
                'X' => mark.to_string().red().bold(),
                'O' => mark.to_string().blue().bold(),
                _ => "·".to_string().dark_grey(),
            };
            if line.is_some_and(|l| l.contains(r, c)) {
                cell = cell.on_green();
            } else if view.last == Some((r, c)) {
                cell = cell.reverse();
            }
            if cursor == Some((r, c)) {
                cell = cell.on_yellow();
            }
            text.push_str(&pad);
            text.push_str(&cell.to_string());
        }
        out.push(text);
    }
    out
}

/// The status line: who we are, whose turn, the opponent, the clock.
pub fn status(view: &View) -> String {
    let name = |p: Player| view.names.get(usize::from(p.number() - 1)).cloned().unwrap_or_default();
    let mut parts = Vec::new();
    match view.connection {
        Connection::Connected => {}
        Connection::Reconnecting { until } => {
            let left = until.saturating_duration_since(std::time::Instant::now()).as_secs();
            parts.push(format!("RECONNECTING ({left}s left to take the seat back)"));
        }
        Connection::Lost => parts.push("CONNECTION LOST".to_owned()),
    }
    match view.you {
        Some(me) => {
            parts.push(format!("You are {} ({})", me.mark(), name(me)));
            if view.names.len() == 2 {
                parts.push(format!("vs {}", name(me.other())));
            }
        }
        None if view.names.len() == 2 => {
            parts.push(format!("Watching {} (X) vs {} (O)", name(Player::X), name(Player::O)));
        }
        None => {}
    }
    let n = view.game.size();
    if view.game.win() < n {
        parts.push(format!("{} in a row", view.game.win()));
    }
    if let Some(result) = view.result_line() {
        parts.push(result);
    } else if let Some(turn) = view.game.turn().filter(|_| view.names.len() == 2) {
        let whose =
            if Some(turn) == view.you { "your turn".to_owned() } else { format!("{} to move", turn.mark()) };
        parts.push(whose);
        if let Some(ms) = view.clock_ms() {
            let paused = if view.paused.is_some() { " (clock paused)" } else { "" };
            parts.push(format!("{}.{}s{paused}", ms / 1000, (ms % 1000) / 100));
        }
    }
    if let Some(room) = &view.room {
        parts.push(format!("room {room}"));
    }
    parts.join(" — ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tictactoe_protocol::{EndReason, Game, Line, LineKind};

    fn view(size: usize, moves: &[(usize, usize)]) -> View {
        view_k(size, size, moves)
    }

    fn view_k(size: usize, win: usize, moves: &[(usize, usize)]) -> View {
        let mut v = View::new(size, win);
        v.game = Game::with_win(size, win).unwrap();
        for &(r, c) in moves {
            v.game.play(r, c).unwrap();
        }
        v
    }

    #[test]
    fn three_by_three_plain() {
        let v = view(3, &[(1, 1), (0, 0), (2, 2)]);
        assert_eq!(render(&v, None, false), vec!["   a b c", "1  O . .", "2  . X .", "3  . . X"]);
    }

    #[test]
    fn two_by_two_and_ten_by_ten() {
        assert_eq!(render(&view(2, &[(0, 1)]), None, false), vec!["   a b", "1  . X", "2  . ."]);
        let big = render(&view(10, &[(9, 9)]), None, false);
        assert_eq!(big.len(), 11);
        assert_eq!(big[0], "    a b c d e f g h i j");
        assert_eq!(big[1], " 1  . . . . . . . . . .");
        assert_eq!(big[10], "10  . . . . . . . . . X");
    }

    #[test]
    fn colour_marks_the_winning_line_and_cursor() {
        let mut v = view(3, &[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]);
        let row = Line { kind: LineKind::Row, index: 0, start: [0, 0], len: 3 };
        v.over = Some((Some(Player::X), EndReason::Line, Some(row)));
        let lines = render(&v, Some((2, 2)), true);
        assert!(lines[1].contains("\u{1b}["), "escape codes in colour mode");
        assert_ne!(lines[1], lines[2]);
        assert!(render(&v, None, false).iter().all(|l| !l.contains('\u{1b}')));
    }

    #[test]
    fn without_colour_the_cursor_the_run_and_the_last_move_are_characters() {
        let mut v = view(3, &[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]);
        v.last = Some((0, 2));
        assert_eq!(render(&v, Some((1, 1)), false), vec!["   a b c", "1  X X+X", "2  O[O].", "3  . . ."]);
        let Status::Won { line, .. } = v.game.status() else { panic!("X has won") };
        v.over = Some((Some(Player::X), EndReason::Line, Some(line)));
        assert_eq!(render(&v, Some((2, 2)), false), vec!["   a b c", "1 *X*X*X", "2  O O .", "3  . .[.]"]);
    }

    #[test]
    fn status_says_whose_turn() {
        let mut v = view(3, &[]);
        v.you = Some(Player::O);
        v.names = vec!["ann".into(), "bob".into()];
        v.room = Some("ROOM".into());
        assert_eq!(status(&v), "You are O (bob) — vs ann — X to move — room ROOM");
        v.game.play(0, 0).unwrap();
        assert!(status(&v).contains("your turn"));
        v.over = Some((Some(Player::O), EndReason::Resign, None));
        assert!(status(&v).contains("Result: You won — your opponent resigned"));
    }

    #[test]
    fn connect_k_says_the_rule_and_marks_the_run_cell_by_cell() {
        // X wins the anti-diagonal (0,4) (1,3) (2,2) on a 5×5 board, three in a row.
        let mut v = view_k(5, 3, &[(0, 4), (4, 4), (1, 3), (4, 0), (2, 2)]);
        assert!(status(&v).starts_with("3 in a row"), "{}", status(&v));
        let Status::Won { line, .. } = v.game.status() else { panic!("X has won") };
        v.over = Some((Some(Player::X), EndReason::Line, Some(line)));
        let lines = render(&v, None, true);
        // Rows 1 to 3 hold a highlighted cell; rows 4 and 5 do not.
        for (row, text) in lines.iter().enumerate().skip(1) {
            assert_eq!(text.contains("\u{1b}[48;5;10m"), row <= 3, "row {row}: {text:?}");
        }
    }
}
