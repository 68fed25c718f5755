//! What a room is set up with: its timers, whether it keeps records, and
//! the wall clock it reads off the `now` it is handed.

use std::time::{Duration, Instant};

/// The timers a room runs with, and whether it keeps records.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Time per move; `None` = no timer.
    pub turn_timeout: Option<Duration>,
    /// How long a dropped player keeps the seat; zero = they lose at once.
    pub grace: Duration,
    /// With a store: the ratings that games between accounts move. Each
    /// finished game then has an id and an [`Output::Record`].
    pub records: bool,
    /// Wall-clock time as the room reads it off its `now` (game ids start with it).
    pub wall: WallClock,
}

/// Wall-clock time from an [`Instant`]: an anchor taken once, so that a
/// room reads the time only from the `now` it is handed.
#[derive(Debug, Clone, Copy)]
pub struct WallClock {
    at: Instant,
    unix_ms: i64,
}

impl WallClock {
    /// Anchored at the present.
    pub fn now() -> WallClock {
        WallClock { at: Instant::now(), unix_ms: crate::store::record::unix_ms(std::time::SystemTime::now()) }
    }

    /// Milliseconds since the Unix epoch at `t`.
    pub fn unix_ms(&self, t: Instant) -> i64 {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        match t.checked_duration_since(self.at) {
            Some(after) => self.unix_ms.saturating_add(ms(after)),
            None => self.unix_ms.saturating_sub(ms(self.at - t)),
        }
    }
}
