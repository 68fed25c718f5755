//! What a store that cannot write holds at shutdown, spilled to a file of
//! JSON lines (`ttt-unsaved-*.jsonl`) so that nothing accepted is dropped
//! without a trace, and read back by `ttt-server import` or at the next start.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use skillratings::glicko2::Glicko2Rating;
use tictactoe_protocol::{EndReason, Fischer, Line, Player};

use crate::core::account::Identity;
use crate::ratings::{Rated, Standing};
use crate::store::record::GameRecord;
use tictactoe_protocol::Rules;

/// The prefix and suffix of a spill file's name.
const PREFIX: &str = "ttt-unsaved-";
const SUFFIX: &str = ".jsonl";

/// One line of a spill file: a finished game.
#[derive(Debug, Serialize, Deserialize)]
struct Spilled {
    kind: String,
    id: String,
    room: String,
    size: usize,
    win: usize,
    players: [SpilledPlayer; 2],
    moves: Vec<[u16; 2]>,
    /// 0 for a draw or none, else the winner's number.
    winner: u8,
    reason: EndReason,
    line: Option<Line>,
    ratings: Option<[[SpilledStanding; 2]; 2]>,
    started_at_ms: i64,
    ended_at_ms: i64,
    /// A Fischer game's clock (files before time controls have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clock: Option<Fischer>,
    /// With a clock: the mover's time left after each move.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    times: Vec<u64>,
    /// How many of `moves` are its room's opening.
    #[serde(default)]
    opening: usize,
    /// An organised room's host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host: Option<String>,
    /// The arena tournament it was played in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tournament: Option<String>,
    /// Which sides went berserk, player 1 first.
    #[serde(default, skip_serializing_if = "none_berserk")]
    berserk: [bool; 2],
}

/// Whether neither side went berserk: the line leaves the field out.
fn none_berserk(berserk: &[bool; 2]) -> bool {
    berserk == &[false; 2]
}

#[derive(Debug, Serialize, Deserialize)]
struct SpilledPlayer {
    name: String,
    account: Option<i64>,
    bot: bool,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct SpilledStanding {
    rating: f64,
    rd: f64,
    volatility: f64,
    games: u32,
}

impl From<Standing> for SpilledStanding {
    fn from(s: Standing) -> Self {
        SpilledStanding {
            rating: s.rating.rating,
            rd: s.rating.deviation,
            volatility: s.rating.volatility,
            games: s.games,
        }
    }
}

impl From<SpilledStanding> for Standing {
    fn from(s: SpilledStanding) -> Self {
        let rating = Glicko2Rating { rating: s.rating, deviation: s.rd, volatility: s.volatility };
        Standing { rating, games: s.games }
    }
}

fn line_of(g: &GameRecord) -> String {
    let [x, o] = &g.players;
    let player = |p: &Identity| SpilledPlayer { name: p.name.to_string(), account: p.account, bot: p.bot };
    let spilled = Spilled {
        kind: "game".into(),
        id: g.id.to_string(),
        room: g.room.to_string(),
        size: g.rules.size,
        win: g.rules.win,
        players: [player(x), player(o)],
        moves: g.moves.clone(),
        winner: g.winner.map_or(0, Player::number),
        reason: g.reason,
        line: g.line,
        ratings: g.ratings.map(|r| r.map(|p| [p.before.into(), p.after.into()])),
        started_at_ms: g.started_at_ms,
        ended_at_ms: g.ended_at_ms,
        clock: g.rules.clock,
        times: g.times.clone(),
        opening: g.opening,
        host: g.host.as_deref().map(str::to_owned),
        tournament: g.tournament.as_deref().map(str::to_owned),
        berserk: g.berserk,
    };
    serde_json::to_string(&spilled).unwrap_or_default()
}

fn record_of(s: Spilled) -> Result<GameRecord, String> {
    if s.kind != "game" {
        return Err(format!("unknown kind {:?}", s.kind));
    }
    let winner = match s.winner {
        0 => None,
        1 => Some(Player::X),
        2 => Some(Player::O),
        n => return Err(format!("winner {n} is not 0, 1 or 2")),
    };
    let player = |p: SpilledPlayer| {
        Arc::new(Identity { name: p.name.into(), account: p.account, bot: p.bot, ratings: Box::default() })
    };
    let [x, o] = s.players;
    Ok(GameRecord {
        berserk: s.berserk,
        tournament: s.tournament.map(Arc::from),
        host: s.host.map(Arc::from),
        opening: s.opening,
        id: s.id.into(),
        room: s.room.into(),
        rules: Rules { clock: s.clock, size: s.size, win: s.win },
        players: [player(x), player(o)],
        moves: s.moves,
        times: s.times,
        winner,
        reason: s.reason,
        line: s.line,
        ratings: s
            .ratings
            .map(|r| r.map(|[before, after]| Rated { before: before.into(), after: after.into() })),
        started_at_ms: s.started_at_ms,
        ended_at_ms: s.ended_at_ms,
    })
}

/// Writes `games` to a new spill file in `dir`; its path, or why not.
pub(super) fn write(dir: &Path, games: &[GameRecord]) -> std::io::Result<PathBuf> {
    let stamp = crate::store::record::unix_ms(std::time::SystemTime::now());
    let path = dir.join(format!("{PREFIX}{stamp}-{}{SUFFIX}", std::process::id()));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path)?;
    let mut text = String::new();
    for g in games {
        text.push_str(&line_of(g));
        text.push('\n');
    }
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(path)
}

