//! Full-screen play in a terminal: arrow keys and Enter, or type a cell; the
//! board redrawn on every event and the clock ticking down.

use std::io::{Write, stdout};
use std::time::Duration;

use crossterm::event::{Event as Term, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, queue, terminal};
use futures::StreamExt;
use tokio::signal::unix::{SignalKind, signal};

use tictactoe_protocol::{ClientMessage, ErrorCode, ServerMessage};

use super::board::{Window, cell_width, render_window, status, status_parts};
use super::input::{column_name, parse_cell};
use crate::error::Error;
use crate::net::{Event, Link, NOT_CONNECTED, SendError};
use crate::say::clean;
use crate::session::{self, Rules, Start, challenge_over, fatal};
use crate::view::{Connection, View};

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

/// Screen state besides the game: cursor, typed text.
struct Screen {
    view: View,
    cursor: (usize, usize),
    typed: String,
    watch: bool,
    /// Leaving was asked for mid-game: the next `y` (or a second Ctrl-C) resigns.
    confirming: bool,
    /// Ctrl-R asked to resign and stay: the next `y` resigns.
    resigning: bool,
    /// The connection is gone for good: only `n` (a new connection) or `q`.
    lost: bool,
    /// Taking back a seat kept on disk: what to ask for if it is gone.
    fallback: Option<Start>,
    /// The part of the board on screen, for boards bigger than the terminal.
    window: Window,
    /// It was our turn at the last draw (the cue is given once per turn).
    cued: bool,
    /// The low-time warning was given this turn.
    warned: bool,
}

/// Time left under which the clock is shown as LOW TIME and the bell rings once.
pub const LOW_TIME_MS: u64 = 5_000;

/// Screen lines that are not board rows: title, blank, column letters,
/// blank, status, note, prompt, help, and the line the last newline opens.
const CHROME_ROWS: usize = 9;

/// What a key asks for.
enum Action {
    None,
    Move(usize, usize),
    Rematch,
    /// A new quick match on a board of the same size.
    NewMatch,
    /// Accept the open challenge with this id.
    Accept(String),
    /// Decline the open challenge with this id.
    Decline(String),
    /// Concede the game and stay in the room (a rematch stays possible).
    Resign,
    Quit,
}

