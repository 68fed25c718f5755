//! Finished games the database has not taken yet: their commit is under
//! way, or the database cannot write (a full disk, say). Their players may
//! have seen them end, so the API shows them from here until a commit keeps
//! them. Touched once per commit and per API game read, never on the move path.

use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;
use tictactoe_protocol::api::{self, GamePlayer, RatingMove};

use crate::store::record::{GameRecord, both_sides};
use crate::store::spelling::{rfc3339, rounded};
use crate::store::tournaments::scored;
use tictactoe_protocol::tournament::ScoredGame;

/// The records waiting in memory, by game id.
#[derive(Debug, Default)]
pub(super) struct Unwritten(Mutex<FxHashMap<Arc<str>, GameRecord>>);

impl Unwritten {
    fn lock(&self) -> MutexGuard<'_, FxHashMap<Arc<str>, GameRecord>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `records` wait in memory (those already here stay as they are).
    pub(super) fn keep<'a>(&self, records: impl IntoIterator<Item = &'a GameRecord>) {
        let mut held = self.lock();
        for r in records {
            held.entry(r.id.clone()).or_insert_with(|| r.clone());
        }
    }

    /// `ids` are in the database now, or given up on.
    pub(super) fn forget<'a>(&self, ids: impl IntoIterator<Item = &'a Arc<str>>) {
        let mut held = self.lock();
        if held.is_empty() {
            return;
        }
        for id in ids {
            held.remove(id);
        }
    }

    /// The records of tournament `id` waiting here, as its scoring reads them.
    pub(super) fn tournament_games(&self, id: &str) -> Vec<ScoredGame> {
        let held = self.lock();
        held.values().filter(|g| g.tournament.as_deref() == Some(id)).map(scored).collect()
    }

    /// Game `id` as the API shows it, if it waits here.
    pub(super) fn game(&self, id: &str) -> Option<api::GameRecord> {
        self.lock().get(id).map(shown)
    }
}

/// A record not yet committed, as `/api/games/{id}` gives it.
pub(super) fn shown(g: &GameRecord) -> api::GameRecord {
    let r = g.ratings.as_ref();
    let shown = |i: usize, after: bool| {
        r.map(|r| rounded(if after { r[i].after.rating.rating } else { r[i].before.rating.rating }))
    };
    let player = |i: usize| {
        let p = &g.players[i];
        GamePlayer {
            account: p.account.is_some(),
            bot: p.bot,
            name: p.name.to_string(),
            rating: shown(i, false),
        }
    };
    let change =
        |i: usize| RatingMove { after: shown(i, true).unwrap_or(0), before: shown(i, false).unwrap_or(0) };
    api::GameRecord {
        berserk: g.berserk,
        tournament: g.tournament.as_deref().map(str::to_owned),
        host: g.host.as_deref().map(str::to_owned),
        opening: g.opening,
        clock: g.rules.clock,
        clocks: g.rules.clock.map(|c| both_sides(c, &g.times)),
        ended_at: rfc3339(g.ended_at_ms),
        id: g.id.to_string(),
        line: g.line,
        moves: g.moves.clone(),
        players: [player(0), player(1)],
        rated: r.is_some(),
        ratings: r.map(|_| [change(0), change(1)]),
        reason: g.reason,
        room: g.room.to_string(),
        size: g.rules.size,
        started_at: rfc3339(g.started_at_ms),
        win: g.rules.win,
        winner: g.winner.map_or(0, |p| p.number()),
    }
}
