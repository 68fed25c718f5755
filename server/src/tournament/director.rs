//! One tournament's director, without I/O: it holds what the store last
//! said of the tournament (terms, entrants, recorded games), shows its
//! standings, and pairs the players free at a moment. Every decision is the
//! protocol crate's rule (`tournament::standings`, `tournament::pair`); the
//! director keeps each game once, whichever instance recorded it and
//! however often it is read.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tictactoe_protocol::tournament::{self, Free, ScoredGame, TournamentStatus, TournamentView};

use crate::store::tournaments::TournamentData;

/// One tournament's state as this instance directs or shows it.
#[derive(Debug)]
pub struct Director {
    data: TournamentData,
    /// The view last shown: an update goes out only when it differs.
    shown: Option<TournamentView>,
    /// Each player's rank and last opponent, as of the last read: what
    /// the pairing passes (several between reads) look up.
    ranks: HashMap<String, usize>,
    last: HashMap<String, String>,
}

impl Director {
    /// The tournament as the store read it.
    pub fn new(data: TournamentData) -> Director {
        let empty = TournamentData { games: Vec::new(), ..data.clone() };
        let mut d = Director { data: empty, shown: None, ranks: HashMap::new(), last: HashMap::new() };
        d.refresh(data);
        d
    }

    /// Its id.
    pub fn id(&self) -> &Arc<str> {
        &self.data.row.id
    }

    /// What every game of it plays.
    pub fn rules(&self) -> tictactoe_protocol::Rules {
        let t = &self.data.row.terms;
        tictactoe_protocol::Rules { size: t.size, win: t.win, clock: Some(t.clock) }
    }

    /// When its time is up (Unix ms): no game starts after.
    pub fn ends_at(&self) -> i64 {
        self.data.row.ends_at()
    }

    /// Where it is at `now_ms`.
    pub fn status(&self, now_ms: i64) -> TournamentStatus {
        self.data.row.status(now_ms)
    }

    /// A fresh read of the store: its entrants as they are, and its games,
    /// each kept once by its id (a record read twice, or read again after
    /// another instance adopted and recorded its game, is one game).
    pub fn refresh(&mut self, data: TournamentData) {
        let mut seen: HashSet<Arc<str>> = HashSet::with_capacity(data.games.len());
        let games: Vec<ScoredGame> = data.games.into_iter().filter(|g| seen.insert(g.id.clone())).collect();
        self.data = TournamentData { row: data.row, entrants: data.entrants, games };
        let players: Vec<(String, bool)> =
            self.data.entrants.iter().map(|e| (e.name.to_string(), e.paused)).collect();
        let standings = tournament::standings(&self.data.row.terms, &players, &self.data.games);
        self.ranks = standings.into_iter().map(|s| (s.name, s.rank)).collect();
        self.last = self.data.last_opponents();
    }

    /// The standings and games at `now_ms`.
    pub fn view(&self, now_ms: i64) -> TournamentView {
        self.data.view(now_ms)
    }

    /// The view at `now_ms` if it differs from the one shown last (which it
    /// then becomes): what `tournament_update` sends.
    pub fn update(&mut self, now_ms: i64) -> Option<TournamentView> {
        let view = self.view(now_ms);
        if self.shown.as_ref() == Some(&view) {
            return None;
        }
        self.shown = Some(view.clone());
        Some(view)
    }

    /// Pairs the players free at `now_ms` (each a key and an account name;
    /// an account listed twice counts once): nobody while the tournament is
    /// not running. Nearest in the standings first, never last opponents
    /// while another player is free (`tournament::pair`).
    pub fn pair<K: Clone>(&self, free: Vec<(K, String)>, now_ms: i64) -> Vec<(K, K)> {
        tournament::pair(self.free(free, now_ms))
    }

    /// The players free at `now_ms` as the pairing sees them (rank, last
    /// opponent), each account once: none while the tournament is not running.
    pub fn free<K: Clone>(&self, free: Vec<(K, String)>, now_ms: i64) -> Vec<Free<K>> {
        if free.is_empty() || self.status(now_ms) != TournamentStatus::Running {
            return Vec::new();
        }
        let mut names = HashSet::new();
        free.into_iter()
            .filter(|(_, name)| names.insert(name.clone()))
            .map(|(key, name)| {
                let rank = self.ranks.get(&name).copied().unwrap_or(usize::MAX);
                let last = self.last.get(&name).cloned();
                Free { key, name, rank, last }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
