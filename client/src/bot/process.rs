//! An external program the bot talks to in lines over its stdin and stdout
//! (an engine or a Gomocup brain), read with a deadline so the client's
//! task stays free while it thinks.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::Instant;

use super::engine::EngineError;

/// How long a new program is watched for failing at once (a typo, a missing
/// file), and how long it has to exit when told to.
pub const START_CHECK: Duration = Duration::from_millis(100);

/// A running program and its pipes. It runs in a process group of its own
/// (the `sh` and what it starts), killed whole when this is dropped: a
/// brain that hangs is not left thinking after the bot gave up on it.
#[derive(Debug)]
pub struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Process {
    /// Starts `command` through `sh -c`, so it may carry arguments; one that
    /// ends at once is an error now, not when the first move is due.
    pub async fn spawn(command: &str) -> Result<Process, EngineError> {
        let mut child = Command::new("sh");
        child.args(["-c", command]).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        #[cfg(unix)]
        child.process_group(0);
        let mut child =
            child.spawn().map_err(|error| EngineError::Start { command: command.to_owned(), error })?;
        tokio::time::sleep(START_CHECK).await;
        if let Ok(Some(status)) = child.try_wait() {
            return Err(EngineError::ExitedAtStart { command: command.to_owned(), status });
        }
        let stdin = child.stdin.take().ok_or(EngineError::NoStdin)?;
        let stdout = BufReader::new(child.stdout.take().ok_or(EngineError::NoStdout)?);
        Ok(Process { child, stdin, stdout })
    }

    /// Writes `line` and a newline.
    pub async fn say(&mut self, line: &str) -> Result<(), EngineError> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let written = self.stdin.write_all(&bytes).await;
        written.and(self.stdin.flush().await).map_err(EngineError::StoppedReading)
    }

    /// The next line, trimmed, if it comes before `deadline`; `within` is
    /// the time it was given, for the error that says it did not.
    pub async fn hear(&mut self, deadline: Instant, within: Duration) -> Result<String, EngineError> {
        let mut line = String::new();
        match tokio::time::timeout_at(deadline, self.stdout.read_line(&mut line)).await {
            Err(_) => Err(EngineError::TooSlow { within }),
            Ok(Ok(0)) => Err(EngineError::Exited),
            Ok(Ok(_)) => Ok(line.trim().to_owned()),
            Ok(Err(e)) => Err(EngineError::Unreadable(e)),
        }
    }

    /// Says `last` (the program's word for "exit") and waits briefly for it
    /// to exit; it is killed if it does not.
    pub async fn quit(mut self, last: &str) {
        let _ = self.say(last).await;
        let _ = tokio::time::timeout(START_CHECK, self.child.wait()).await;
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // The group's id is the `sh`'s own pid (process_group(0)); gone already, nothing to do.
        #[cfg(unix)]
        if let Some(pid) =
            self.child.id().and_then(|id| rustix::process::Pid::from_raw(i32::try_from(id).ok()?))
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}
