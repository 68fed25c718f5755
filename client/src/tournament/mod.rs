//! Arena tournaments as a player and a terminal see them (compete.md,
//! "Arena tournaments"): a player's part in one, followed to its end
//! (`follow`), and tournaments and their standings as text (`table`).
//! The commands are `tournament_cmd`'s; playing is `ui::screen`'s and `bot_cmd`'s.

pub mod follow;
pub mod table;

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as Unix ms (the tournaments' times are).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
