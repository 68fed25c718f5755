//! Arena tournaments as the store keeps them: the terms, who joined (and
//! whether they paused), and the finished games, which are the records that
//! name the tournament. The standings are never stored: they are the
//! scoring rule's fold of those records (`tictactoe_protocol::tournament`),
//! so a game counts exactly once however often it is read, on whichever
//! instance reads it.

use std::sync::Arc;

use tictactoe_protocol::tournament::{
    self, ScoredGame, Terms, TournamentStatus, TournamentSummary, TournamentView,
};

use crate::core::account::AccountId;
use crate::store::record::GameRecord;
use crate::store::spelling::rounded;

/// Most tournaments a list gives (`tournaments`, `/api/tournaments`).
pub const LISTED: usize = 100;

/// How long a finished tournament stays in the lists: a day.
pub const LISTED_AFTER_MS: i64 = 86_400_000;

/// A tournament's row: its id and terms, who made it and when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TournamentRow {
    /// Its id (shaped like a game id).
    pub id: Arc<str>,
    /// What every game of it plays, and for how long it runs.
    pub terms: Terms,
    /// The account that created it, by name.
    pub created_by: Arc<str>,
    /// When it starts (Unix ms).
    pub starts_at: i64,
}

impl TournamentRow {
    /// When its time is up (Unix ms).
    pub fn ends_at(&self) -> i64 {
        self.starts_at.saturating_add(i64::try_from(self.terms.duration_ms).unwrap_or(i64::MAX))
    }

    /// Where it is at `now_ms`.
    pub fn status(&self, now_ms: i64) -> TournamentStatus {
        TournamentStatus::at(now_ms, self.starts_at, self.ends_at())
    }

    /// As lists show it, with `players` joined.
    pub fn summary(&self, players: usize, now_ms: i64) -> TournamentSummary {
        TournamentSummary {
            id: self.id.clone(),
            name: self.terms.name.clone(),
            created_by: self.created_by.to_string(),
            size: self.terms.size,
            win: self.terms.win,
            clock: self.terms.clock,
            duration_ms: self.terms.duration_ms,
            starts_at: self.starts_at,
            ends_at: self.ends_at(),
            status: self.status(now_ms),
            players,
        }
    }
}

/// An account in a tournament.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entrant {
    /// The account.
    pub account: AccountId,
    /// Its name, as the records name it.
    pub name: Arc<str>,
    /// Left: not paired until it joins again.
    pub paused: bool,
}

/// Everything the standings are made from: the row, the entrants and the
/// finished games (the records naming the tournament).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TournamentData {
    /// Terms and times.
    pub row: TournamentRow,
    /// Who joined, in the order they first did.
    pub entrants: Vec<Entrant>,
    /// Its recorded games, in any order.
    pub games: Vec<ScoredGame>,
}

impl TournamentData {
    /// The standings and games at `now_ms`: `tournament_update` and `/api/tournaments/{id}`.
    pub fn view(&self, now_ms: i64) -> TournamentView {
        let players: Vec<(String, bool)> =
            self.entrants.iter().map(|e| (e.name.to_string(), e.paused)).collect();
        let mut games: Vec<&ScoredGame> = self.games.iter().collect();
        games.sort_by(|a, b| (a.ended_at, &a.id).cmp(&(b.ended_at, &b.id)));
        TournamentView {
            summary: self.row.summary(self.entrants.len(), now_ms),
            standings: tournament::standings(&self.row.terms, &players, &self.games),
            games: games.into_iter().map(|g| g.id.clone()).collect(),
        }
    }

    /// Each player's last opponent, by name, from the games in the order they ended.
    pub fn last_opponents(&self) -> std::collections::HashMap<String, String> {
        let mut games: Vec<&ScoredGame> = self.games.iter().collect();
        games.sort_by(|a, b| (a.ended_at, &a.id).cmp(&(b.ended_at, &b.id)));
        let mut last = std::collections::HashMap::new();
        for g in games {
            last.insert(g.players[0].clone(), g.players[1].clone());
            last.insert(g.players[1].clone(), g.players[0].clone());
        }
        last
    }
}

/// A change to a tournament, written durably before its request is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TournamentWrite {
    /// A new tournament.
    Create(TournamentRow),
    /// An account joins (or comes back: `paused` is cleared).
    Join {
        /// The tournament's id.
        tournament: Arc<str>,
        /// Who.
        account: AccountId,
        /// Its name.
        name: Arc<str>,
    },
    /// An account pauses (`tournament_leave`): its score stays.
    Pause {
        /// The tournament's id.
        tournament: Arc<str>,
        /// Who.
        account: AccountId,
    },
}

/// Each side's own moves among a game's `plies` (player 1 moves first):
/// what the berserk bonus counts. Tournaments have no openings.
pub fn own_moves(plies: usize) -> [usize; 2] {
    [plies.div_ceil(2), plies / 2]
}

/// Which sides went berserk as the `berserk` columns keep it: 1 for player 1, 2 for player 2.
pub(crate) fn berserk_mask(berserk: [bool; 2]) -> i32 {
    i32::from(berserk[0]) | (i32::from(berserk[1]) << 1)
}

/// A `berserk` column's mask read back.
pub(crate) fn berserk_sides(mask: i32) -> [bool; 2] {
    [mask & 1 != 0, mask & 2 != 0]
}

/// A record as the scoring reads it (one not yet committed, shown from memory).
pub(crate) fn scored(g: &GameRecord) -> ScoredGame {
    let before = |i: usize| g.ratings.map(|r| rounded(r[i].before.rating.rating));
    ScoredGame {
        id: g.id.clone(),
        ended_at: g.ended_at_ms,
        players: [g.players[0].name.to_string(), g.players[1].name.to_string()],
        winner: g.winner,
        reason: g.reason,
        moves: own_moves(g.moves.len()),
        berserk: g.berserk,
        ratings: [before(0), before(1)],
    }
}
