//! Drawing the board and the status line as text, with or without colour.

use crossterm::style::{Color, Stylize};
use tictactoe_protocol::Player;
#[cfg(test)]
use tictactoe_protocol::Status;

use super::input::column_name;
use super::palette::Tone;
use crate::view::{Connection, View};

/// Time left under which the clock is shown as LOW TIME (and the full
/// screen rings the bell once).
pub const LOW_TIME_MS: u64 = 5_000;

/// The part of the board on screen: `rows` rows from `top`, `cols` columns
/// from `left`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First row shown.
    pub top: usize,
    /// First column shown.
    pub left: usize,
    pub rows: usize,
    pub cols: usize,
}

impl Window {
    /// The whole of an `n`×`n` board.
    pub fn whole(n: usize) -> Window {
        Window { top: 0, left: 0, rows: n, cols: n }
    }

    /// The window of `rows`×`cols` cells (at most the board's `n`) that moves
    /// as little as possible from this one to show `cell`.
    pub fn follow(self, n: usize, rows: usize, cols: usize, cell: (usize, usize)) -> Window {
        let (rows, cols) = (rows.clamp(1, n), cols.clamp(1, n));
        let fit = |start: usize, len: usize, at: usize| {
            let start = start.min(n - len);
            if at < start {
                at
            } else if at >= start + len {
                at + 1 - len
            } else {
                start
            }
        };
        Window { top: fit(self.top, rows, cell.0), left: fit(self.left, cols, cell.1), rows, cols }
    }
}

/// Columns of screen one board cell takes on an `n`×`n` board, and the
/// width of the row labels.
pub fn cell_width(n: usize) -> (usize, usize) {
    (column_name(n - 1).len() + 1, n.to_string().len())
}

/// The board as lines: column letters on top, row numbers on the left. With
/// `colour`, marks are coloured, the last move is reversed, the winning line
/// is green and the `cursor` cell is highlighted; without, the same are
/// marked with characters (`[X]`, `*`, `+`).
pub fn render(view: &View, cursor: Option<(usize, usize)>, colour: bool) -> Vec<String> {
    render_window(view, cursor, colour, Window::whole(view.game.size()))
}

