//! What the client says to a person: other players' text made safe for a
//! terminal, and the server's refusals and close codes in plain words.

use tictactoe_protocol::{ErrorCode, Game, Limits};

use crate::request::{RequestedRules, Start};

/// `text` with every control character removed (C0, ESC among them, DEL and
/// C1): text that came from another player (a name, a decline reason) can
/// then not set the terminal's title, clear the screen or move the cursor.
pub fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// How this program was started (its `argv[0]`, quoted for a shell when it
/// needs to be), for the commands it tells people to type: `ttt` when it
/// was found on `PATH`, `./target/release/ttt` when started by path.
pub fn invoked_as() -> String {
    let arg0 = std::env::args_os().next().map(|a| a.to_string_lossy().into_owned());
    shell_word(arg0.as_deref().filter(|a| !a.is_empty()).unwrap_or("ttt"))
}

/// `word` as a shell reads it back: as it is when it holds only safe
/// characters, else in single quotes.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%=,".contains(c);
    if word.chars().all(safe) { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

/// The board of `size` as people say it: `3×3`.
fn board(size: usize) -> String {
    format!("{size}×{size}")
}

/// Why a win length does not fit a board.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadWin {
    /// A board of 3 or less is only won by a whole line.
    #[error(
        "a {} board is only won by {n} in a row (a whole line): leave out --win, or choose a bigger --size",
        board(*n)
    )]
    WholeLineOnly {
        /// The board's size.
        n: usize,
    },
    /// The win length is outside `least..=n`.
    #[error(
        "--win {win} does not fit a {} board: choose {least} to {n} in a row, or leave out --win for a whole line",
        board(*n)
    )]
    OutOfRange {
        /// The board's size.
        n: usize,
        /// The win length asked for.
        win: usize,
        /// The shortest win length the board takes.
        least: usize,
    },
    /// A Gomocup brain plays five in a row, and `--win` asked for another.
    #[error("a Gomocup brain plays five in a row: leave out --win, or give --win 5 (not {win})")]
    NotFive {
        /// The win length asked for.
        win: usize,
    },
}

/// Refuses, in words, rules whose win length does not fit the board (the
/// server would refuse it too, after connecting): the protocol's one check
/// of a win length, said as the command line's flags are. A win length left
/// to the server always fits.
pub fn check_win(rules: RequestedRules) -> Result<(), BadWin> {
    let (n, Some(win)) = (rules.size, rules.win) else { return Ok(()) };
    if Game::win_lengths(n).contains(&win) {
        return Ok(());
    }
    let least = Game::min_win(n);
    Err(if least == n { BadWin::WholeLineOnly { n } } else { BadWin::OutOfRange { n, win, least } })
}

/// A refusal from the server in a person's words: `message` is the server's
/// own text, used (without control characters) where it already reads well;
/// `start` is what was asked for and `limits` the server's, when known.
pub fn refusal(code: ErrorCode, message: &str, start: Option<&Start>, limits: Option<&Limits>) -> String {
    match code {
        ErrorCode::InvalidSize => match limits {
            Some(l) => format!(
                "this server plays boards from {} to {}: choose a --size from {} to {}",
                board(l.min_size),
                board(l.max_size),
                l.min_size,
                l.max_size
            ),
            None => "this server does not play that board size".to_owned(),
        },
        ErrorCode::InvalidWin => start
            .and_then(Start::rules)
            .and_then(|rules| check_win(rules).err())
            .map(|why| why.to_string())
            .unwrap_or_else(|| "that win length does not fit the board: choose from 3 up to the board's size in a row, or leave out --win".to_owned()),
        ErrorCode::PlayerNotFound => match start {
            Some(Start::Challenge(name, _)) => {
                format!("nobody called {:?} is online right now ({} who lists who is)", clean(name), invoked_as())
            }
            _ => clean(message),
        },
        ErrorCode::NotYourTurn => "not your turn yet: wait for your opponent's move".to_owned(),
        ErrorCode::CellOccupied => "that cell is taken: choose an empty one".to_owned(),
        ErrorCode::OutOfBounds => "that cell is off the board".to_owned(),
        ErrorCode::GameOver => "the game is over".to_owned(),
        ErrorCode::NotInGame => "you are not in a game right now".to_owned(),
        ErrorCode::RateLimited => "too many requests at once: wait a moment and try again".to_owned(),
        _ => clean(message),
    }
}

