//! The HTTP API's answers (`/api/games/{id}`, `/api/players/{name}`,
//! `/api/players/{name}/games`, `/api/leaderboard`): what the server sends
//! and what clients read, one type each.
//!
//! Fields are declared in alphabetical order, the order the answers have
//! always had on the wire, so that a byte-for-byte comparison with an older
//! server's answer holds. Every field is always present; `null` stands for
//! "none". Unknown fields are ignored when reading.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::clock::Fischer;
use crate::game::Line;
use crate::message::EndReason;

/// One finished game: `/api/games/{id}`, and each entry of a player's games.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GameRecord {
    /// Which sides went berserk in a tournament game, `[player 1, player 2]`.
    #[serde(default)]
    pub berserk: [bool; 2],
    /// Its Fischer clock; null for the per-move timer.
    #[serde(default)]
    pub clock: Option<Fischer>,
    /// With a clock: each side's time left after each move, `[player 1,
    /// player 2]`, like `moves`; null without one.
    #[serde(default)]
    pub clocks: Option<Vec<[u64; 2]>>,
    /// When it ended: RFC 3339, UTC, to the millisecond.
    pub ended_at: String,
    /// The organiser's name, for a game of an organised room; else null.
    #[serde(default)]
    pub host: Option<String>,
    /// The id `game_over.game_id` carried.
    pub id: String,
    /// The winning run, when it ended by one.
    #[serde(serialize_with = "line_in_key_order")]
    pub line: Option<Line>,
    /// The moves in play order, each `[row, col]`, the opening's first.
    pub moves: Vec<[u16; 2]>,
    /// How many of `moves` are the room's opening (0 for none).
    #[serde(default)]
    pub opening: usize,
    /// Player 1 (`X`), then player 2.
    pub players: [GamePlayer; 2],
    /// Whether it moved ratings.
    pub rated: bool,
    /// Both players' ratings before and after, like `players`; null when unrated.
    pub ratings: Option<[RatingMove; 2]>,
    /// Why it ended.
    pub reason: EndReason,
    /// The room it was played in.
    pub room: String,
    /// Board size.
    pub size: usize,
    /// When it started: RFC 3339, UTC, to the millisecond.
    pub started_at: String,
    /// The arena tournament it was played in, by id; null for none.
    #[serde(default)]
    pub tournament: Option<String>,
    /// Marks in a row that win.
    pub win: usize,
    /// 1 or 2 for the winner's seat, 0 for none.
    pub winner: u8,
}

/// Writes a line with its keys in alphabetical order, like every other
/// object of the answers (`game_over` spells the same fields in another order).
fn line_in_key_order<S: serde::Serializer>(line: &Option<Line>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Sorted {
        cells: Vec<[u16; 2]>,
        index: i64,
        kind: crate::game::LineKind,
    }
    line.map(|l| Sorted { cells: l.cells().collect(), index: l.index, kind: l.kind }).serialize(s)
}

/// A seat of a [`GameRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GamePlayer {
    /// Whether the player was signed in to an account.
    pub account: bool,
    /// Whether the player was a bot.
    pub bot: bool,
    /// The name played under.
    pub name: String,
    /// The rating the game started from, rounded; null when unrated.
    pub rating: Option<i64>,
}

/// One player's rating before and after a rated game, rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RatingMove {
    /// The rating the game ended with.
    pub after: i64,
    /// The rating the game started from.
    pub before: i64,
}

/// `/api/players/{name}`: an account, its standings and results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlayerProfile {
    /// Whether it is a bot's account.
    pub bot: bool,
    /// When it was registered: RFC 3339, UTC, to the millisecond.
    pub created_at: String,
    /// The name as registered.
    pub name: String,
    /// Its standing in each pool it has played, by pool key (`"3"`, `"15/5"`).
    pub ratings: BTreeMap<String, PoolStanding>,
    /// What its recorded games came to.
    pub results: Results,
}

/// An account's standing in one pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PoolStanding {
    /// Rated games played in the pool.
    pub games: u64,
    /// The rating, rounded.
    pub rating: i64,
    /// The rating deviation, rounded.
    pub rd: i64,
}

/// Every recorded game of an account by how it ended: wins, draws and
/// losses, and the games that ended with no result. They add up to the
/// number of games `/api/players/{name}/games` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Results {
    /// Games ended `aborted`: before each side had made a move.
    #[serde(default)]
    pub aborted: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games ended by a server's `shutdown`, with no winner.
    #[serde(default)]
    pub interrupted: u64,
    /// Games lost.
    pub losses: u64,
    /// Games won.
    pub wins: u64,
}

/// `/api/players/{name}/games`: a page of a player's games, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PlayerGames {
    /// The games.
    pub games: Vec<GameRecord>,
}

/// `/api/leaderboard`: one pool's best players.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Leaderboard {
    /// Best first; only accounts with a rated game in the pool.
    pub players: Vec<LeaderboardEntry>,
    /// The pool's board size.
    pub size: usize,
    /// The pool's win length.
    pub win: usize,
}