/// Runs a game (or a watch) full-screen until the player quits; `name` is
/// who to be on a new connection if this one is lost, `start` what was asked
/// for. With `resumed`, the link is taking back a seat kept from an earlier
/// run; if that game is over, `start` is asked for instead. A challenge
/// waits for its answer first, and ends the session if it is not accepted.
pub async fn run(mut link: Link, name: &str, start: &Start, resumed: bool) -> Result<Option<String>, Error> {
    let watch = matches!(start, Start::Watch(_));
    let challenging = matches!(start, Start::Challenge(..));
    let fallback = resumed.then(|| start.clone());
    let _guard = TerminalGuard::new()?;
    let mut keys = EventStream::new();
    let mut s = Screen {
        view: View::default(),
        cursor: (0, 0),
        typed: String::new(),
        watch,
        confirming: false,
        resigning: false,
        lost: false,
        fallback,
        window: Window::whole(0),
        cued: false,
        warned: false,
    };
    if s.fallback.is_some() {
        s.view.note = "taking back your seat in the game you were playing…".into();
    }
    // SIGTERM and SIGHUP end the session like `q`: the terminal is restored.
    let mut term = signal(SignalKind::terminate()).map_err(TerminalError::Signals)?;
    let mut hangup = signal(SignalKind::hangup()).map_err(TerminalError::Signals)?;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    loop {
        let connection = match (s.lost, link.reconnecting()) {
            (true, _) => Connection::Lost,
            (false, Some(until)) => Connection::Reconnecting { until, restart: link.restarting() },
            (false, None) => Connection::Connected,
        };
        s.view.set_connection(connection);
        let window = s.fit();
        s.cue();
        draw(&s, window);
        tokio::select! {
            event = link.next(), if !s.lost => match event {
                Event::Msg(msg) => {
                    if let Some(why) = fatal(&msg, start, &link.limits) {
                        return Err(Error::Refused(why));
                    }
                    if let Some(why) = challenging.then(|| challenge_over(&msg, s.view.you.is_some())).flatten() {
                        return Err(Error::Refused(why));
                    }
                    let mut took_back = false;
                    if let Some(start) = s.fallback.take() {
                        if matches!(msg, ServerMessage::Error { code: ErrorCode::InvalidToken, .. }) {
                            if let Some(request) = session::request(&start) {
                                let sent = link.send(request).await;
                                s.sent(sent)?;
                            }
                            s.view.note = "the game you were playing is over (it ended while you were away); starting a new one".into();
                            continue;
                        }
                        took_back = matches!(msg, ServerMessage::State { .. });
                        if !took_back {
                            s.fallback = Some(start);
                        }
                    }
                    s.view.apply(&msg);
                    if let ServerMessage::RoomCreated { room, .. } = &msg {
                        s.view.note = format!("room {room} is open; your friend joins with: {}", link.join_command(room));
                    }
                    if let ServerMessage::GameStarted { size, .. } | ServerMessage::State { size, .. } = msg {
                        s.cursor = (size / 2, size / 2);
                    }
                    if took_back {
                        s.view.note = "took your seat back: the game goes on".into();
                    }
                    if s.watch && matches!(msg, ServerMessage::RoomClosed { .. }) {
                        return Ok(Some(s.view.note.clone()));
                    }
                }
                // The status line follows the link at the top of the loop.
                Event::Down { .. } => {}
                Event::Resumed => s.view.set_connection(Connection::Connected),
                Event::Closed(why) => {
                    if s.view.over.is_some() && !s.watch {
                        return Ok(s.view.result_line());
                    }
                    if s.watch || s.view.you.is_none() {
                        return Err(Error::Closed(why));
                    }
                    // Mid-game: say what became of the game, and stay for `n` or `q`.
                    s.view.seat_lost(&why);
                    s.lost = true;
                    s.view.note = "n: new game (a new connection), q: quit".into();
                }
            },
            key = keys.next() => match key {
                Some(Ok(Term::Key(key))) if key.kind != KeyEventKind::Release => match s.on_key(key) {
                    Action::Move(row, col) => {
                        let sent = link.send(ClientMessage::Move { row: row as i64, col: col as i64 }).await;
                        s.sent(sent)?;
                    }
                    Action::Rematch => {
                        let sent = link.send(ClientMessage::Rematch {}).await;
                        if s.sent(sent)? {
                            s.view.note = "rematch asked; waiting for the opponent".into();
                        }
                    }
                    Action::NewMatch if s.lost => {
                        let rules = Rules { size: s.view.game.size(), win: Some(s.view.game.win()) };
                        link = session::open(link.url(), name, &Start::Quick(rules)).await?;
                        s.lost = false;
                        s.view = View::default();
                        s.view.note = "connected again; looking for an opponent".into();
                    }
                    Action::NewMatch => {
                        let (size, win) = (s.view.game.size() as i64, s.view.game.win() as i64);
                        let sent = link.send(ClientMessage::QuickMatch { size: Some(size), win: Some(win), house_after_ms: None, level: None }).await;
                        s.sent(sent)?;
                    }
                    Action::Resign => {
                        let sent = link.send(ClientMessage::Resign {}).await;
                        s.sent(sent)?;
                    }
                    Action::Accept(challenge) => {
                        let sent = link.send(ClientMessage::Accept { challenge }).await;
                        s.sent(sent)?;
                    }
                    Action::Decline(challenge) => {
                        let sent = link.send(ClientMessage::Decline { challenge, reason: None }).await;
                        if s.sent(sent)? {
                            s.view.offer = None;
                            s.view.note = "challenge declined".into();
                        }
                    }
                    Action::Quit => {
                        if s.in_game() {
                            resign_and_wait(&mut link, &mut s.view).await;
                        }
                        let _ = link.send(ClientMessage::Leave {}).await;
                        return Ok(s.view.result_line());
                    }
                    Action::None => {}
                },
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Ok(s.view.result_line()),
            },
            _ = term.recv() => return Ok(s.view.result_line()),
            _ = hangup.recv() => return Ok(s.view.result_line()),
            _ = tick.tick() => {}
        }
    }
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
    /// The keys that do something now.
    fn help(&self) -> &'static str {
        if self.answerable().is_some() {
            "a: accept the challenge   d: decline it   q: quit"
        } else if self.watch {
            "q: quit"
        } else if self.view.over.is_some() && self.view.closed.is_some() {
            "n: new game   q: quit"
        } else if self.view.over.is_some() {
            "r: rematch   n: new game   q: quit"
        } else {
            "arrows + Enter, or type a cell (b2)   Ctrl-R: resign   Esc: leave (both ask)"
        }
    }

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
        if mine && !self.warned && self.view.clock_ms().is_some_and(|ms| ms < LOW_TIME_MS) {
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
        let rows = height.saturating_sub(CHROME_ROWS + long);
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

    /// Whether a request went out; while reconnecting it did not, and the
    /// player is told so. A connection gone for good ends the session.
    fn sent(&mut self, result: Result<(), SendError>) -> Result<bool, SendError> {
        match result {
            Ok(()) => Ok(true),
            Err(SendError::NotConnected) => {
                self.view.note = NOT_CONNECTED.into();
                Ok(false)
            }
            Err(lost) => Err(lost),
        }
    }

    /// The open challenge that `a` and `d` answer: one is shown while no
    /// game is in progress.
    fn answerable(&self) -> Option<&str> {
        let offer =
            self.view.offer.as_ref().filter(|_| !self.watch && !self.in_game() && self.typed.is_empty());
        offer.map(|o| o.id.as_str())
    }

    /// Whether leaving now would resign a game in progress.
    fn in_game(&self) -> bool {
        !self.watch && self.view.you.is_some() && self.view.over.is_none() && self.view.game.turn().is_some()
    }

    /// Leaving: at once, or after a confirmation while a game is in progress.
    fn quit(&mut self, ctrl_c: bool) -> Action {
        if !self.in_game() || (self.confirming && ctrl_c) {
            return Action::Quit;
        }
        self.confirming = true;
        self.view.note = "Resign this game? y/n (Ctrl-C again: yes)".into();
        Action::None
    }

    fn on_key(&mut self, key: KeyEvent) -> Action {
        let n = self.view.game.size();
        let (r, c) = self.cursor;
        if self.resigning {
            self.resigning = false;
            if matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
                return Action::Resign;
            }
            self.view.note = "not resigned; play on".into();
            return Action::None;
        }
        if self.confirming {
            self.confirming = false;
            match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => return Action::Quit,
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return Action::Quit,
                _ => {
                    self.view.note = "not resigned; play on".into();
                    return Action::None;
                }
            }
        }
        if let (Some(id), KeyCode::Char(answer @ ('a' | 'd'))) = (self.answerable(), key.code) {
            let id = id.to_owned();
            return if answer == 'a' { Action::Accept(id) } else { Action::Decline(id) };
        }
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return self.quit(true),
            KeyCode::Esc => return self.quit(false),
            KeyCode::Char('r') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                if self.in_game() {
                    self.resigning = true;
                    self.view.note = "Resign this game and stay for a rematch? y/n".into();
                } else {
                    self.view.note = "no game in progress to resign".into();
                }
            }
            KeyCode::Char('q') if self.typed.is_empty() && (n < 17 || self.view.over.is_some()) => {
                return self.quit(false);
            }
            KeyCode::Char('r') if self.typed.is_empty() && self.view.over.is_some() && !self.watch => {
                if self.view.closed.is_none() && !self.lost {
                    return Action::Rematch;
                }
                self.view.note =
                    "your opponent has left, so there is no rematch; n: new game, q: quit".into();
            }
            KeyCode::Char('n') if self.typed.is_empty() && self.view.over.is_some() && !self.watch => {
                return Action::NewMatch;
            }
            KeyCode::Up => self.cursor = (r.saturating_sub(1), c),
            KeyCode::Down => self.cursor = ((r + 1).min(n - 1), c),
            KeyCode::Left => self.cursor = (r, c.saturating_sub(1)),
            KeyCode::Right => self.cursor = (r, (c + 1).min(n - 1)),
            KeyCode::Backspace => {
                self.typed.pop();
            }
            KeyCode::Char(ch)
                if (ch.is_ascii_alphanumeric() || ch == ' ' || ch == ',') && self.typed.len() < 12 =>
            {
                self.typed.push(ch);
            }
            KeyCode::Enter => {
                let target = if self.typed.trim().is_empty() {
                    Ok(self.cursor)
                } else {
                    parse_cell(&std::mem::take(&mut self.typed), n)
                };
                match target {
                    Err(e) => self.view.note = e.to_string(),
                    Ok(_) if self.watch => self.view.note = "you are watching: only the players move".into(),
                    Ok(_) if self.view.over.is_some() => {
                        self.view.note =
                            "the game is over: r for a rematch, n for a new game, q to quit".into();
                    }
                    Ok(_) if !self.view.my_turn() => self.view.note = "not your turn yet".into(),
                    Ok((row, col)) if self.view.game.is_occupied(row, col) => {
                        self.view.note = "that cell is taken".into();
                    }
                    Ok((row, col)) => {
                        self.cursor = (row, col);
                        return Action::Move(row, col);
                    }
                }
            }
            _ => {}
        }
        Action::None
    }
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

