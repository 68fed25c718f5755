//! A match's results: each game as `--results` writes it (one JSON line),
//! and the tally, per game (wins, draws, losses) and per game pair (the
//! pentanomial counts), from PLAYER1's view.

use std::io::Write;

use serde::Serialize;

use super::stats::{Pentanomial, Wdl};

/// One game as `--results` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GameResult {
    /// The server's record (`/api/games/{id}`), when the server keeps records.
    pub game_id: Option<String>,
    /// The opening's moves, `[row, col]`.
    pub opening: Vec<[u16; 2]>,
    /// The PLAYER argument that played X.
    pub x: String,
    /// The PLAYER argument that played O.
    pub o: String,
    /// `1-0`, `0-1` or `1/2-1/2`, from X's view.
    pub result: &'static str,
    /// Why the game ended, as the server says (`line`, `timeout`, `resign`…).
    pub reason: String,
}

/// A game's result from X's view.
pub fn result_text(winner: Option<u8>) -> &'static str {
    match winner {
        Some(1) => "1-0",
        Some(2) => "0-1",
        _ => "1/2-1/2",
    }
}

impl GameResult {
    /// PLAYER1's points from this game in half points (0, 1 or 2), PLAYER1
    /// having played X when `player1_was_x`.
    fn half_points(&self, player1_was_x: bool) -> usize {
        match (self.result, player1_was_x) {
            ("1-0", true) | ("0-1", false) => 2,
            ("1/2-1/2", _) => 1,
            _ => 0,
        }
    }
}

/// The match so far, from PLAYER1's view.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Pair counts `[LL, LD, WL+DD, WD, WW]`.
    pub ptnml: Pentanomial,
    /// Game counts.
    pub wdl: Wdl,
}

impl Tally {
    /// Counts a game pair, PLAYER1 playing X in `first` and O in `second`.
    pub fn add_pair(&mut self, first: &GameResult, second: &GameResult) {
        let points = [first.half_points(true), second.half_points(false)];
        for p in points {
            match p {
                2 => self.wdl.wins += 1,
                1 => self.wdl.draws += 1,
                _ => self.wdl.losses += 1,
            }
        }
        self.ptnml.0[points[0] + points[1]] += 1;
    }
}

/// Where `--results` lines go: flushed per line, so a stopped match keeps
/// every game it finished.
pub struct ResultsFile(std::fs::File);

impl ResultsFile {
    /// Creates (or truncates) the file.
    pub fn create(path: &std::path::Path) -> Result<ResultsFile, String> {
        std::fs::File::create(path)
            .map(ResultsFile)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Appends one game.
    pub fn write(&mut self, game: &GameResult) -> std::io::Result<()> {
        let line = serde_json::to_string(game).map_err(std::io::Error::other)?;
        writeln!(self.0, "{line}")?;
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(result: &'static str) -> GameResult {
        GameResult {
            game_id: Some("g1".into()),
            opening: vec![[1, 1]],
            x: "builtin:perfect".into(),
            o: "builtin:random".into(),
            result,
            reason: "line".into(),
        }
    }

    #[test]
    fn pairs_are_counted_from_player1s_view() {
        let mut tally = Tally::default();
        // PLAYER1 wins as X, and as O (0-1 in the rematch): WW.
        tally.add_pair(&game("1-0"), &game("0-1"));
        // Wins as X, loses as O: WL.
        tally.add_pair(&game("1-0"), &game("1-0"));
        // Draw, then a loss as O: LD.
        tally.add_pair(&game("1/2-1/2"), &game("1-0"));
        assert_eq!(tally.ptnml.0, [0, 1, 1, 0, 1]);
        assert_eq!((tally.wdl.wins, tally.wdl.draws, tally.wdl.losses), (3, 1, 2));
        assert_eq!(tally.ptnml.pairs(), 3);
    }

    #[test]
    fn a_result_line_has_the_fields_of_the_contract() {
        let line = serde_json::to_value(game("1/2-1/2")).unwrap();
        assert_eq!(
            line,
            serde_json::json!({"game_id":"g1","opening":[[1,1]],"x":"builtin:perfect",
                "o":"builtin:random","result":"1/2-1/2","reason":"line"})
        );
    }
}
