//! Tournaments as text: a list's rows, a tournament's heading, and its
//! standings table as Lichess shows an arena's (rank, name, score, games,
//! the streak's fire, each game's points, performance, paused).

use tictactoe_protocol::tournament::{Standing, TournamentStatus, TournamentSummary, TournamentView};

use crate::say::clean;

/// How many games' points a row shows: the latest, after `…` when there are more.
const RESULTS_SHOWN: usize = 16;

/// How the streak's mark is drawn: 🔥 on a UTF-8 terminal, `*` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marks {
    /// 🔥 (two columns wide).
    Fire,
    /// `*`, for terminals that cannot show it.
    Plain,
}

impl Marks {
    /// The marks this terminal can show, from its locale (`LC_ALL`,
    /// `LC_CTYPE`, `LANG`, the first set): 🔥 when it speaks UTF-8.
    pub fn for_terminal() -> Marks {
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .find(|v| !v.is_empty())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if locale.contains("utf-8") || locale.contains("utf8") { Marks::Fire } else { Marks::Plain }
    }

    /// The mark of a player on a streak (two columns, padded), or blanks.
    fn streak(self, on: bool) -> &'static str {
        match (on, self) {
            (false, _) => "  ",
            (true, Marks::Fire) => "🔥",
            (true, Marks::Plain) => "* ",
        }
    }
}

/// A span of time as people read it: `45s`, `2m 05s`, `1h 02m`.
pub fn span(ms: i64) -> String {
    let s = (ms.max(0) + 999) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The board as people say it: `3×3`, or `15×15, 5 in a row`.
pub fn board(size: usize, win: usize) -> String {
    if size == win { format!("{size}×{size}") } else { format!("{size}×{size}, {win} in a row") }
}

/// Where a tournament is at `now_ms` (Unix ms), with when that changes:
/// `starting in 1m 05s`, `running, ends in 45s`, `finished`. The status is
/// the server's; the times are counted on this machine's clock.
pub fn when(t: &TournamentSummary, now_ms: i64) -> String {
    match t.status {
        TournamentStatus::Starting => format!("starting in {}", span(t.starts_at - now_ms)),
        TournamentStatus::Running => format!("running, ends in {}", span(t.ends_at - now_ms)),
        TournamentStatus::Finished => "finished".to_owned(),
    }
}

/// The `ttt tournament list` table: one tournament a line, in columns.
pub fn list(tournaments: &[TournamentSummary], now_ms: i64) -> String {
    if tournaments.is_empty() {
        return "no tournaments starting, running or recently finished\n".to_owned();
    }
    let rows: Vec<[String; 6]> = tournaments
        .iter()
        .map(|t| {
            [
                clean(&t.id),
                clean(&t.name),
                board(t.size, t.win),
                t.clock.to_string(),
                t.players.to_string(),
                when(t, now_ms),
            ]
        })
        .collect();
    let header = ["id", "name", "board", "clock", "players", "status"].map(str::to_owned);
    columns(&header, &rows)
}

/// `rows` under `header`, each column as wide as its widest cell, two
/// spaces between; the last column is not padded.
fn columns<const N: usize>(header: &[String; N], rows: &[[String; N]]) -> String {
    let mut widths = header.each_ref().map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header).chain(rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, w))| if i + 1 == N { cell.clone() } else { pad(cell, w) })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `text` padded with spaces to `width` columns.
fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(text.chars().count())))
}

/// A tournament's heading: its name, board and clock, and where it is at `now_ms`.
pub fn heading(t: &TournamentSummary, now_ms: i64) -> String {
    format!(
        "{} — {}, {} — {} — {} player{}",
        clean(&t.name),
        board(t.size, t.win),
        t.clock,
        when(t, now_ms),
        t.players,
        if t.players == 1 { "" } else { "s" }
    )
}

/// The standings as lines: a header, then a row per player (rank, name
/// with the streak's mark, score, games, each game's points, performance,
/// paused); `you` (a name, any case) is marked with `>`.
pub fn standings(view: &TournamentView, you: Option<&str>, marks: Marks) -> Vec<String> {
    let names: Vec<String> = view.standings.iter().map(|s| clean(&s.name)).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(4);
    let mut lines = vec![format!("    #  {}     score  games  perf  results", pad("name", width))];
    for (s, name) in view.standings.iter().zip(&names) {
        let me = you.is_some_and(|y| y.to_lowercase() == s.name.to_lowercase());
        let perf = s.performance.map_or("-".to_owned(), |p| p.to_string());
        let mut row = format!(
            "{} {:>3}  {} {}  {:>5}  {:>5}  {:>4}  {}",
            if me { ">" } else { " " },
            s.rank,
            pad(name, width),
            marks.streak(s.streak),
            s.score,
            s.games,
            perf,
            results(s)
        );
        if s.paused {
            row.push_str("  (paused)");
        }
        lines.push(row.trim_end().to_owned());
    }
    if view.standings.is_empty() {
        lines.push("    nobody has joined yet".to_owned());
    }
    lines
}

/// Each counted game's points in the order played (`2 2 4 0`), the latest
/// [`RESULTS_SHOWN`] when there are more.
fn results(s: &Standing) -> String {
    let skip = s.results.len().saturating_sub(RESULTS_SHOWN);
    let shown: Vec<String> = s.results[skip..].iter().map(u32::to_string).collect();
    format!("{}{}", if skip > 0 { "… " } else { "" }, shown.join(" "))
}

/// `name`'s row of the standings (any case), if they joined.
pub fn standing_of<'a>(view: &'a TournamentView, name: &str) -> Option<&'a Standing> {
    view.standings.iter().find(|s| s.name.to_lowercase() == name.to_lowercase())
}

/// One line of where `name` stands: `rank 2 of 8, score 9 🔥` (or that
/// they have not played yet).
pub fn standing_line(view: &TournamentView, name: &str, marks: Marks) -> String {
    let of = view.standings.len();
    match standing_of(view, name) {
        Some(s) => {
            let streak = if s.streak { format!(" {}", marks.streak(true).trim_end()) } else { String::new() };
            format!("rank {} of {of}, score {}{streak}", s.rank, s.score)
        }
        None => format!("not in the standings yet ({of} players)"),
    }
}

#[cfg(test)]
mod tests;
