//! What a finished tournament is checked against, from outside the server:
//! its standings recomputed from its games' records with the protocol's
//! scoring rule (and each game's points walked by hand), the games the bots
//! saw against the games it counts, and how long the bots waited to be
//! paired while another player was free too.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

use super::{Event, Log};
use crate::{api, record_of};
use tictactoe_protocol::api::GameRecord;
use tictactoe_protocol::tournament::{self, ScoredGame, Standing, Terms, TournamentView};
use tictactoe_protocol::{EndReason, Player};

/// Milliseconds since the epoch of an RFC 3339 time in UTC as the records
/// write them (`2026-11-25T06:31:29.123Z`).
pub fn unix_ms(rfc3339: &str) -> i64 {
    let num = |range: std::ops::Range<usize>| -> i64 {
        rfc3339.get(range).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("not a time: {rfc3339}"))
    };
    let (y, m, d) = (num(0..4), num(5..7), num(8..10));
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let ms_of_day = ((num(11..13) * 60 + num(14..16)) * 60 + num(17..19)) * 1000 + num(20..23);
    days * 86_400_000 + ms_of_day
}

/// The tournament `id` as `/api/tournaments/{id}` shows it.
pub async fn view(addr: SocketAddr, id: &str) -> TournamentView {
    let (status, body) = api(addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("not a tournament view ({e}): {body}"))
}

/// Each of the view's games' records (`/api/games/{id}`), checked to name
/// the tournament and to be one rated game on its terms.
pub async fn records(addr: SocketAddr, view: &TournamentView) -> Vec<GameRecord> {
    let mut out = Vec::new();
    let ids: HashSet<&str> = view.games.iter().map(|g| &**g).collect();
    assert_eq!(ids.len(), view.games.len(), "a game listed twice: {:?}", view.games);
    for id in &view.games {
        let json = record_of(addr, id).await;
        let record: GameRecord = serde_json::from_value(json.clone()).expect("a game record");
        assert_eq!(record.tournament.as_deref(), Some(&*view.summary.id), "{json}");
        assert_eq!((record.size, record.win, record.opening), (view.summary.size, view.summary.win, 0));
        assert_eq!(record.clock, Some(view.summary.clock), "{json}");
        out.push(record);
    }
    out
}

/// A record as the scoring reads it.
pub fn scored(r: &GameRecord) -> ScoredGame {
    let before = |i: usize| r.ratings.map(|m| m[i].before);
    ScoredGame {
        id: r.id.as_str().into(),
        ended_at: unix_ms(&r.ended_at),
        players: [r.players[0].name.clone(), r.players[1].name.clone()],
        winner: Player::from_number(r.winner),
        reason: r.reason,
        moves: [r.moves.len().div_ceil(2), r.moves.len() / 2],
        berserk: r.berserk,
        ratings: [before(0), before(1)],
    }
}

/// The tournament's terms, from its view.
pub fn terms(view: &TournamentView) -> Terms {
    let s = &view.summary;
    Terms { name: s.name.clone(), size: s.size, win: s.win, clock: s.clock, duration_ms: s.duration_ms }
}

/// Asserts the view's standings are `standings()` of its records, and that
/// each player's points, game by game, are what the rule gives: 2 a win
/// (4 on a streak of two wins before it), +1 for a berserk win with enough
/// own moves, 1 a draw (2 on a streak), 0 a draw too short or a loss.
/// Returns how many berserk bonuses were scored and how many short draws.
pub fn standings_match(view: &TournamentView, records: &[GameRecord]) -> (usize, usize) {
    let terms = terms(view);
    let games: Vec<ScoredGame> = records.iter().map(scored).collect();
    let players: Vec<(String, bool)> = view.standings.iter().map(|s| (s.name.clone(), s.paused)).collect();
    assert_eq!(
        tournament::standings(&terms, &players, &games),
        view.standings,
        "recomputed from the records"
    );
    let mut order: Vec<&ScoredGame> = games.iter().collect();
    order.sort_by(|a, b| (a.ended_at, &a.id).cmp(&(b.ended_at, &b.id)));
    let (mut bonuses, mut short_draws) = (0, 0);
    for row in &view.standings {
        let mut wins_in_row = 0;
        let mut results = row.results.iter();
        for g in order.iter().filter(|g| g.players.contains(&row.name)) {
            if matches!(g.reason, EndReason::Aborted | EndReason::Shutdown) {
                continue;
            }
            let seat = usize::from(g.players[1] == row.name);
            let streak = wins_in_row >= 2;
            let plies = g.moves[0] + g.moves[1];
            let want = match g.winner.map(|w| w == [Player::X, Player::O][seat]) {
                Some(true) => {
                    wins_in_row += 1;
                    let bonus = g.berserk[seat] && g.moves[seat] >= terms.berserk_moves();
                    bonuses += usize::from(bonus);
                    (if streak { 4 } else { 2 }) + u32::from(bonus)
                }
                None if plies < terms.draw_moves() => {
                    (wins_in_row, short_draws) = (0, short_draws + 1);
                    0
                }
                None => {
                    wins_in_row = 0;
                    if streak { 2 } else { 1 }
                }
                Some(false) => {
                    wins_in_row = 0;
                    0
                }
            };
            assert_eq!(
                results.next(),
                Some(&want),
                "{}'s points for game {} ({g:?}): {row:?}",
                row.name,
                g.id
            );
        }
        assert_eq!(results.next(), None, "{} has more results than games: {row:?}", row.name);
    }
    (bonuses, short_draws)
}

