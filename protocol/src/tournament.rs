//! Arena tournaments (compete.md, "Arena tournaments"): their terms and the
//! check of a `tournament_create`, the standings as the wire and the API
//! show them, and the one scoring rule — a pure fold of a tournament's
//! finished games — that the server's standings, the client and the tests'
//! recomputation from the records all use.

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::clock::Fischer;
use crate::game::Player;
use crate::message::EndReason;

/// The `duration_ms` a tournament may last: a minute to twelve hours.
pub const DURATION_MS: RangeInclusive<u64> = 60_000..=43_200_000;
/// The `starts_in_ms` a tournament may wait before it starts: up to a day.
pub const STARTS_IN_MS: RangeInclusive<u64> = 0..=86_400_000;
/// The longest tournament name, in characters.
pub const MAX_NAME_CHARS: usize = 40;
/// How long after the first `game_started` a player may `berserk`: before
/// their first move, as long as the first move's own 30 s.
pub const BERSERK_MS: u64 = Fischer::FIRST_MOVE_MS;

/// Where a tournament is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TournamentStatus {
    /// Created; players may join; no game yet.
    Starting,
    /// Players are paired as they come free.
    Running,
    /// Its time is up: no new game starts (games still being played count).
    Finished,
}

impl TournamentStatus {
    /// The status at `now_ms` of a tournament running from `starts_at` to `ends_at` (Unix ms).
    pub fn at(now_ms: i64, starts_at: i64, ends_at: i64) -> TournamentStatus {
        if now_ms < starts_at {
            TournamentStatus::Starting
        } else if now_ms < ends_at {
            TournamentStatus::Running
        } else {
            TournamentStatus::Finished
        }
    }
}

/// A tournament's terms, as created: what every game of it plays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Terms {
    /// Its name, shown in lists.
    pub name: String,
    /// Board size.
    pub size: usize,
    /// Marks in a row that win.
    pub win: usize,
    /// Every game's Fischer clock.
    pub clock: Fischer,
    /// How long it runs, in ms.
    pub duration_ms: u64,
}

impl Terms {
    /// The terms of a `tournament_create`, checked: the refusal names the
    /// field at fault (`invalid_tournament`). `sizes` is the server's range
    /// of board sizes.
    pub fn checked(
        name: &str,
        size: Option<i64>,
        win: Option<i64>,
        clock: Option<Fischer>,
        duration_ms: Option<i64>,
        sizes: &RangeInclusive<usize>,
    ) -> Result<Terms, String> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
            return Err(format!("name must be 1 to {MAX_NAME_CHARS} printable characters"));
        }
        let size = match size {
            None => 3,
            Some(s) => usize::try_from(s).ok().filter(|s| sizes.contains(s)).ok_or_else(|| {
                format!("size must be an integer from {} to {}", sizes.start(), sizes.end())
            })?,
        };
        let wins = size.min(3)..=size;
        let win = match win {
            None => size,
            Some(w) => usize::try_from(w)
                .ok()
                .filter(|w| wins.contains(w))
                .ok_or_else(|| format!("win must be an integer from {} to {size}", wins.start()))?,
        };
        let Some(clock) = clock else {
            return Err(format!("clock is required: {}", Fischer::field_refusal("clock")));
        };
        let duration_ms = duration_ms
            .and_then(|d| u64::try_from(d).ok())
            .filter(|d| DURATION_MS.contains(d))
            .ok_or_else(|| {
                format!(
                    "duration_ms must be an integer from {} to {}",
                    DURATION_MS.start(),
                    DURATION_MS.end()
                )
            })?;
        Ok(Terms { name: name.to_owned(), size, win, clock, duration_ms })
    }

    /// The checked `starts_in_ms`: absent is 0.
    pub fn starts_in(starts_in_ms: Option<i64>) -> Result<u64, String> {
        starts_in_ms.map_or(Ok(0), |s| {
            u64::try_from(s).ok().filter(|s| STARTS_IN_MS.contains(s)).ok_or_else(|| {
                format!(
                    "starts_in_ms must be an integer from {} to {}",
                    STARTS_IN_MS.start(),
                    STARTS_IN_MS.end()
                )
            })
        })
    }

    /// Own moves a berserk win needs for its extra point: min(7, ⌈size²/4⌉).
    pub fn berserk_moves(&self) -> usize {
        (self.size * self.size).div_ceil(4).min(7)
    }

    /// Moves (both sides') a draw needs to score: min(10, ⌈size²/2⌉).
    pub fn draw_moves(&self) -> usize {
        (self.size * self.size).div_ceil(2).min(10)
    }
}

