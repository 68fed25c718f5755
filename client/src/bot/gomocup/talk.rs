//! The Piskvork protocol without the process: what the bridge says to a
//! Gomocup brain and what its answers mean, as a state machine fed the
//! brain's lines and the bridge's questions, giving back lines to send and
//! what came of them. [`super::Brain`] is the io shell around it.
//!
//! Gomocup's `x,y` is column, row; the server's `[row, col]` is row, column.

use tictactoe_protocol::Game;

/// The win length a Gomocup brain plays (freestyle, `INFO rule 0`).
pub const FIVE: usize = 5;

/// `time_left` for a game without a match clock: Piskvork's "unlimited".
pub const UNLIMITED_MS: u64 = 2_147_483_647;

/// The times a brain is told before it moves, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// `timeout_turn`: the time for this move.
    pub turn_ms: u64,
    /// `timeout_match`: the game's initial time (0: no match clock).
    pub match_ms: u64,
    /// `time_left`: what is left of the match time ([`UNLIMITED_MS`] without one).
    pub left_ms: u64,
}

/// What the shell does, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// Write this line to the brain.
    Send(String),
    /// Put this on the bot's log (the brain's `MESSAGE`, `DEBUG`, `SUGGEST`).
    Log(String),
    /// The brain chose this cell, `(row, col)`.
    Chosen((usize, usize)),
    /// The brain accepted the board size it was offered.
    Accepted,
    /// The brain refused the board (`START` answered with anything but `OK`), in its words.
    Refused(String),
    /// The brain lost the game: the reason.
    Lost(String),
    /// Stop the brain's process and start it again, then ask again (it does
    /// not know `RESTART`, or the board size changed).
    Respawn,
}

/// What the bridge waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Nothing: lines from the brain are only logged.
    Idle,
    /// `START size` was sent to vet a board: `OK` accepts it.
    Vetting(usize),
    /// `START` (or `RESTART`) was sent for game `serial`: `OK`, then the position.
    Starting { serial: u64, restart: bool, ask: Box<Asked> },
    /// The position was sent: a move is due.
    Thinking,
}

/// A question for a move, kept while the brain is being started.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Asked {
    game: Game,
    timing: Timing,
}

/// What the brain knows: the game it is in and the stones it was told.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    /// Which game (the bot's count of games started); `None` after a vetting `START`.
    serial: Option<u64>,
    size: usize,
    /// The moves the brain has, in order, `[row, col]`.
    told: Vec<[u16; 2]>,
}

/// The bridge's side of one brain process's conversation.
#[derive(Debug, Clone)]
pub struct Talk {
    phase: Phase,
    known: Option<Known>,
    /// `INFO max_memory`, in bytes.
    memory_bytes: u64,
}

impl Talk {
    /// A conversation with a brain just started, allowed `memory_bytes`.
    pub fn new(memory_bytes: u64) -> Talk {
        Talk { phase: Phase::Idle, known: None, memory_bytes }
    }

    /// Asks whether the brain plays a `size` board: `START size`.
    pub fn vet(&mut self, size: usize) -> Vec<Out> {
        self.known = None;
        self.phase = Phase::Vetting(size);
        vec![Out::Send(format!("START {size}"))]
    }

    /// Asks for a move in `game` (the brain's side is the one to move), game
    /// number `serial` of the bot's run: the brain is started, restarted or
    /// told what changed since it last moved, as it needs.
    pub fn ask(&mut self, game: &Game, timing: Timing, serial: u64) -> Vec<Out> {
        if game.win() != FIVE {
            return vec![Out::Refused(format!(
                "a Gomocup brain plays five in a row, not {} in a row",
                game.win()
            ))];
        }
        let ask = Box::new(Asked { game: game.clone(), timing });
        match &self.known {
            Some(k) if k.size == game.size() && k.serial == Some(serial) => self.position(&ask),
            Some(k) if k.size == game.size() => {
                self.phase = Phase::Starting { serial, restart: true, ask };
                vec![Out::Send("RESTART".into())]
            }
            Some(_) => {
                self.known = None;
                self.phase = Phase::Idle;
                vec![Out::Respawn]
            }
            None => {
                self.phase = Phase::Starting { serial, restart: false, ask };
                vec![Out::Send(format!("START {}", game.size()))]
            }
        }
    }

    /// Whether the brain has the position and a move is due.
    pub fn thinking(&self) -> bool {
        self.phase == Phase::Thinking
    }

    /// The brain's process was replaced: it knows nothing.
    pub fn forget(&mut self) {
        self.known = None;
        self.phase = Phase::Idle;
    }