/// Asserts the games the bots saw end are the view's games, none extra
/// and none missing, each seen ending by both of its players — but when a
/// server was killed (`crash`): a game may be seen by one player only (the
/// other was told `invalid_token` on coming back), and a game nobody saw
/// end is one the kill ended between its record and its `game_over`, both
/// of whose players were told `invalid_token`. Returns how many of those.
pub fn games_seen(logs: &[Log], view: &TournamentView, records: &[GameRecord], crash: bool) -> usize {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for log in logs {
        for (_, e) in &log.events {
            if let Event::Over { game_id, .. } = e {
                *seen.entry(game_id.as_str()).or_default() += 1;
            }
        }
    }
    let listed: HashSet<&str> = view.games.iter().map(|g| &**g).collect();
    let extra: Vec<&&str> = seen.keys().filter(|g| !listed.contains(**g)).collect();
    assert!(extra.is_empty(), "games the bots saw end that the tournament does not list: {extra:?}");
    let told_invalid = |name: &str| {
        logs.iter()
            .filter(|l| l.name == name)
            .flat_map(|l| &l.events)
            .any(|(_, e)| matches!(e, Event::Refused(m) if m["code"] == "invalid_token"))
    };
    let mut unseen = 0;
    for r in records.iter().filter(|r| !seen.contains_key(r.id.as_str())) {
        let ended_by_kill = crash && r.players.iter().all(|p| told_invalid(&p.name));
        assert!(ended_by_kill, "a game the tournament lists that no bot saw end: {r:?}");
        unseen += 1;
    }
    let want = if crash { 1..=2 } else { 2..=2 };
    let odd: Vec<_> = seen.iter().filter(|(_, n)| !want.contains(*n)).collect();
    assert!(odd.is_empty(), "games not seen ending by both players: {odd:?}");
    unseen
}

/// A spell of a bot being free: joined and not paused, not in a game.
#[derive(Debug, Clone, Copy)]
pub struct Spell {
    /// From (Unix ms).
    pub from: i64,
    /// To: its next `game_started`, its pause, a drop, or the end.
    pub to: i64,
}

/// A bot's free spells, from its log, up to `end`.
pub fn spells(log: &Log, end: i64) -> Vec<Spell> {
    let (mut out, mut free, mut paused) = (Vec::new(), None::<i64>, false);
    for &(at, ref e) in &log.events {
        match e {
            Event::Joined { playing } => {
                paused = false;
                if !playing {
                    free = free.or(Some(at));
                }
            }
            Event::Closed { .. } if !paused => free = Some(at),
            Event::Started { .. } | Event::Left | Event::Dropped => {
                paused |= *e == Event::Left;
                out.extend(free.take().map(|from| Spell { from, to: at }));
            }
            _ => {}
        }
    }
    out.extend(free.map(|from| Spell { from, to: end.max(from) }));
    out
}

/// For every free spell of every bot, within `[start, end]`: how long it
/// was free while another bot was free too (so that they could have been
/// paired), in ms.
pub fn waits_with_someone_free(logs: &[Log], start: i64, end: i64) -> Vec<i64> {
    let all: Vec<Vec<Spell>> = logs.iter().map(|l| spells(l, end)).collect();
    let mut waits = Vec::new();
    for (i, mine) in all.iter().enumerate() {
        for s in mine {
            let (from, to) = (s.from.max(start), s.to.min(end));
            if from >= to {
                continue;
            }
            let mut overlaps: Vec<(i64, i64)> = all
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, theirs)| theirs.iter())
                .map(|o| (o.from.max(from), o.to.min(to)))
                .filter(|(a, b)| a < b)
                .collect();
            overlaps.sort_unstable();
            let (mut total, mut reach) = (0, i64::MIN);
            for (a, b) in overlaps {
                let a = a.max(reach);
                if b > a {
                    total += b - a;
                    reach = b;
                }
            }
            waits.push(total);
        }
    }
    waits
}

/// The `q` quantile (0..=1) of `values`, by nearest rank.
pub fn quantile(values: &[i64], q: f64) -> i64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1));
    v.get(rank - 1).copied().unwrap_or(0)
}

/// The standings as a table, for the test's output.
pub fn table(standings: &[Standing]) -> String {
    let mut out =
        format!("{:>4}  {:<16} {:>5} {:>5} {:>6}  results\n", "rank", "name", "score", "games", "perf");
    for s in standings {
        let perf = s.performance.map_or("-".to_owned(), |p| p.to_string());
        let results: Vec<String> = s.results.iter().map(u32::to_string).collect();
        let streak = if s.streak { " (on a streak)" } else { "" };
        out += &format!(
            "{:>4}  {:<16} {:>5} {:>5} {:>6}  {}{streak}\n",
            s.rank,
            s.name,
            s.score,
            s.games,
            perf,
            results.join(" ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_read_back_as_the_records_write_them() {
        assert_eq!(super::unix_ms("1970-01-01T00:00:00.000Z"), 0);
        assert_eq!(super::unix_ms("2000-03-01T00:00:00.001Z"), 951_868_800_001);
        assert_eq!(super::unix_ms("2026-11-25T06:31:29.123Z"), 1_795_588_289_123);
    }
}
