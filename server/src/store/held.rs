//! Finished games the database has not taken yet: their commit is under
//! way, or the database cannot write (a full disk, say). Their players may
//! have seen them end, so the API shows them from here until a commit keeps
//! them. Touched once per commit and per API game read, never on the move path.

use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;
use tictactoe_protocol::api;

use crate::store::answer;
use crate::store::record::GameRecord;

/// The records waiting in memory, by game id.
#[derive(Debug, Default)]
pub(super) struct Held(Mutex<FxHashMap<Arc<str>, GameRecord>>);

impl Held {
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

    /// Game `id` as the API shows it, if it waits here.
    pub(super) fn game(&self, id: &str) -> Option<api::GameRecord> {
        self.lock().get(id).map(answer::held)
    }
}