    /// One line from the brain.
    pub fn hear(&mut self, line: &str) -> Vec<Out> {
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match word.to_ascii_uppercase().as_str() {
            "MESSAGE" => return vec![Out::Log(format!("brain says: {rest}"))],
            "DEBUG" => return vec![Out::Log(format!("brain debug: {rest}"))],
            "SUGGEST" => return vec![Out::Log(format!("brain suggests {rest}"))],
            "" => return Vec::new(),
            "ERROR" | "UNKNOWN" if Self::about_info(rest) => {
                return vec![Out::Log(format!(
                    "brain did not take an INFO line (still busy with its last search?): {line}"
                ))];
            }
            _ => {}
        }
        match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Idle => vec![Out::Log(format!("brain said, unasked: {line}"))],
            Phase::Vetting(size) if word.eq_ignore_ascii_case("OK") => {
                self.known = Some(Known { serial: None, size, told: Vec::new() });
                vec![Out::Accepted]
            }
            Phase::Vetting(_) => vec![Out::Refused(refusal(line))],
            Phase::Starting { serial, ask, .. } if word.eq_ignore_ascii_case("OK") => {
                let size = ask.game.size();
                self.known = Some(Known { serial: Some(serial), size, told: Vec::new() });
                let mut out = vec![
                    Out::Send(format!("INFO max_memory {}", self.memory_bytes)),
                    Out::Send("INFO rule 0".into()),
                ];
                out.extend(self.position(&ask));
                out
            }
            Phase::Starting { restart: true, .. } => {
                // A brain without RESTART is started afresh.
                self.known = None;
                vec![
                    Out::Log(format!("brain answered RESTART with {line:?}: starting it again")),
                    Out::Respawn,
                ]
            }
            Phase::Starting { restart: false, .. } => {
                self.known = None;
                vec![Out::Refused(refusal(line))]
            }
            Phase::Thinking => self.answer(word, line),
        }
    }

    /// Whether a brain's `ERROR`/`UNKNOWN` is about an `INFO` line it took
    /// apart, not about a move: a brain still busy with its last search may read
    /// `INFO` as a command and then its key and its value as two more (Rapfi
    /// answers "Unknown command: TIMEOUT_TURN", then "Unknown command: 500").
    /// The game goes on; the brain keeps the times it had.
    fn about_info(text: &str) -> bool {
        let last = text.rsplit([' ', ':']).next().unwrap_or("").trim();
        let keys = ["INFO", "TIMEOUT_TURN", "TIMEOUT_MATCH", "TIME_LEFT", "MAX_MEMORY", "RULE"];
        keys.iter().any(|k| last.eq_ignore_ascii_case(k))
            || (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
    }

    /// The brain's answer to a position: a move, or the game is lost.
    fn answer(&mut self, word: &str, line: &str) -> Vec<Out> {
        let Some(known) = self.known.as_mut() else {
            return vec![Out::Lost(format!("brain answered {line:?} with no game"))];
        };
        let lost = match word.to_ascii_uppercase().as_str() {
            "ERROR" | "UNKNOWN" => format!("brain answered {line:?}"),
            _ => match parse_cell(line, known.size) {
                Err(why) => why,
                Ok(cell) if known.told.contains(&cell) => {
                    format!("brain played {line:?}, a taken cell")
                }
                Ok(cell) => {
                    known.told.push(cell);
                    return vec![Out::Chosen((usize::from(cell[0]), usize::from(cell[1])))];
                }
            },
        };
        vec![Out::Lost(lost)]
    }

    /// The times, then the position: `TURN` with the opponent's move when
    /// the brain has everything before it, `BEGIN` on an empty board, else
    /// the whole board.
    fn position(&mut self, ask: &Asked) -> Vec<Out> {
        let t = ask.timing;
        let mut out = vec![
            Out::Send(format!("INFO timeout_turn {}", t.turn_ms)),
            Out::Send(format!("INFO timeout_match {}", t.match_ms)),
            Out::Send(format!("INFO time_left {}", t.left_ms)),
        ];
        let Some(known) = self.known.as_mut() else {
            return vec![Out::Lost("brain asked to move with no game".into())];
        };
        let moves = ask.game.moves();
        match moves.split_last() {
            None => out.push(Out::Send("BEGIN".into())),
            Some((last, before)) if before == known.told.as_slice() => {
                out.push(Out::Send(format!("TURN {}", xy(*last))));
            }
            Some(_) => {
                out.push(Out::Send("BOARD".into()));
                // The side to move is the brain's: its stones share the parity of the next move.
                let mine = moves.len() % 2;
                for (i, cell) in moves.iter().enumerate() {
                    let who = if i % 2 == mine { 1 } else { 2 };
                    out.push(Out::Send(format!("{},{who}", xy(*cell))));
                }
                out.push(Out::Send("DONE".into()));
            }
        }
        known.told = moves.to_vec();
        self.phase = Phase::Thinking;
        out
    }
}

/// A server cell `[row, col]` as Gomocup's `x,y` (column, row).
pub fn xy(cell: [u16; 2]) -> String {
    format!("{},{}", cell[1], cell[0])
}

/// Reads a brain's move `x,y` as a server cell `[row, col]` on a `size` board.
pub fn parse_cell(line: &str, size: usize) -> Result<[u16; 2], String> {
    let mut parts = line.split(',').map(|p| p.trim().parse::<u16>());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(x)), Some(Ok(y)), None) if usize::from(x) < size && usize::from(y) < size => Ok([y, x]),
        (Some(Ok(_)), Some(Ok(_)), None) => {
            Err(format!("brain played {line:?}, off the {size}×{size} board"))
        }
        _ => Err(format!("brain answered {line:?}, not a move \"x,y\"")),
    }
}

/// A refusal of a board in the brain's words (`ERROR` dropped).
fn refusal(line: &str) -> String {
    let words = line.strip_prefix("ERROR").unwrap_or(line).trim();
    match words {
        "" => "the brain does not play this board".to_owned(),
        words => format!("the brain says: {words}"),
    }
}

#[cfg(test)]
mod tests;
