//! Full-screen play in a terminal: arrow keys and Enter, or type a cell; the
//! board redrawn on every event and the clock ticking down.

use std::io::{Write, stdout};
use std::time::{Duration, Instant};

use crossterm::event::{Event as Term, EventStream, KeyEventKind};
use crossterm::{cursor, execute, queue, terminal};
use futures::StreamExt;
use tokio::signal::unix::{SignalKind, signal};

use tictactoe_protocol::{ClientMessage, ServerMessage};

mod state;

use super::board::{LOW_TIME_MS, Window, cell_width, render_window, status, status_parts};
use super::clocks::clock_line;
use super::input::column_name;
use crate::net::{Event, Link};
use crate::request::Start;
use crate::say::clean;
use crate::session::{self, TakingBack};
use crate::ui::PlayError;
use crate::view::View;
use state::{Do, GAME_WAS_OVER, Screen};

/// Why the terminal cannot be used full-screen.
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    /// Raw mode could not be set.
    #[error("cannot use the terminal: {0}")]
    Raw(std::io::Error),
    /// SIGTERM or SIGHUP cannot be caught (to restore the terminal).
    #[error("cannot watch signals: {0}")]
    Signals(std::io::Error),
}

/// Raw mode and the alternate screen while alive; restored on drop, also on
/// errors and panics.
struct TerminalGuard;

