//! Live counters of the server, read by tests, the load generator and logs.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What the server holds right now, and totals since it started.
#[derive(Debug, Default)]
pub struct Stats {
    /// Open WebSocket connections (after the handshake).
    pub connections: AtomicUsize,
    /// Live rooms (each owned by one task).
    pub rooms: AtomicUsize,
    /// Games started since the server started.
    pub games_started: AtomicU64,
    /// Games ended with a `game_over` since the server started.
    pub games_finished: AtomicU64,
}

impl Stats {
    /// Current open connections.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    /// Current live rooms.
    pub fn rooms(&self) -> usize {
        self.rooms.load(Ordering::Relaxed)
    }
}

/// Increments a gauge now and decrements it when dropped.
pub(crate) struct Gauge<'a>(&'a AtomicUsize);

impl<'a> Gauge<'a> {
    pub(crate) fn up(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Gauge(counter)
    }
}

impl Drop for Gauge<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