/// A tournament as lists show it (`tournaments`, `/api/tournaments`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentSummary {
    /// Its id (`tournament_join`, `game_started.tournament`, `/api/tournaments/{id}`).
    pub id: Arc<str>,
    /// Its name.
    pub name: String,
    /// The account that created it.
    pub created_by: String,
    /// Board size.
    pub size: usize,
    /// Marks in a row that win.
    pub win: usize,
    /// Every game's clock.
    pub clock: Fischer,
    /// How long it runs, in ms.
    pub duration_ms: u64,
    /// When it starts (Unix ms).
    pub starts_at: i64,
    /// When its time is up (Unix ms): no game starts after.
    pub ends_at: i64,
    /// Where it is.
    pub status: TournamentStatus,
    /// Players who joined it (paused ones too).
    pub players: usize,
}

/// One row of the standings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Standing {
    /// 1-based, in the order of the standings.
    pub rank: usize,
    /// The account's name.
    pub name: String,
    /// Points.
    pub score: u32,
    /// Games counted (aborted ones are not).
    pub games: u32,
    /// On a streak: two or more wins in a row, so a win scores 4 and a draw 2.
    pub streak: bool,
    /// Each counted game's points, in the order played.
    pub results: Vec<u32>,
    /// Performance rating: the mean of each opponent's rating ±500 for a
    /// win or a loss, rounded; null before a counted game.
    pub performance: Option<i64>,
    /// Left (paused): not paired until joining again.
    pub paused: bool,
}

/// A tournament with its standings and games: `tournament_update` and
/// `/api/tournaments/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentView {
    /// Its terms and status.
    #[serde(flatten)]
    pub summary: TournamentSummary,
    /// Sorted by rank: score, then performance, then name.
    pub standings: Vec<Standing>,
    /// Its finished games' ids, in the order they ended.
    pub games: Vec<Arc<str>>,
}

/// A finished game of a tournament as the scoring reads it from its record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoredGame {
    /// The record's id.
    pub id: Arc<str>,
    /// When it ended (Unix ms): a player's games count in this order.
    pub ended_at: i64,
    /// Player 1's account name, then player 2's.
    pub players: [String; 2],
    /// The winner's seat, `None` for a draw or a game without a winner.
    pub winner: Option<Player>,
    /// How it ended (aborted and shut-down games are not counted).
    pub reason: EndReason,
    /// Moves of each side, player 1 first.
    pub moves: [usize; 2],
    /// Whether each side went berserk.
    pub berserk: [bool; 2],
    /// Each side's rating before the game, when it was rated.
    pub ratings: [Option<i64>; 2],
}

/// The rating assumed of an opponent whose game kept none.
const UNRATED: i64 = 1500;

/// One player's running tally while the games are folded.
#[derive(Default)]
struct Tally {
    score: u32,
    results: Vec<u32>,
    wins_in_row: u32,
    perf_sum: i64,
}

/// The standings of a tournament of `terms` whose players are `players`
/// (name, paused) and whose finished games are `games` (any order): the
/// scoring rule, applied to each player's games in the order they ended.
pub fn standings(terms: &Terms, players: &[(String, bool)], games: &[ScoredGame]) -> Vec<Standing> {
    let mut order: Vec<&ScoredGame> = games.iter().collect();
    order.sort_by(|a, b| (a.ended_at, &a.id).cmp(&(b.ended_at, &b.id)));
    let mut tally: HashMap<&str, Tally> =
        players.iter().map(|(n, _)| (n.as_str(), Tally::default())).collect();
    for g in order {
        if matches!(g.reason, EndReason::Aborted | EndReason::Shutdown) {
            continue;
        }
        let plies = g.moves[0] + g.moves[1];
        for (seat, who) in [Player::X, Player::O].into_iter().enumerate() {
            let t = tally.entry(g.players[seat].as_str()).or_default();
            let on_streak = t.wins_in_row >= 2;
            let points = match g.winner {
                Some(w) if w == who => {
                    t.wins_in_row += 1;
                    let bonus = g.berserk[seat] && g.moves[seat] >= terms.berserk_moves();
                    (if on_streak { 4 } else { 2 }) + u32::from(bonus)
                }
                None if plies >= terms.draw_moves() => {
                    t.wins_in_row = 0;
                    if on_streak { 2 } else { 1 }
                }
                _ => {
                    t.wins_in_row = 0;
                    0
                }
            };
            let opponent = g.ratings[1 - seat].unwrap_or(UNRATED);
            t.perf_sum += opponent
                + match g.winner {
                    Some(w) if w == who => 500,
                    Some(_) => -500,
                    None => 0,
                };
            t.score += points;
            t.results.push(points);
        }
    }
    let paused: HashMap<&str, bool> = players.iter().map(|(n, p)| (n.as_str(), *p)).collect();
    let mut rows: Vec<Standing> = tally
        .into_iter()
        .map(|(name, t)| {
            let games = t.results.len() as u32;
            Standing {
                rank: 0,
                name: name.to_owned(),
                score: t.score,
                games,
                streak: t.wins_in_row >= 2,
                performance: (games > 0).then(|| (t.perf_sum as f64 / f64::from(games)).round() as i64),
                results: t.results,
                paused: paused.get(name).copied().unwrap_or(false),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(b.performance.unwrap_or(i64::MIN).cmp(&a.performance.unwrap_or(i64::MIN)))
            .then_with(|| a.name.cmp(&b.name))
    });
    for (i, row) in rows.iter_mut().enumerate() {
        row.rank = i + 1;
    }
    rows
}

/// A player free to be paired, as the pairing sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Free<K> {
    /// Whatever names the player to the caller (a connection).
    pub key: K,
    /// The account's name.
    pub name: String,
    /// Its rank in the standings now (1-based; new players after the rest).
    pub rank: usize,
    /// The name of its last opponent, if any.
    pub last: Option<String>,
}