impl TerminalGuard {
    fn new() -> Result<Self, TerminalError> {
        terminal::enable_raw_mode().map_err(TerminalError::Raw)?;
        let _ = execute!(stdout(), terminal::EnterAlternateScreen, cursor::Hide);
        Ok(TerminalGuard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = execute!(stdout(), cursor::Show, terminal::LeaveAlternateScreen);
        let _ = terminal::disable_raw_mode();
    }
}

/// Screen lines that are not board rows: title, blank, column letters,
/// blank, status, note, prompt, help, and the line the last newline opens.
const CHROME_ROWS: usize = 9;

/// Runs a game (or a watch) full-screen until the player quits; `name` is
/// who to be on a new connection if this one is lost, `start` what was asked
/// for. With `resumed`, the link is taking back a seat kept from an earlier
/// run; if that game is over, it is shown from its record, or `start` is
/// asked for instead. A challenge waits for its answer first, and ends the
/// session if it is not accepted.
pub async fn run(
    mut link: Link,
    name: &str,
    start: &Start,
    resumed: Option<TakingBack>,
) -> Result<Option<String>, PlayError> {
    let _guard = TerminalGuard::new()?;
    let mut keys = EventStream::new();
    let mut s = Screen::new(start, resumed);
    if let Start::Tournament(id) = start {
        s.in_tournament(id, name);
    }
    // SIGTERM and SIGHUP end the session like `q`: the terminal is restored.
    let mut term = signal(SignalKind::terminate()).map_err(TerminalError::Signals)?;
    let mut hangup = signal(SignalKind::hangup()).map_err(TerminalError::Signals)?;
    // Often enough for a clock's tenths; a frame that has not changed is not redrawn.
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut shown: Vec<String> = Vec::new();
    let mut ticked = false;
    loop {
        s.view.set_connection(s.connection(link.reconnecting(), link.restarting()));
        let window = s.fit();
        s.cue();
        let lines = frame(&s, window);
        if !ticked || lines != shown {
            paint(&lines);
        }
        let _ = stdout().flush();
        shown = lines;
        ticked = false;
        let todo = tokio::select! {
            event = link.next(), if !s.lost => s.on_link(event, &link.limits, &link.servers()),
            key = keys.next() => match key {
                Some(Ok(Term::Key(key))) if key.kind != KeyEventKind::Release => {
                    let action = s.on_key(key);
                    s.act(action)
                }
                Some(Ok(_)) => Do::Wait,
                Some(Err(_)) | None => Do::End(Ok(s.view.result_line())),
            },
            _ = term.recv() => Do::End(Ok(s.view.result_line())),
            _ = hangup.recv() => Do::End(Ok(s.view.result_line())),
            _ = tick.tick() => {
                ticked = true;
                s.tournament_tick(Instant::now())
            }
        };
        match todo {
            Do::Wait => {}
            Do::Send(request) => {
                if s.sent(link.send(request.clone()).await)? {
                    s.after_send(&request);
                }
            }
            Do::Fallback(request) => fall_back(&mut link, &mut s, request).await?,
            Do::Ended(game_id) => {
                let record = crate::api::game_record(&link.servers(), &game_id).await;
                if let Do::Fallback(request) = s.ended(record, name) {
                    fall_back(&mut link, &mut s, request).await?;
                }
            }
            Do::NewConnection(rules) => {
                link = session::open(&link.servers(), name, &Start::Quick(rules)).await?;
                s.reconnected();
            }
            Do::Quit => {
                if s.in_game() {
                    resign_and_wait(&mut link, &mut s.view).await;
                }
                if let Some(t) = &s.tournament {
                    let _ = link.send(ClientMessage::TournamentLeave { tournament: t.id.clone() }).await;
                }
                let _ = link.send(ClientMessage::Leave {}).await;
                return Ok(s.view.result_line());
            }
            Do::End(result) => return result,
        }
    }
}

/// The seat kept on disk is gone: asks for `request` instead (if
/// anything), and says so.
async fn fall_back(link: &mut Link, s: &mut Screen, request: Option<ClientMessage>) -> Result<(), PlayError> {
    if let Some(request) = request {
        s.sent(link.send(request).await)?;
    }
    s.view.note = GAME_WAS_OVER.into();
    Ok(())
}

/// How long leaving mid-game waits for the server to confirm the resignation.
const RESIGN_WAIT: Duration = Duration::from_secs(3);

/// Resigns the game in progress and waits (a little) for its `game_over`,
/// so that the player leaving is told the result; if none comes, the
/// result is written from what was done.
async fn resign_and_wait(link: &mut Link, view: &mut View) {
    if link.send(ClientMessage::Resign {}).await.is_ok() {
        let wait = async {
            loop {
                match link.next().await {
                    Event::Msg(msg @ ServerMessage::GameOver { .. }) => return view.apply(&msg),
                    Event::Msg(msg) => view.apply(&msg),
                    Event::Closed(_) => return,
                    Event::Down { .. } | Event::Resumed => {}
                }
            }
        };
        let _ = tokio::time::timeout(RESIGN_WAIT, wait).await;
    }
    if view.over.is_none() {
        let winner = view.you.map(tictactoe_protocol::Player::other);
        view.over = Some((winner, tictactoe_protocol::EndReason::Resign, None));
    }
}

impl Screen {
    /// Your turn rings the bell and says so in the terminal's title; the
    /// clock running low rings once more.
    fn cue(&mut self) {
        let mine = !self.watch && self.view.my_turn();
        let mut out = stdout();
        if mine != self.cued {
            let title = if mine { "ttt — your move" } else { "ttt" };
            let _ = queue!(out, terminal::SetTitle(title));
            if mine {
                let _ = queue!(out, crossterm::style::Print("\u{7}"));
            }
            self.cued = mine;
            self.warned = false;
        }
        let low = match (self.view.you, self.view.clocks.is_some_and(|c| c.running.is_some())) {
            (Some(me), true) => super::clocks::low(&self.view, me, Instant::now()),
            _ => self.view.clock_ms().is_some_and(|ms| ms < LOW_TIME_MS),
        };
        if mine && !self.warned && low {
            let _ = queue!(out, crossterm::style::Print("\u{7}"));
            self.warned = true;
        }
    }

