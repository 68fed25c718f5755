//! `/metrics`: the server's counters in Prometheus text format, through the
//! `metrics` crate and its Prometheus exporter (no listener of its own: the
//! page is served on the game port). Hot counters (moves, games) are plain
//! atomics in [`Stats`], copied in when the page is rendered; rarer events
//! (refusals, the store's write times) are recorded where they happen.

use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use metrics::{counter, gauge};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tictactoe_protocol::{EndReason, ErrorCode, Fischer};

use crate::core::stats::Stats;
use crate::store::StoreStats;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process's recorder, once; later calls return the same handle.
pub fn init() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        // Another recorder installed first (an embedding program's) keeps
        // its place; this page then shows only what is copied in.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Folds the histograms' samples into their summaries; without it they
/// pile up until the next scrape.
pub fn upkeep() {
    init().run_upkeep();
}

/// Counts one refused request.
pub fn refused(code: ErrorCode) {
    let name =
        serde_json::to_value(code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    counter!("ttt_refusals_total", "code" => name).increment(1);
}

/// Counts a game started, by its time control's speed as Lichess names it
/// from the estimated duration (initial + 40 × increment): `ultrabullet`,
/// `bullet`, `blitz`, `rapid`, `classical`; `per_move` for the per-move
/// timer. A label per speed, not per clock: clients choose any clock.
pub fn game_started(clock: Option<Fischer>) {
    counter!("ttt_games_by_time_control_total", "speed" => speed(clock)).increment(1);
}

/// The speed category of a time control (see [`game_started`]).
pub fn speed(clock: Option<Fischer>) -> &'static str {
    let Some(c) = clock else { return "per_move" };
    let estimate = c.initial_ms.saturating_add(c.increment_ms.saturating_mul(40));
    let bounds = [(29_000, "ultrabullet"), (180_000, "bullet"), (480_000, "blitz"), (1_500_000, "rapid")];
    bounds.iter().find(|&&(below, _)| estimate < below).map_or("classical", |&(_, name)| name)
}

/// Counts a flag: a Fischer clock ran out, losing the game or, when the
/// opponent could complete no line, drawing it.
pub fn flagged(draw: bool) {
    counter!("ttt_flags_total", "result" => if draw { "draw" } else { "loss" }).increment(1);
}

/// The page: the counters copied in, then everything rendered. `refused`
/// is the connections refused so far, by reason (the admission's counts).
pub fn render(
    stats: &Stats,
    store: &StoreStats,
    refused: impl Iterator<Item = (&'static str, u64)>,
) -> String {
    let handle = init();
    gauge!("ttt_connections").set(stats.connections() as f64);
    gauge!("ttt_rooms").set(stats.rooms() as f64);
    counter!("ttt_games_started_total").absolute(stats.games_started.load(Ordering::Relaxed));
    for (reason, n) in EndReason::ALL.iter().zip(&stats.games_by_reason) {
        let name =
            serde_json::to_value(reason).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        counter!("ttt_games_finished_total", "reason" => name).absolute(n.load(Ordering::Relaxed));
    }
    counter!("ttt_moves_total").absolute(stats.moves.load(Ordering::Relaxed));
    gauge!("ttt_store_queue_depth").set(store.queued.load(Ordering::Relaxed) as f64);
    gauge!("ttt_store_queue_depth_max").set(store.max_queued.load(Ordering::Relaxed) as f64);
    counter!("ttt_store_games_written_total").absolute(store.written.load(Ordering::Relaxed));
    counter!("ttt_store_write_failures_total").absolute(store.failed_writes.load(Ordering::Relaxed));
    counter!("ttt_store_games_dropped_total").absolute(store.dropped.load(Ordering::Relaxed));
    counter!("ttt_store_moves_saved_total").absolute(store.moves_saved.load(Ordering::Relaxed));
    counter!("ttt_store_moves_dropped_total").absolute(store.live_dropped.load(Ordering::Relaxed));
    gauge!("ttt_store_up").set(if store.health() == crate::store::Health::Ok { 1.0 } else { 0.0 });
    gauge!("ttt_store_held_games").set(store.held_games.load(Ordering::Relaxed) as f64);
    gauge!("ttt_store_held_live_changes").set(store.held_live.load(Ordering::Relaxed) as f64);
    gauge!("ttt_store_held_bytes").set(store.held_bytes.load(Ordering::Relaxed) as f64);
    gauge!("ttt_store_held_games_limit").set(crate::store::BACKLOG as f64);
    gauge!("ttt_store_writer_idle").set(if store.priority.idle() { 1.0 } else { 0.0 });
    counter!("ttt_store_writer_lifts_total").absolute(store.priority.lifts.load(Ordering::Relaxed));
    for (reason, n) in refused {
        counter!("ttt_connections_refused_total", "reason" => reason).absolute(n);
    }
    handle.render()
}
