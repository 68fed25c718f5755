//! The Gomocup bridge: a Gomocup brain (a `pbrain-` program speaking the
//! Piskvork protocol on stdin/stdout) chooses the moves (see PROTOCOL.md,
//! "The Gomocup bridge"). [`talk`] holds the protocol; this is the process
//! around it: started, asked, timed, restarted after it failed.

pub mod talk;

use std::time::Duration;

use tokio::time::Instant;

use tictactoe_protocol::Game;

use super::budget::Budget;
use super::engine::EngineError;
use super::process::Process;
use talk::{Out, Talk, Timing, UNLIMITED_MS};

/// `INFO max_memory` when `--engine-memory-mb` is not given: Gomocup's own limit.
pub const DEFAULT_MEMORY_MB: u64 = 350;

/// How long a brain has to answer `ABOUT`, and `START` (for a challenge,
/// or a game when the move's own time is longer).
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// Waited past `--think-ms` for a brain's move in a game without a clock.
const UNTIMED_GRACE: Duration = Duration::from_secs(1);

/// The least a brain is given to start for a game, whatever the move's time.
const START_AT_LEAST: Duration = Duration::from_secs(2);

/// A game the brain cannot go on with: resign it; the brain is started
/// afresh for the next game when it failed.
#[derive(Debug, thiserror::Error)]
#[error("{why}")]
pub struct Forfeit {
    /// What happened, for the log.
    pub why: String,
    /// The brain, to play the next game with.
    pub brain: Box<Brain>,
}

/// A running brain process and the conversation with it.
#[derive(Debug)]
pub struct Brain {
    command: String,
    process: Option<Process>,
    talk: Talk,
}

impl Brain {
    /// Starts `command` (through `sh -c`, so it may carry arguments),
    /// allowed `memory_mb` megabytes.
    pub async fn spawn(command: &str, memory_mb: u64) -> Result<Brain, EngineError> {
        let memory_bytes = memory_mb.saturating_mul(1024 * 1024);
        let process = Some(Process::spawn(command).await?);
        Ok(Brain { command: command.to_owned(), process, talk: Talk::new(memory_bytes) })
    }

    /// The brain's own name: `ABOUT`'s `name="..."`, if it says one.
    pub async fn about(&mut self) -> Option<String> {
        let process = self.process.as_mut()?;
        process.say("ABOUT").await.ok()?;
        let deadline = Instant::now() + ANSWER_WITHIN;
        loop {
            let line = process.hear(deadline, ANSWER_WITHIN).await.ok()?;
            if let Some(name) = about_name(&line) {
                return Some(name);
            }
            if !matches!(line.split_whitespace().next(), Some("MESSAGE" | "DEBUG")) {
                return None;
            }
        }
    }

    /// Whether the brain plays a `size` board (`START size`): `Err` is its
    /// refusal, or why it could not answer.
    pub async fn vet(&mut self, size: usize) -> Result<(), String> {
        self.ensure_running().await.map_err(|e| e.to_string())?;
        let outs = self.talk.vet(size);
        self.run(outs, Instant::now() + ANSWER_WITHIN, Duration::ZERO, None).await.map(|_| ())
    }

    /// Asks the brain for a move in `game`, game number `serial` of the run,
    /// held to `budget` once it has the position (starting it for a new
    /// game may take [`ANSWER_WITHIN`] besides: a game's first move has time
    /// of its own). A failure gives the brain back in the [`Forfeit`],
    /// stopped, to be started afresh for the next game.
    pub async fn choose(
        mut self: Box<Self>,
        game: &Game,
        budget: Budget,
        serial: u64,
    ) -> Result<(Box<Brain>, (usize, usize)), Forfeit> {
        let started_by = Instant::now() + ANSWER_WITHIN.min(budget.limit.max(START_AT_LEAST));
        if let Err(e) = self.ensure_running().await {
            return Err(self.forfeit(e.to_string()));
        }
        let timing = timing(budget);
        let outs = self.talk.ask(game, timing, serial);
        // Without a clock the limit is --think-ms itself: a brain told a little less may overrun it a little.
        let think = match budget.clock {
            Some(_) => budget.limit,
            None => budget.limit + UNTIMED_GRACE,
        };
        match self.run(outs, started_by, think, Some((game, timing, serial))).await {
            Ok(Some(cell)) => Ok((self, cell)),
            Ok(None) => Err(self.forfeit("the brain gave no move".into())),
            Err(why) => Err(self.forfeit(why)),
        }
    }