/// [`render`] of the part of the board in `window`, labelled with its own
/// coordinates.
pub fn render_window(
    view: &View,
    cursor: Option<(usize, usize)>,
    colour: bool,
    window: Window,
) -> Vec<String> {
    let n = view.game.size();
    let (cell_w, label_w) = cell_width(n);
    let board = view.game.board();
    let line = view.over.and_then(|(_, _, line)| line);
    let (rows, cols) =
        (window.top..(window.top + window.rows).min(n), window.left..(window.left + window.cols).min(n));
    let last_col = cols.end.saturating_sub(1);
    let mut out = Vec::with_capacity(rows.len() + 1);
    let mut header = " ".repeat(label_w + 1);
    for c in cols.clone() {
        header.push_str(&format!("{:>cell_w$}", column_name(c)));
    }
    out.push(header);
    for (r, row) in board.iter().enumerate().skip(rows.start).take(rows.len()) {
        let mut text = format!("{:>label_w$} ", r + 1);
        for (c, mark) in row.chars().enumerate().skip(cols.start).take(cols.len()) {
            let pad = " ".repeat(cell_w - 1);
            if !colour {
                // Without colour the highlights are characters in the gap
                // before a cell: the cursor in brackets, `*` before a cell of
                // the winning run, `+` before the last move.
                let marker = if cursor == Some((r, c)) {
                    '['
                } else if c > cols.start && cursor == Some((r, c - 1)) {
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
                if c == last_col && cursor == Some((r, c)) {
                    text.push(']');
                }
                continue;
            }
            let mut cell = match mark {
                'X' => mark.to_string().with(Tone::X.colour().unwrap_or(Color::Reset)).bold(),
                'O' => mark.to_string().with(Tone::O.colour().unwrap_or(Color::Reset)).bold(),
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
    status_parts(view).into_iter().map(|(text, _)| text).collect::<Vec<_>>().join(" — ")
}

/// The status line's parts, each with its colour's meaning. The room code
/// is not among them: the screen's title line shows it, and the status line
/// stays short enough not to wrap on 80 columns.
pub fn status_parts(view: &View) -> Vec<(String, Tone)> {
    let name = |p: Player| view.names.get(usize::from(p.number() - 1)).cloned().unwrap_or_default();
    let mut parts = Vec::new();
    match view.connection {
        Connection::Connected => {}
        Connection::Reconnecting { restart: true, .. } => {
            parts.push(("SERVER RESTARTING (reconnecting…)".to_owned(), Tone::Warn))
        }
        Connection::Reconnecting { until, restart: false } => {
            let left = until.saturating_duration_since(std::time::Instant::now()).as_secs();
            parts.push((format!("RECONNECTING ({left}s left to take the seat back)"), Tone::Warn));
        }
        Connection::Lost => parts.push(("CONNECTION LOST".to_owned(), Tone::Warn)),
    }
    match view.you {
        Some(me) => {
            parts.push((format!("You are {} ({})", me.mark(), name(me)), Tone::of(me)));
            if view.names.len() == 2 {
                parts.push((format!("vs {}", name(me.other())), Tone::of(me.other())));
            }
        }
        None if view.names.len() == 2 => {
            parts.push((format!("Watching {} (X) vs {} (O)", name(Player::X), name(Player::O)), Tone::Plain));
        }
        None => {}
    }
    let n = view.game.size();
    if view.game.win() < n {
        parts.push((format!("{} in a row", view.game.win()), Tone::Plain));
    }
    if let Some(result) = view.result_line() {
        parts.push((result, Tone::Plain));
    } else if let Some(turn) = view.game.turn().filter(|_| view.names.len() == 2) {
        if Some(turn) == view.you {
            parts.push(("your turn".to_owned(), Tone::Turn));
        } else {
            parts.push((format!("{} to move", turn.mark()), Tone::of(turn)));
        }
        // On a Fischer clock the clock line shows the time once the clocks
        // run; until then each side's first move has its own time, shown here.
        let first_move = view.clocks.is_some_and(|c| c.running.is_none());
        if let Some(ms) = view.clock_ms().filter(|_| view.fischer.is_none() || first_move) {
            let paused = if view.paused.is_some() { " (clock paused)" } else { "" };
            let low = ms < LOW_TIME_MS && view.my_turn();
            let clock = format!(
                "{}{}{}.{}s{paused}",
                if low { "LOW TIME " } else { "" },
                if first_move { "first move " } else { "" },
                ms / 1000,
                (ms % 1000) / 100
            );
            parts.push((clock, if low { Tone::Warn } else { Tone::Plain }));
        }
    }
    parts
}

#[cfg(test)]
mod window_tests {
    use super::*;

    #[test]
    fn the_window_moves_as_little_as_it_can_to_show_a_cell() {
        let w = Window::whole(30).follow(30, 10, 20, (0, 0));
        assert_eq!(w, Window { top: 0, left: 0, rows: 10, cols: 20 });
        // Inside: no move. Below: the cell becomes the last row shown.
        assert_eq!(w.follow(30, 10, 20, (5, 5)), w);
        assert_eq!(w.follow(30, 10, 20, (15, 25)), Window { top: 6, left: 6, rows: 10, cols: 20 });
        // Back up: the cell becomes the first row shown.
        let down = w.follow(30, 10, 20, (29, 29));
        assert_eq!(down.follow(30, 10, 20, (3, 29)), Window { top: 3, left: 10, rows: 10, cols: 20 });
        // A board that fits is shown whole.
        assert_eq!(Window::whole(3).follow(3, 10, 20, (2, 2)), Window::whole(3));
    }
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
    fn a_window_shows_its_part_with_its_own_labels() {
        let mut v = view(12, &[(11, 11)]);
        v.last = Some((11, 11));
        let w = Window { top: 9, left: 9, rows: 3, cols: 3 };
        assert_eq!(
            render_window(&v, Some((10, 10)), false, w),
            vec!["    j k l", "10  . . .", "11  .[.].", "12  . .+X"]
        );
    }

    #[test]
    fn the_status_line_says_low_time_and_the_connection() {
        let mut v = view(3, &[]);
        v.you = Some(Player::X);
        v.names = vec!["ann".into(), "bob".into()];
        v.deadline = Some(std::time::Instant::now() + std::time::Duration::from_secs(3));
        assert!(status(&v).contains("LOW TIME 2."), "{}", status(&v));
        v.deadline = Some(std::time::Instant::now() + std::time::Duration::from_secs(20));
        assert!(!status(&v).contains("LOW TIME"));
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        v.connection = Connection::Reconnecting { until, restart: false };
        assert!(status(&v).starts_with("RECONNECTING ("), "{}", status(&v));
        v.connection = Connection::Lost;
        assert!(status(&v).starts_with("CONNECTION LOST"), "{}", status(&v));
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
        assert_eq!(status(&v), "You are O (bob) — vs ann — X to move", "the room is in the title");
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
