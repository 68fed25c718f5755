//! The engine bridge: an external program chooses the moves, speaking a tiny
//! line protocol over its stdin and stdout (see PROTOCOL.md, "Engine bridge").
//!
//! To the engine: `position SIZE MARK BOARD`, where `BOARD` is the rows of
//! `X`, `O` and `.` joined by `/`; it answers one line `ROW COL` (0-based).
//! An unusable answer is told back as `error REASON` and the position is sent
//! again, up to three times. At the end the engine gets `quit`.

use std::time::Duration;

use tictactoe_protocol::Game;

use super::process::{Process, ProcessError};

/// Answers an engine may get wrong before the bridge gives up.
const ATTEMPTS: usize = 3;

/// Why an engine cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The process failed: it did not start, answer in time, or stay.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// Every attempt got an unusable answer.
    #[error("engine answered badly {ATTEMPTS} times; last: {last}")]
    BadAnswers {
        /// What was wrong with the last.
        last: BadAnswer,
    },
}

/// What is wrong with an engine's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadAnswer {
    /// The cell already has a mark.
    #[error("cell {row} {col} is taken")]
    Taken { row: usize, col: usize },
    /// Two numbers, but not on the board.
    #[error("{answer:?} is off the board")]
    OffBoard { answer: String },
    /// Not two numbers.
    #[error("{answer:?} is not \"ROW COL\"")]
    NotRowCol { answer: String },
}

/// A running engine process, driven without blocking the client: it keeps
/// answering the server's pings while the engine thinks.
#[derive(Debug)]
pub struct Engine {
    process: Process,
}

impl Engine {
    /// Starts `command` through `sh -c`, so it may carry arguments.
    pub async fn spawn(command: &str) -> Result<Engine, EngineError> {
        Ok(Engine { process: Process::spawn(command).await? })
    }

    async fn say(&mut self, line: &str) -> Result<(), EngineError> {
        Ok(self.process.say(line).await?)
    }

    async fn hear(&mut self, within: Duration) -> Result<String, EngineError> {
        Ok(self.process.hear(tokio::time::Instant::now() + within, within).await?)
    }

    /// Asks for a move in `game`, allowing `think` per answer.
    pub async fn choose(&mut self, game: &Game, think: Duration) -> Result<(usize, usize), EngineError> {
        let position = position_line(game);
        let mut last = None;
        for _ in 0..ATTEMPTS {
            self.say(&position).await?;
            let answer = self.hear(think).await?;
            match parse_answer(&answer, game) {
                Ok(cell) => return Ok(cell),
                Err(why) => {
                    self.say(&format!("error {why}")).await?;
                    last = Some(why);
                }
            }
        }
        let last = last.unwrap_or(BadAnswer::NotRowCol { answer: String::new() });
        Err(EngineError::BadAnswers { last })
    }

    /// Tells the engine the session is over and waits briefly for it to exit
    /// (it is killed if it does not).
    pub async fn quit(self) {
        self.process.quit("quit").await;
    }
}

/// The line that describes `game` to an engine.
pub fn position_line(game: &Game) -> String {
    let mark = game.turn().map_or('-', |p| p.mark());
    format!("position {} {} {}", game.size(), mark, game.board().join("/"))
}

/// Reads an engine's answer: two 0-based numbers naming an empty cell.
pub fn parse_answer(answer: &str, game: &Game) -> Result<(usize, usize), BadAnswer> {
    let mut parts = answer.split_whitespace().map(str::parse::<usize>);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(r)), Some(Ok(c)), None) if r < game.size() && c < game.size() => {
            if game.is_occupied(r, c) {
                Err(BadAnswer::Taken { row: r, col: c })
            } else {
                Ok((r, c))
            }
        }
        (Some(Ok(_)), Some(Ok(_)), None) => Err(BadAnswer::OffBoard { answer: answer.to_owned() }),
        _ => Err(BadAnswer::NotRowCol { answer: answer.to_owned() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_and_answers() {
        let mut g = Game::new(3).unwrap();
        g.play(1, 1).unwrap();
        assert_eq!(position_line(&g), "position 3 O .../.X./...");
        assert_eq!(parse_answer("0 2", &g), Ok((0, 2)));
        assert_eq!(parse_answer("1 1", &g).map_err(|e| e.to_string()), Err("cell 1 1 is taken".into()));
        assert_eq!(
            parse_answer("3 0", &g).map_err(|e| e.to_string()),
            Err("\"3 0\" is off the board".into())
        );
        assert_eq!(
            parse_answer("b2", &g).map_err(|e| e.to_string()),
            Err("\"b2\" is not \"ROW COL\"".into())
        );
        assert!(parse_answer("b2", &g).is_err());
        assert!(parse_answer("0 1 2", &g).is_err());
    }

    #[tokio::test]
    async fn a_shell_engine_is_asked_again_after_a_bad_answer() {
        let think = Duration::from_secs(5);
        // Answers nonsense first, then 0 0.
        let script = "read l; echo nonsense; read e; read l; echo 0 0; read q";
        let mut engine = Engine::spawn(script).await.unwrap();
        assert_eq!(engine.choose(&Game::new(3).unwrap(), think).await.ok(), Some((0, 0)));
        engine.quit().await;
        // One that dies at once is refused at start; one that dies later, at its move.
        assert!(Engine::spawn("true").await.unwrap_err().to_string().contains("exited at start"));
        let mut dying = Engine::spawn("read l; exit 0").await.unwrap();
        assert!(
            dying.choose(&Game::new(3).unwrap(), think).await.unwrap_err().to_string().contains("exited")
        );
    }

    #[tokio::test]
    async fn an_engine_that_thinks_too_long_is_given_up() {
        let mut slow = Engine::spawn("read l; sleep 5; echo 0 0").await.unwrap();
        let err =
            slow.choose(&Game::new(3).unwrap(), Duration::from_millis(100)).await.unwrap_err().to_string();
        assert!(err.contains("did not answer within 100 ms"), "{err}");
    }
}
