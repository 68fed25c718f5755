//! The engine bridge: an external program chooses the moves, speaking a tiny
//! line protocol over its stdin and stdout (see PROTOCOL.md, "Engine bridge").
//!
//! To the engine: `position SIZE MARK BOARD`, where `BOARD` is the rows of
//! `X`, `O` and `.` joined by `/`; it answers one line `ROW COL` (0-based).
//! An unusable answer is told back as `error REASON` and the position is sent
//! again, up to three times. At the end the engine gets `quit`.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use tictactoe_protocol::Game;

/// Answers an engine may get wrong before the bridge gives up.
const ATTEMPTS: usize = 3;

/// How long a new engine is watched for failing at once (a typo, a missing file).
const START_CHECK: Duration = Duration::from_millis(100);

/// A running engine process, driven without blocking the client: it keeps
/// answering the server's pings while the engine thinks.
#[derive(Debug)]
pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    /// Starts `command` through `sh -c`, so it may carry arguments.
    pub async fn spawn(command: &str) -> Result<Engine, String> {
        let mut child = Command::new("sh")
            .args(["-c", command])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start engine {command:?}: {e}"))?;
        // A command that fails at once is reported now, not when the first move is due.
        tokio::time::sleep(START_CHECK).await;
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("engine {command:?} exited at start ({status})"));
        }
        let stdin = child.stdin.take().ok_or("engine has no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("engine has no stdout")?);
        Ok(Engine { child, stdin, stdout })
    }

    async fn say(&mut self, line: &str) -> Result<(), String> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let written = self.stdin.write_all(&bytes).await;
        written.and(self.stdin.flush().await).map_err(|e| format!("engine stopped reading: {e}"))
    }

    async fn hear(&mut self, within: Duration) -> Result<String, String> {
        let mut line = String::new();
        match tokio::time::timeout(within, self.stdout.read_line(&mut line)).await {
            Err(_) => Err(format!("engine did not answer within {} ms (--think-ms)", within.as_millis())),
            Ok(Ok(0)) => Err("engine exited".into()),
            Ok(Ok(_)) => Ok(line.trim().to_owned()),
            Ok(Err(e)) => Err(format!("cannot read the engine: {e}")),
        }
    }

    /// Asks for a move in `game`, allowing `think` per answer.
    pub async fn choose(&mut self, game: &Game, think: Duration) -> Result<(usize, usize), String> {
        let position = position_line(game);
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            self.say(&position).await?;
            let answer = self.hear(think).await?;
            match parse_answer(&answer, game) {
                Ok(cell) => return Ok(cell),
                Err(why) => {
                    self.say(&format!("error {why}")).await?;
                    last = why;
                }
            }
        }
        Err(format!("engine answered badly {ATTEMPTS} times; last: {last}"))
    }

    /// Tells the engine the session is over and waits briefly for it to exit
    /// (it is killed if it does not).
    pub async fn quit(mut self) {
        let _ = self.say("quit").await;
        let _ = tokio::time::timeout(START_CHECK, self.child.wait()).await;
    }
}

/// The line that describes `game` to an engine.
pub fn position_line(game: &Game) -> String {
    let mark = game.turn().map_or('-', |p| p.mark());
    format!("position {} {} {}", game.size(), mark, game.board().join("/"))
}

/// Reads an engine's answer: two 0-based numbers naming an empty cell.
pub fn parse_answer(answer: &str, game: &Game) -> Result<(usize, usize), String> {
    let mut parts = answer.split_whitespace().map(str::parse::<usize>);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(r)), Some(Ok(c)), None) if r < game.size() && c < game.size() => {
            if game.is_occupied(r, c) {
                Err(format!("cell {r} {c} is taken"))
            } else {
                Ok((r, c))
            }
        }
        (Some(Ok(_)), Some(Ok(_)), None) => Err(format!("{answer:?} is off the board")),
        _ => Err(format!("{answer:?} is not \"ROW COL\"")),
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
        assert!(parse_answer("1 1", &g).unwrap_err().contains("taken"));
        assert!(parse_answer("3 0", &g).unwrap_err().contains("off the board"));
        assert!(parse_answer("b2", &g).is_err());
        assert!(parse_answer("0 1 2", &g).is_err());
    }

    #[tokio::test]
    async fn a_shell_engine_is_asked_again_after_a_bad_answer() {
        let think = Duration::from_secs(5);
        // Answers nonsense first, then 0 0.
        let script = "read l; echo nonsense; read e; read l; echo 0 0; read q";
        let mut engine = Engine::spawn(script).await.unwrap();
        assert_eq!(engine.choose(&Game::new(3).unwrap(), think).await, Ok((0, 0)));
        engine.quit().await;
        // One that dies at once is refused at start; one that dies later, at its move.
        assert!(Engine::spawn("true").await.unwrap_err().contains("exited at start"));
        let mut dying = Engine::spawn("read l; exit 0").await.unwrap();
        assert!(dying.choose(&Game::new(3).unwrap(), think).await.unwrap_err().contains("exited"));
    }

    #[tokio::test]
    async fn an_engine_that_thinks_too_long_is_given_up() {
        let mut slow = Engine::spawn("read l; sleep 5; echo 0 0").await.unwrap();
        let err = slow.choose(&Game::new(3).unwrap(), Duration::from_millis(100)).await.unwrap_err();
        assert!(err.contains("did not answer within 100 ms"), "{err}");
    }
}
