//! What a key asks for on the full screen: moving the cursor, typing or
//! playing a cell, and the answers (leave, resign, rematch, a challenge)
//! that may need a confirmation first.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use tictactoe_protocol::ClientMessage;

use super::tournament::Typed;
use super::{Do, Screen};
use crate::ui::input::parse_cell;

/// What a key asks for.
pub(in crate::ui::screen) enum Action {
    /// Nothing to send.
    None,
    /// Play this cell.
    Move(usize, usize),
    /// Ask the opponent for another game.
    Rematch,
    /// A new quick match on a board of the same size.
    NewMatch,
    /// Accept the open challenge with this id.
    Accept(String),
    /// Decline the open challenge with this id.
    Decline(String),
    /// Concede the game and stay in the room (a rematch stays possible).
    Resign,
    /// Leave (resigning a game in progress).
    Quit,
    /// A tournament's request (berserk, pause, join again).
    Send(ClientMessage),
}

impl Screen {
    /// What a key's action sends.
    pub(in crate::ui::screen) fn act(&self, action: Action) -> Do {
        let request = match action {
            Action::None => return Do::Wait,
            Action::Quit => return Do::Quit,
            Action::NewMatch if self.lost => return Do::NewConnection(self.view.rules()),
            Action::NewMatch => self.view.rules().quick_match(),
            Action::Move(row, col) => ClientMessage::Move { row: row as i64, col: col as i64 },
            Action::Rematch => ClientMessage::Rematch {},
            Action::Resign => ClientMessage::Resign {},
            Action::Accept(challenge) => ClientMessage::Accept { challenge },
            Action::Decline(challenge) => ClientMessage::Decline { challenge, reason: None },
            Action::Send(request) => request,
        };
        Do::Send(request)
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

    /// What `key` asks for; prompts and refusals go to the note.
    pub(in crate::ui::screen) fn on_key(&mut self, key: KeyEvent) -> Action {
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
            // Between a tournament's games, without a cell to type.
            KeyCode::Char(c @ ('p' | 'j')) if self.typed.is_empty() && self.between_games() => {
                let typed = if c == 'p' { Typed::Pause } else { Typed::Join };
                return self.tournament_command(typed).map_or(Action::None, Action::Send);
            }
            KeyCode::Char('r' | 'n') if self.typed.is_empty() && self.tournament.is_some() => {
                self.view.note = "the tournament pairs you again by itself; p: pause, q: quit".into();
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
            KeyCode::Enter if self.tournament.is_some() && Typed::read(&self.typed).is_some() => {
                let typed = Typed::read(&std::mem::take(&mut self.typed));
                return typed.and_then(|t| self.tournament_command(t)).map_or(Action::None, Action::Send);
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