/// One account on a [`Leaderboard`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LeaderboardEntry {
    /// Whether it is a bot's account.
    pub bot: bool,
    /// Rated games played in the pool.
    pub games: u64,
    /// The name as registered.
    pub name: String,
    /// The rating, rounded.
    pub rating: i64,
    /// The rating deviation, rounded.
    pub rd: i64,
}

/// The body of every API answer that is not a 200: what went wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApiError {
    /// Plain words for a person.
    pub error: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::LineKind;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    /// Serializing then reading back gives the same value, and the JSON has
    /// exactly the contract's fields.
    fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T, keys: &[&str]) {
        let json = serde_json::to_value(value).expect("serialize");
        // A `Value`'s keys are sorted: the text has them in that order too.
        assert_eq!(serde_json::to_string(value).expect("serialize"), json.to_string());
        let got: Vec<&str> = json.as_object().expect("an object").keys().map(String::as_str).collect();
        assert_eq!(got, keys);
        let back: T = serde_json::from_value(json).expect("deserialize");
        assert_eq!(&back, value);
    }

    fn record(rated: bool) -> GameRecord {
        let player = |name: &str| GamePlayer {
            account: rated,
            bot: false,
            name: name.into(),
            rating: rated.then_some(1500),
        };
        GameRecord {
            berserk: [false; 2],
            tournament: None,
            host: None,
            opening: 0,
            clock: None,
            clocks: None,
            ended_at: "2026-11-25T06:31:29.123Z".into(),
            id: "Ab3dEf9h".into(),
            line: rated.then_some(Line { kind: LineKind::Row, index: 0, start: [0, 0], len: 3 }),
            moves: vec![[0, 0], [1, 1], [0, 1], [2, 2], [0, 2]],
            players: [player("ann"), player("bob")],
            rated,
            ratings: rated.then_some([
                RatingMove { after: 1662, before: 1500 },
                RatingMove { after: 1338, before: 1500 },
            ]),
            reason: if rated { EndReason::Line } else { EndReason::Resign },
            room: "K7PX".into(),
            size: 3,
            started_at: "2026-11-25T06:30:00.000Z".into(),
            win: 3,
            winner: 1,
        }
    }

    const RECORD_KEYS: [&str; 19] = [
        "berserk",
        "clock",
        "clocks",
        "ended_at",
        "host",
        "id",
        "line",
        "moves",
        "opening",
        "players",
        "rated",
        "ratings",
        "reason",
        "room",
        "size",
        "started_at",
        "tournament",
        "win",
        "winner",
    ];

    #[test]
    fn every_answer_round_trips_with_the_contracts_fields() {
        for rated in [true, false] {
            round_trip(&record(rated), &RECORD_KEYS);
            round_trip(&record(rated).players[0], &["account", "bot", "name", "rating"]);
        }
        round_trip(&RatingMove { after: 1, before: 2 }, &["after", "before"]);
        round_trip(&PlayerGames { games: vec![record(true), record(false)] }, &["games"]);
        round_trip(&PlayerGames::default(), &["games"]);
        let standing = PoolStanding { games: 4, rating: 1612, rd: 200 };
        round_trip(&standing, &["games", "rating", "rd"]);
        let results = Results { aborted: 4, draws: 1, interrupted: 5, losses: 2, wins: 3 };
        round_trip(&results, &["aborted", "draws", "interrupted", "losses", "wins"]);
        let profile = PlayerProfile {
            bot: true,
            created_at: "2026-11-25T06:30:00.000Z".into(),
            name: "Zoë".into(),
            ratings: [("3".to_owned(), standing), ("15/5".to_owned(), standing)].into(),
            results,
        };
        round_trip(&profile, &["bot", "created_at", "name", "ratings", "results"]);
        let entry = LeaderboardEntry { bot: false, games: 3, name: "ann".into(), rating: 1600, rd: 250 };
        round_trip(&entry, &["bot", "games", "name", "rating", "rd"]);
        round_trip(&Leaderboard { players: vec![entry], size: 15, win: 5 }, &["players", "size", "win"]);
        round_trip(&ApiError { error: "no game has that id".into() }, &["error"]);
    }

    /// What is none is `null`, never left out; the reason and the line read
    /// as `game_over` spells them.
    #[test]
    fn a_game_records_shape_is_the_contracts() {
        let json = serde_json::to_value(record(false)).expect("serialize");
        assert_eq!(json["line"], json!(null));
        assert_eq!(json["ratings"], json!(null));
        assert_eq!(json["players"][0]["rating"], json!(null));
        assert_eq!(json["reason"], json!("resign"));
        let json = serde_json::to_value(record(true)).expect("serialize");
        assert_eq!(json["line"], json!({"kind": "row", "index": 0, "cells": [[0, 0], [0, 1], [0, 2]]}));
        assert_eq!(
            json["ratings"],
            json!([{"before": 1500, "after": 1662}, {"before": 1500, "after": 1338}])
        );
        assert_eq!(json["moves"][4], json!([0, 2]));
    }
}