/// The lines a spill file would hold, for stderr when not even it can be written.
pub(super) fn lines(games: &[GameRecord]) -> impl Iterator<Item = String> + '_ {
    games.iter().map(line_of)
}

/// Reads a spill file back.
pub(super) fn read(path: &Path) -> Result<Vec<GameRecord>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut games = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let spilled: Spilled = serde_json::from_str(&line)
            .map_err(|e| format!("{} line {}: not a spilled game: {e}", path.display(), i + 1))?;
        games.push(record_of(spilled).map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?);
    }
    Ok(games)
}

/// The spill files waiting in `dir`, oldest first.
pub(super) fn waiting(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX))
        })
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratings::{Standing, rate};

    #[test]
    fn a_spilled_game_reads_back_the_same_with_its_tournament_and_berserk() {
        let ratings = Some(rate([Standing::default(); 2], Some(0)));
        let game = GameRecord {
            berserk: [false, true],
            tournament: Some("0TourNament0001".into()),
            host: None,
            opening: 0,
            times: Vec::new(),
            id: "abcdEFGH".into(),
            room: "ROOM1".into(),
            rules: Rules { clock: None, size: 15, win: 5 },
            players: [
                Arc::new(Identity {
                    name: "ann".into(),
                    account: Some(1),
                    bot: false,
                    ratings: Box::default(),
                }),
                Arc::new(Identity {
                    name: "bob \"the\" bot".into(),
                    account: Some(2),
                    bot: true,
                    ratings: Box::default(),
                }),
            ],
            moves: vec![[0, 0], [1, 1], [0, 1]],
            winner: Some(Player::X),
            reason: EndReason::Resign,
            line: None,
            ratings,
            started_at_ms: 1_700_000_000_000,
            ended_at_ms: 1_700_000_060_000,
        };
        let dir = std::env::temp_dir().join(format!("ttt-spill-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = write(&dir, std::slice::from_ref(&game)).expect("write");
        assert_eq!(waiting(&dir), vec![path.clone()]);
        assert_eq!(read(&path).expect("read"), vec![game.clone()]);
        // A line of a server before tournaments reads as a game of none.
        let mut plain = GameRecord { tournament: None, berserk: [false; 2], ..game };
        plain.id = "plainGame".into();
        let older = std::fs::read_to_string(&path).expect("read");
        let mut line: serde_json::Value = serde_json::from_str(older.trim()).expect("json");
        let fields = line.as_object_mut().expect("an object");
        assert!(fields.remove("tournament").is_some() && fields.remove("berserk").is_some(), "{fields:?}");
        fields.insert("id".into(), "plainGame".into());
        std::fs::write(&path, format!("{line}\n")).expect("write");
        assert_eq!(read(&path).expect("read"), vec![plain]);
        std::fs::remove_dir_all(&dir).expect("clean");
    }
}
