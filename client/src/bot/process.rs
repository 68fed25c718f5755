//! An external program the bot talks to in lines over its stdin and stdout
//! (an engine or a Gomocup brain), read with a deadline so the client's
//! task stays free while it thinks.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::Instant;

/// How long a new program is watched for failing at once (a typo, a missing
/// file), and how long it has to exit when told to.
pub const START_CHECK: Duration = Duration::from_millis(100);

/// Why a program the bot talks to (an engine, a brain) cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The command could not be started.
    #[error("cannot start engine {command:?}: {error}")]
    Start { command: String, error: std::io::Error },
    /// The command ended at once (a typo, a missing file).
    #[error("engine {command:?} exited at start ({status})")]
    ExitedAtStart { command: String, status: std::process::ExitStatus },
    /// The process was started without a pipe to its stdin.
    #[error("engine has no stdin")]
    NoStdin,
    /// The process was started without a pipe from its stdout.
    #[error("engine has no stdout")]
    NoStdout,
    /// Writing to the engine failed.
    #[error("engine stopped reading: {0}")]
    StoppedReading(std::io::Error),
    /// No answer within the time to think.
    #[error("engine did not answer within {} ms (--think-ms, or the time its clock left)", within.as_millis())]
    TooSlow {
        /// The time it had.
        within: Duration,
    },
    /// The engine's stdout ended.
    #[error("engine exited")]
    Exited,
    /// Reading from the engine failed.
    #[error("cannot read the engine: {0}")]
    Unreadable(std::io::Error),
}

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
    pub async fn spawn(command: &str) -> Result<Process, ProcessError> {
        let mut child = Command::new("sh");
        child.args(["-c", command]).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        #[cfg(unix)]
        child.process_group(0);
        let mut child =
            child.spawn().map_err(|error| ProcessError::Start { command: command.to_owned(), error })?;
        tokio::time::sleep(START_CHECK).await;
        if let Ok(Some(status)) = child.try_wait() {
            return Err(ProcessError::ExitedAtStart { command: command.to_owned(), status });
        }
        let stdin = child.stdin.take().ok_or(ProcessError::NoStdin)?;
        let stdout = BufReader::new(child.stdout.take().ok_or(ProcessError::NoStdout)?);
        Ok(Process { child, stdin, stdout })
    }

    /// Writes `line` and a newline.
    pub async fn say(&mut self, line: &str) -> Result<(), ProcessError> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let written = self.stdin.write_all(&bytes).await;
        written.and(self.stdin.flush().await).map_err(ProcessError::StoppedReading)
    }

    /// The next line, trimmed, if it comes before `deadline`; `within` is
    /// the time it was given, for the error that says it did not.
    pub async fn hear(&mut self, deadline: Instant, within: Duration) -> Result<String, ProcessError> {
        let mut line = String::new();
        match tokio::time::timeout_at(deadline, self.stdout.read_line(&mut line)).await {
            Err(_) => Err(ProcessError::TooSlow { within }),
            Ok(Ok(0)) => Err(ProcessError::Exited),
            Ok(Ok(_)) => Ok(line.trim().to_owned()),
            Ok(Err(e)) => Err(ProcessError::Unreadable(e)),
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