/// A close by the server (`code`, `reason`) in a person's words.
pub fn closed(code: u16, reason: &str) -> String {
    match code {
        4000 => "another client took over this seat (the same game resumed elsewhere), so this one stopped"
            .to_owned(),
        1001 => "the server is shutting down".to_owned(),
        1008 => "the server closed the connection: too many messages too fast".to_owned(),
        1009 => "the server closed the connection: a message was too big".to_owned(),
        _ if reason.is_empty() => format!("the server closed the connection (code {code})"),
        _ => format!("the server closed the connection: {} (code {code})", clean(reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_of_every_kind_are_removed() {
        let hostile = "no\u{1b}]0;pwned\u{7}\u{1b}[2J thanks\u{7f}\u{9b}2J\r\n\t!";
        assert_eq!(clean(hostile), "no]0;pwned[2J thanks2J!");
        assert_eq!(clean("Zoë 🙂 ann"), "Zoë 🙂 ann", "printable text is kept");
    }

    #[test]
    fn commands_are_quoted_only_when_a_shell_needs_it() {
        assert_eq!(shell_word("ttt"), "ttt");
        assert_eq!(shell_word("./target/release/ttt"), "./target/release/ttt");
        assert_eq!(shell_word("/opt/my games/ttt"), "'/opt/my games/ttt'");
        assert_eq!(shell_word("/o'k/ttt"), "'/o'\\''k/ttt'");
    }

    #[test]
    fn a_win_length_is_checked_as_the_protocol_checks_it() {
        let check = |size, win| check_win(RequestedRules { size, win, clock: None });
        assert_eq!(check(3, Some(4)), Err(BadWin::WholeLineOnly { n: 3 }));
        assert_eq!(check(2, Some(3)), Err(BadWin::WholeLineOnly { n: 2 }));
        assert_eq!(check(15, Some(2)), Err(BadWin::OutOfRange { n: 15, win: 2, least: 3 }));
        assert_eq!(check(15, Some(16)), Err(BadWin::OutOfRange { n: 15, win: 16, least: 3 }));
        for (size, win) in [(3, Some(3)), (15, Some(5)), (15, Some(15)), (2, Some(2)), (4, None)] {
            assert_eq!(check(size, win), Ok(()), "{size}/{win:?}");
            let asked = win.unwrap_or(size);
            assert!(
                tictactoe_protocol::Game::with_win(size, asked).is_ok(),
                "the engine plays {size}/{asked}"
            );
        }
    }

    #[test]
    fn refusals_read_as_a_person_would_say_them() {
        let three = Start::Quick(RequestedRules { size: 3, win: Some(4), clock: None });
        let said = refusal(ErrorCode::InvalidWin, "win must be from 3 to 3", Some(&three), None);
        assert_eq!(
            said,
            "a 3×3 board is only won by 3 in a row (a whole line): leave out --win, or choose a bigger --size"
        );
        let five = Start::Create(RequestedRules { size: 5, win: Some(9), clock: None }, None);
        let said = refusal(ErrorCode::InvalidWin, "", Some(&five), None);
        assert!(said.starts_with("--win 9 does not fit a 5×5 board: choose 3 to 5 in a row"), "{said}");
        let who = Start::Challenge("zed".into(), RequestedRules { size: 3, win: None, clock: None });
        let said = refusal(ErrorCode::PlayerNotFound, "send who", Some(&who), None);
        assert!(
            said.starts_with("nobody called \"zed\" is online right now (")
                && said.ends_with(" who lists who is)")
        );
        assert!(!said.contains("send who"));
        let limits = Limits {
            min_size: 2,
            max_size: 100,
            turn_timeout_ms: 0,
            reconnect_grace_ms: 0,
            max_message_bytes: 4096,
            max_messages_per_second: 0,
            ping_interval_ms: 0,
            handshake_timeout_ms: 0,
        };
        let said = refusal(ErrorCode::InvalidSize, "size must be from 2 to 100", None, Some(&limits));
        assert_eq!(said, "this server plays boards from 2×2 to 100×100: choose a --size from 2 to 100");
        assert_eq!(
            refusal(ErrorCode::RoomFull, "the room\u{1b}[2J is full", None, None),
            "the room[2J is full"
        );
    }

    #[test]
    fn close_codes_in_words() {
        assert!(closed(4000, "replaced").starts_with("another client took over this seat"));
        assert_eq!(closed(1011, "bad\u{1b}[2J"), "the server closed the connection: bad[2J (code 1011)");
    }
}