/// Pairs free players: from the top of the standings down, each with the
/// nearest in rank that was not its last opponent (nor had it as theirs),
/// and with its last opponent only when no other free player is left for
/// it. Returns
/// pairs of keys; one player may be left over.
pub fn pair<K: Clone>(mut free: Vec<Free<K>>) -> Vec<(K, K)> {
    free.sort_by(|a, b| (a.rank, &a.name).cmp(&(b.rank, &b.name)));
    let mut taken = vec![false; free.len()];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let rematch = |a: &Free<K>, b: &Free<K>| {
        a.last.as_deref() == Some(b.name.as_str()) || b.last.as_deref() == Some(a.name.as_str())
    };
    for a in 0..free.len() {
        if taken[a] {
            continue;
        }
        let others: Vec<usize> = (0..free.len()).filter(|&b| b != a && !taken[b]).collect();
        let nearest = |ok: &dyn Fn(usize) -> bool| {
            others
                .iter()
                .copied()
                .filter(|&b| ok(b))
                .min_by_key(|&b| (free[b].rank.abs_diff(free[a].rank), b))
        };
        let fresh = nearest(&|b| !rematch(&free[a], &free[b]));
        let Some(b) = fresh.or_else(|| nearest(&|_| true)) else {
            continue;
        };
        taken[a] = true;
        taken[b] = true;
        pairs.push((a, b));
    }
    // A rematch left over swaps partners with another pair where both new
    // pairs are fresh: then it was not forced.
    for i in 0..pairs.len() {
        let (a, b) = pairs[i];
        if !rematch(&free[a], &free[b]) {
            continue;
        }
        let swap = (0..pairs.len()).filter(|&j| j != i).find_map(|j| {
            let (c, d) = pairs[j];
            let fresh = |x: usize, y: usize| !rematch(&free[x], &free[y]);
            match (fresh(a, c) && fresh(b, d), fresh(a, d) && fresh(b, c)) {
                (true, _) => Some((j, (a, c), (b, d))),
                (_, true) => Some((j, (a, d), (b, c))),
                _ => None,
            }
        });
        if let Some((j, one, other)) = swap {
            pairs[i] = one;
            pairs[j] = other;
        }
    }
    pairs.into_iter().map(|(a, b)| (free[a].key.clone(), free[b].key.clone())).collect()
}

/// Whether pairing `pairs` of `free` repeated a last meeting that swapping
/// partners with another pair would have avoided (never, by [`pair`]).
pub fn needless_rematch<K: PartialEq>(free: &[Free<K>], pairs: &[(K, K)]) -> bool {
    let find = |k: &K| free.iter().find(|f| f.key == *k);
    let rematch = |a: &Free<K>, b: &Free<K>| {
        a.last.as_deref() == Some(b.name.as_str()) || b.last.as_deref() == Some(a.name.as_str())
    };
    let players: Vec<(&Free<K>, &Free<K>)> =
        pairs.iter().filter_map(|(a, b)| Some((find(a)?, find(b)?))).collect();
    players.iter().enumerate().any(|(i, &(a, b))| {
        rematch(a, b)
            && players.iter().enumerate().any(|(j, &(c, d))| {
                j != i && ((!rematch(a, c) && !rematch(b, d)) || (!rematch(a, d) && !rematch(b, c)))
            })
    })
}

#[cfg(test)]
mod tests;