fn draw(s: &Screen, window: Option<Window>) {
    let mut out = stdout();
    let _ = queue!(out, terminal::Clear(terminal::ClearType::All), cursor::MoveTo(0, 0));
    let n = s.view.game.size();
    let Some(window) = window else {
        let (cell_w, label_w) = cell_width(n);
        let need = (label_w + 2 + 3 * cell_w, CHROME_ROWS + 3);
        let text = format!(
            "The terminal is too small for this board: make it at least {} columns by {} rows. (q: quit)",
            need.0, need.1
        );
        let _ = queue!(out, crossterm::style::Print(text));
        let _ = out.flush();
        return;
    };
    let width = terminal::size().map_or(80, |(w, _)| usize::from(w));
    let mut title = match &s.view.room {
        Some(room) => format!("tictactoe — room {}", clean(room)),
        None => "tictactoe".to_owned(),
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
    lines.push(status_line(&s.view, width, colour));
    lines.push(clean(&s.view.note));
    lines.push(format!("> {}", s.typed));
    lines.push(s.help().to_owned());
    for line in lines {
        let _ = write!(out, "{line}\r\n");
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tictactoe_protocol::{Player, PlayerInfo};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn playing() -> Screen {
        let mut view = View::default();
        view.apply(&ServerMessage::GameStarted {
            room: Arc::from("R"),
            size: 3,
            win: 3,
            you: Player::X,
            mark: Player::X,
            players: vec![PlayerInfo::guest("a"), PlayerInfo::guest("b")],
            turn: Player::X,
            resume_token: Arc::from("t"),
            turn_timeout_ms: 0,
        });
        Screen {
            view,
            cursor: (1, 1),
            typed: String::new(),
            watch: false,
            confirming: false,
            resigning: false,
            lost: false,
            fallback: None,
            window: Window::whole(3),
            cued: false,
            warned: false,
        }
    }

    #[test]
    fn leaving_a_game_in_progress_asks_first() {
        let mut s = playing();
        assert!(matches!(s.on_key(key(KeyCode::Esc)), Action::None));
        assert!(s.view.note.contains("Resign this game? y/n"));
        assert!(matches!(s.on_key(key(KeyCode::Char('n'))), Action::None), "no: play on");
        assert!(matches!(s.on_key(key(KeyCode::Char('q'))), Action::None));
        assert!(matches!(s.on_key(key(KeyCode::Char('y'))), Action::Quit), "yes: resign and leave");
        let mut s = playing();
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(matches!(s.on_key(ctrl_c), Action::None));
        assert!(matches!(s.on_key(ctrl_c), Action::Quit), "Ctrl-C twice leaves");
        // After the game, or watching, leaving asks nothing.
        let mut s = playing();
        s.view.over = Some((None, tictactoe_protocol::EndReason::Draw, None));
        assert!(matches!(s.on_key(key(KeyCode::Char('q'))), Action::Quit));
        let mut w = playing();
        w.watch = true;
        assert!(matches!(w.on_key(key(KeyCode::Esc)), Action::Quit));
    }

    #[test]
    fn a_and_d_answer_a_challenge_between_games_only() {
        let offer = ServerMessage::Challenged {
            challenge: Arc::from("c1"),
            from: PlayerInfo::guest("ann"),
            size: 3,
            win: 3,
            expires_ms: 30_000,
        };
        // Mid-game: `a` is typed (a cell's column), not an answer.
        let mut s = playing();
        s.view.apply(&offer);
        assert!(matches!(s.on_key(key(KeyCode::Char('a'))), Action::None));
        assert_eq!(s.typed, "a");
        // Between games: answered.
        let mut s = playing();
        s.view.over = Some((None, tictactoe_protocol::EndReason::Draw, None));
        s.view.apply(&offer);
        assert!(s.help().starts_with("a: accept"));
        assert!(matches!(s.on_key(key(KeyCode::Char('a'))), Action::Accept(id) if id == "c1"));
        assert!(matches!(s.on_key(key(KeyCode::Char('d'))), Action::Decline(id) if id == "c1"));
    }

    #[test]
    fn a_spectator_playing_a_cell_is_told_they_are_watching() {
        let mut w = playing();
        w.watch = true;
        w.view.you = None;
        assert!(matches!(w.on_key(key(KeyCode::Enter)), Action::None));
        assert_eq!(w.view.note, "you are watching: only the players move");
    }

    #[test]
    fn long_lines_are_cut_to_the_width_and_keep_no_control_characters() {
        assert_eq!(fit_line("short", 80), "short");
        assert_eq!(fit_line("abcdefghij", 5), "abcd…");
        assert_eq!(fit_line("a\u{1b}]0;x\u{7}b", 80), "a]0;xb");
    }

    #[test]
    fn ctrl_r_resigns_and_stays_after_asking() {
        let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
        let mut s = playing();
        assert!(matches!(s.on_key(ctrl_r), Action::None));
        assert!(s.view.note.contains("Resign this game and stay"), "{}", s.view.note);
        assert!(matches!(s.on_key(key(KeyCode::Char('n'))), Action::None), "no: play on");
        assert!(matches!(s.on_key(ctrl_r), Action::None));
        assert!(matches!(s.on_key(key(KeyCode::Char('y'))), Action::Resign));
        // Not in a game: nothing to resign.
        let mut s = playing();
        s.view.over = Some((None, tictactoe_protocol::EndReason::Draw, None));
        assert!(matches!(s.on_key(ctrl_r), Action::None));
        assert!(!s.resigning);
    }
}