    /// The part of the board that fits the terminal, moved as little as
    /// possible to show the last move and the cursor; `None` when not even a
    /// 3×3 corner fits.
    fn fit(&mut self) -> Option<Window> {
        let (width, height) = terminal::size().map_or((80, 24), |(w, h)| (usize::from(w), usize::from(h)));
        let n = self.view.game.size();
        let (cell_w, label_w) = cell_width(n);
        // Lines longer than the terminal wrap, and take board rows.
        let wrapped = |text: &str| text.chars().count().saturating_sub(1) / width.max(1);
        // The status line is cut to the width (see `fit_line`); the note wraps.
        let long = wrapped(&self.view.note) + wrapped(self.help());
        let rows = height.saturating_sub(chrome_rows(&self.view) + long);
        // One more column for the closing bracket of the monochrome cursor.
        let cols = width.saturating_sub(label_w + 2) / cell_w;
        if rows < n.min(3) || cols < n.min(3) {
            return None;
        }
        let mut window = self.window;
        if let Some(last) = self.view.last {
            window = window.follow(n, rows, cols, last);
        }
        self.window = window.follow(n, rows, cols, self.cursor);
        Some(self.window)
    }
}

/// Screen lines that are not board rows: [`CHROME_ROWS`], and the clock
/// line of a game on a Fischer clock.
fn chrome_rows(view: &View) -> usize {
    CHROME_ROWS + usize::from(view.fischer.is_some() && view.clocks.is_some())
}

/// `text` cut to `width` columns (with `…`), so that it never wraps.
fn fit_line(text: &str, width: usize) -> String {
    let text = clean(text);
    if text.chars().count() <= width {
        return text;
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The status line cut to `width`; with `colour`, each part in its
/// colour's meaning (when it is not cut).
fn status_line(view: &View, width: usize, colour: bool) -> String {
    let parts = status_parts(view);
    let plain = fit_line(&status(view), width);
    if !colour || plain.ends_with('…') {
        return plain;
    }
    let coloured: Vec<String> = parts.iter().map(|(text, tone)| tone.paint(&clean(text))).collect();
    coloured.join(" — ")
}

/// Clears the screen and writes `lines` from the top.
fn paint(lines: &[String]) {
    let mut out = stdout();
    let _ = queue!(out, terminal::Clear(terminal::ClearType::All), cursor::MoveTo(0, 0));
    let _ = write!(out, "{}", lines.join("\r\n"));
}

/// The screen's lines: the title, the part of the board in `window`, the
/// clock line (on a Fischer clock), status, note, prompt and help; or what
/// to do when no window fits.
fn frame(s: &Screen, window: Option<Window>) -> Vec<String> {
    let n = s.view.game.size();
    let Some(window) = window else {
        let (cell_w, label_w) = cell_width(n);
        let need = (label_w + 2 + 3 * cell_w, chrome_rows(&s.view) + 3);
        return vec![format!(
            "The terminal is too small for this board: make it at least {} columns by {} rows. (q: quit)",
            need.0, need.1
        )];
    };
    let (width, height) = terminal::size().map_or((80, 24), |(w, h)| (usize::from(w), usize::from(h)));
    if s.between_games() {
        return between_games(s, width, height);
    }
    let mut title = match (s.tournament_title(), &s.view.room) {
        (Some(t), _) => format!("tictactoe — {t}"),
        (None, Some(room)) => format!("tictactoe — room {}", clean(room)),
        (None, None) => "tictactoe".to_owned(),
    };
    if window.rows < n || window.cols < n {
        let (r, c) = (window.top, window.left);
        title.push_str(&format!(
            " — showing rows {}–{}, columns {}–{} of {n}×{n}",
            r + 1,
            r + window.rows,
            column_name(c),
            column_name(c + window.cols - 1)
        ));
    }
    let mut lines = vec![fit_line(&title, width), String::new()];
    let cursor = (!s.watch && s.view.over.is_none()).then_some(s.cursor);
    // NO_COLOR (https://no-color.org): the highlights become characters.
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    lines.extend(render_window(&s.view, cursor, colour, window));
    lines.push(String::new());
    lines.extend(clock_line(&s.view, Instant::now(), colour));
    lines.push(status_line(&s.view, width, colour));
    lines.push(clean(&s.view.note));
    lines.push(format!("> {}", s.typed));
    lines.push(s.help().to_owned());
    // The last newline, as every line had one.
    lines.push(String::new());
    lines
}

/// The screen between a tournament's games: the last game's result, the
/// standings, the note and the keys, cut to the terminal.
fn between_games(s: &Screen, width: usize, height: usize) -> Vec<String> {
    let mut lines = vec![fit_line("tictactoe — arena tournament", width), String::new()];
    if let Some(result) = s.view.result_line() {
        lines.push(fit_line(&result, width));
    }
    // The title, the note, the prompt and the keys stay on screen.
    let rows = height.saturating_sub(lines.len() + 5);
    lines.extend(s.standings_lines(rows).iter().map(|l| fit_line(l, width)));
    lines.push(String::new());
    lines.push(fit_line(&s.view.note, width));
    lines.push(s.help().to_owned());
    lines.push(String::new());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_to_the_width_and_keep_no_control_characters() {
        assert_eq!(fit_line("short", 80), "short");
        assert_eq!(fit_line("abcdefghij", 5), "abcd…");
        assert_eq!(fit_line("a\u{1b}]0;x\u{7}b", 80), "a]0;xb");
    }
}
