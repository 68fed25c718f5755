//! The players of a match, as given on the command line, and the programs
//! that play them: every player is a process started for each game pair
//! with `TTT_SERVER`, `TTT_JOIN` and `TTT_NAME` in its environment, which
//! joins that room under that name and plays until the room closes.
//! `builtin:`, `engine:` and `gomocup:` players are this very `ttt` as
//! `ttt bot` (the same bot machinery, a crash kept out of the arena).

use std::process::Stdio;

use tokio::process::{Child, Command};

/// A player of the match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// The argument as given (`builtin:perfect`, `bot:python3 bot.py`…).
    pub spec: String,
    kind: Kind,
    /// The name its seat is reserved for.
    pub name: String,
}

/// What plays.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A strategy of `tictactoe-bots`.
    Builtin(String),
    /// A program speaking PROTOCOL.md's engine line protocol.
    Engine(String),
    /// A Gomocup (Piskvork protocol) brain.
    Gomocup(String),
    /// A program speaking the WebSocket protocol itself.
    Bot(String),
}

/// The strategies `builtin:` takes.
const BUILTINS: [&str; 3] = ["perfect", "heuristic", "random"];

/// The characters a reserved name keeps from its player's argument.
const NAME_CHARS: usize = 20;

impl Player {
    /// Reads a PLAYER argument; the error says what one looks like.
    pub fn parse(spec: &str) -> Result<Player, String> {
        let (kind, rest) = spec.split_once(':').unwrap_or(("", ""));
        let rest = rest.trim();
        let needs = |what: &str| format!("{spec:?}: {kind}: needs a command, as in {kind}:{what}");
        let kind = match kind {
            "builtin" if BUILTINS.contains(&rest) => Kind::Builtin(rest.to_owned()),
            "builtin" => return Err(format!("{spec:?}: builtin: is one of {}", BUILTINS.join(", "))),
            "engine" | "gomocup" | "bot" if rest.is_empty() => return Err(needs("./my-program")),
            "engine" => Kind::Engine(rest.to_owned()),
            "gomocup" => Kind::Gomocup(rest.to_owned()),
            "bot" => Kind::Bot(rest.to_owned()),
            _ => {
                return Err(format!(
                    "{spec:?} is not a player: use builtin:perfect|heuristic|random, engine:CMD, \
                     gomocup:CMD or bot:CMD"
                ));
            }
        };
        let name = match &kind {
            Kind::Builtin(strategy) => strategy.clone(),
            Kind::Engine(cmd) | Kind::Gomocup(cmd) | Kind::Bot(cmd) => program_name(cmd),
        };
        Ok(Player { spec: spec.to_owned(), kind, name })
    }

    /// Both players, their names made distinct (`perfect-1`, `perfect-2`
    /// for the same strategy on both sides).
    pub fn pair(first: &str, second: &str) -> Result<[Player; 2], String> {
        let (mut a, mut b) = (Player::parse(first)?, Player::parse(second)?);
        if a.name.to_lowercase() == b.name.to_lowercase() {
            a.name.push_str("-1");
            b.name.push_str("-2");
        }
        Ok([a, b])
    }

    /// Starts the program that plays this player's seat in room `room` of
    /// the server at `server`; what it prints goes to the arena's stderr.
    pub fn start(&self, server: &str, room: &str) -> std::io::Result<Child> {
        let ttt = || -> std::io::Result<Command> {
            let mut c = Command::new(std::env::current_exe()?);
            c.arg("bot");
            Ok(c)
        };
        let mut command = match &self.kind {
            Kind::Builtin(strategy) => {
                let mut c = ttt()?;
                c.args(["--strategy", strategy]);
                c
            }
            Kind::Engine(cmd) => {
                let mut c = ttt()?;
                c.args(["--engine", cmd]);
                c
            }
            Kind::Gomocup(cmd) => {
                let mut c = ttt()?;
                c.args(["--engine", cmd, "--engine-protocol", "gomocup"]);
                c
            }
            Kind::Bot(cmd) => {
                let mut c = Command::new("sh");
                c.args(["-c", cmd]);
                c
            }
        };
        command
            .env("TTT_SERVER", server)
            .env("TTT_JOIN", room)
            .env("TTT_NAME", &self.name)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command.spawn()
    }
}

/// A name from a command: its program's file name without extension, or
/// the script it runs (`python3 bots/mine.py` is `mine`), shortened.
fn program_name(cmd: &str) -> String {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let interpreters = ["python", "python3", "node", "sh", "bash", "ruby", "perl", "env"];
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    let chosen = words
        .iter()
        .find(|w| !interpreters.contains(&base(w).as_str()) && !w.starts_with('-'))
        .or(words.first())
        .map_or_else(|| "player".to_owned(), |w| base(w));
    let stem = chosen.split('.').next().filter(|s| !s.is_empty()).unwrap_or(&chosen);
    let clean: String =
        stem.chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_')).take(NAME_CHARS).collect();
    if clean.is_empty() { "player".to_owned() } else { clean }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_are_read_with_names_for_their_seats() {
        let [a, b] = Player::pair("builtin:perfect", "bot:python3 examples/bots/python/bot.py").unwrap();
        assert_eq!((a.name.as_str(), b.name.as_str()), ("perfect", "bot"));
        assert_eq!(b.kind, Kind::Bot("python3 examples/bots/python/bot.py".into()));
        let [a, b] = Player::pair("builtin:perfect", "builtin:perfect").unwrap();
        assert_eq!((a.name.as_str(), b.name.as_str()), ("perfect-1", "perfect-2"));
        let [_, g] = Player::pair("builtin:random", "gomocup:target/engines/pbrain-rapfi").unwrap();
        assert_eq!(g.name, "pbrain-rapfi");
    }

    #[test]
    fn a_bad_player_says_what_a_player_is() {
        assert!(Player::parse("builtin:best").unwrap_err().contains("perfect, heuristic, random"));
        assert!(Player::parse("engine:").unwrap_err().contains("needs a command"));
        assert!(Player::parse("perfect").unwrap_err().contains("is not a player"));
    }
}