    /// Tells the brain the session is over (`END`) and waits briefly for it
    /// to exit (it is killed if it does not).
    pub async fn quit(mut self) {
        if let Some(p) = self.process.take() {
            p.quit("END").await;
        }
    }

    /// Does what the conversation asks until it gives a move, an
    /// acceptance, or a failure: the brain has until `started_by` to be
    /// ready, then `think` from when it has the position; `ask` is the
    /// question to put again after a respawn.
    async fn run(
        &mut self,
        mut outs: Vec<Out>,
        started_by: Instant,
        think: Duration,
        ask: Option<(&Game, Timing, u64)>,
    ) -> Result<Option<(usize, usize)>, String> {
        let asked_at = Instant::now();
        let mut deadline = started_by;
        let mut thinking = false;
        loop {
            for out in std::mem::take(&mut outs) {
                match out {
                    Out::Send(line) => self.process()?.say(&line).await.map_err(|e| e.to_string())?,
                    // The brain's own text: never raw control characters on the terminal.
                    Out::Log(line) => eprintln!("ttt bot: {}", line.replace(|c: char| c.is_control(), " ")),
                    Out::Chosen(cell) => return Ok(Some(cell)),
                    Out::Accepted => return Ok(None),
                    Out::Refused(why) | Out::Lost(why) => return Err(why),
                    Out::Respawn => {
                        let (game, timing, serial) = ask.ok_or("the brain restarted unasked")?;
                        self.respawn().await.map_err(|e| e.to_string())?;
                        outs = self.talk.ask(game, timing, serial);
                        break;
                    }
                }
            }
            if self.talk.thinking() && !thinking {
                thinking = true;
                deadline = Instant::now() + think;
            }
            if outs.is_empty() {
                let within = if thinking { think } else { started_by.saturating_duration_since(asked_at) };
                let line = self.process()?.hear(deadline, within).await.map_err(|e| e.to_string())?;
                outs = self.talk.hear(&line);
            }
        }
    }

    fn process(&mut self) -> Result<&mut Process, String> {
        self.process.as_mut().ok_or_else(|| "brain is not running".to_owned())
    }

    /// Stops the process (if any) and starts a new one.
    async fn respawn(&mut self) -> Result<(), EngineError> {
        // Dropping the old process kills it.
        self.process = None;
        self.talk.forget();
        self.process = Some(Process::spawn(&self.command).await?);
        Ok(())
    }

    /// The game is lost: the process is stopped, to be started afresh for
    /// the next game.
    fn forfeit(mut self: Box<Self>, why: String) -> Forfeit {
        // Dropping the process kills it.
        self.process = None;
        self.talk.forget();
        Forfeit { why, brain: self }
    }

    /// Starts a process if none runs (after a forfeit).
    async fn ensure_running(&mut self) -> Result<(), EngineError> {
        if self.process.is_none() {
            self.respawn().await?;
        }
        Ok(())
    }
}

/// What the brain is told of its time: `timeout_turn` the budget's
/// thinking time, but at most four fifths of the most the move may take (a
/// brain may overrun its turn time a little); `timeout_match` the clock's
/// initial time (0, no match limit, on the per-move timer); `time_left`
/// the most this move may take.
fn timing(budget: Budget) -> Timing {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let turn_ms = ms(budget.think).min(ms(budget.limit) / 5 * 4);
    match budget.clock {
        Some(clock) => Timing { turn_ms, match_ms: clock.initial_ms, left_ms: ms(budget.limit) },
        None => Timing { turn_ms, match_ms: 0, left_ms: UNLIMITED_MS },
    }
}

/// The `name="..."` of an `ABOUT` answer, as a name the server takes:
/// letters, digits and `-_.+`, single spaces, at most 24 characters.
pub fn about_name(line: &str) -> Option<String> {
    let start = line.find("name=\"")? + "name=\"".len();
    let len = line[start..].find('"')?;
    let kept: String = line[start..start + len]
        .chars()
        .map(|c| if c.is_alphanumeric() || "-_.+".contains(c) { c } else { ' ' })
        .collect();
    let name: String = kept.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(24).collect();
    let name = name.trim_end();
    (!name.is_empty()).then(|| name.to_owned())
}
