//! The SIGSTOP form's old connections: a seat's connection to the paused
//! instance, kept when its player resumed elsewhere and read on after the
//! instance woke, and the judgment of what it heard by who recorded each
//! game.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::process::{Child, Command};
use tokio::time::{Instant, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::{CrashReport, Ctx, Fallible, Ws};
use crate::witness::Seen;

/// A seat's old connection kept across the pause.
pub(super) struct Kept {
    pub(super) ws: Ws,
    /// The instance it is to (0: the one stopped).
    pub(super) instance: usize,
    /// The instance the room is on.
    pub(super) room_on: usize,
    /// Its player sent a move into it during the pause.
    pub(super) queued: bool,
    /// The room's code.
    pub(super) room: String,
}

/// How long an old connection is read after the stopped instance woke.
const HEAR_OUT: Duration = Duration::from_secs(10);

/// Reads a seat's old connection across the pause until it closes (or
/// 10 s after the stopped instance woke). Every frame heard is a sighting
/// of the game, checked against its record later; what the stopped
/// instance said once awake, and how it closed, is judged once the records
/// say which games the other adopted (see [`judge_heard`]).
pub(super) async fn hear_out(ctx: Arc<Ctx>, kept: Kept, seen: Arc<Seen>) {
    let Kept { mut ws, instance, room_on, queued, room } = kept;
    ctx.report.kept.fetch_add(1, Ordering::Relaxed);
    if queued && instance == 0 {
        ctx.report.kept_queued.fetch_add(1, Ordering::Relaxed);
    }
    // A bound in case the instance is never woken (the phase failed).
    let bound = Instant::now() + Duration::from_secs(60);
    let mut awake = Vec::new();
    let close = loop {
        if ctx.woke_at().is_some_and(|w| w.elapsed() > HEAR_OUT) || Instant::now() > bound {
            break Err("still open 10 s after it woke".to_owned());
        }
        match timeout(Duration::from_millis(200), ws.next()).await {
            Err(_)
            | Ok(Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Binary(_) | Message::Frame(_)))) => {}
            Ok(Some(Ok(Message::Text(t)))) => {
                let Ok(frame) = serde_json::from_str::<Value>(&t) else { continue };
                // Before the wake, what comes from a room on the paused
                // instance (directly or relayed) left it before the stop.
                seen.saw(&frame, room_on == 0);
                let said = frame["type"] == "moved" || frame["type"] == "game_over";
                if said && ctx.woke_at().is_some() {
                    awake.push(frame);
                }
            }
            Ok(Some(Ok(Message::Close(frame)))) => break Ok(frame.map(|f| f.code)),
            Ok(None) => break Ok(None),
            Ok(Some(Err(e))) => break Err(format!("read: {e}")),
        }
    };
    // Only the stopped instance's connections in its own rooms are judged so.
    if instance == 0 && room_on == 0 {
        if let Ok(mut heard) = ctx.heard.lock() {
            heard.push(Heard { room, queued, awake, close, seen });
        }
    }
}

/// What an old connection to the stopped instance, in a room it held, heard.
pub(super) struct Heard {
    room: String,
    /// Its player had sent a move into it during the pause.
    queued: bool,
    /// The `moved` and `game_over` frames it said once awake.
    awake: Vec<Value>,
    /// How it closed.
    close: Result<Option<CloseCode>, String>,
    /// The game's sightings.
    seen: Arc<Seen>,
}

/// Judges what the stopped instance said on its old connections once awake,
/// by who recorded each game (`holders`, by room): in a game the other
/// instance adopted (and so recorded), nothing (no `moved`, no
/// `game_over` but a frame seen before it woke, `woke`, delivered late),
/// and it closes them with 1012. Returns the rooms of those that failed.
pub(super) fn judge_heard(
    report: &CrashReport,
    heard: &[Heard],
    holders: &HashMap<String, String>,
    woke: Instant,
) -> Vec<String> {
    let mut failed = Vec::new();
    for Heard { room, queued, awake, close, seen } in heard {
        match holders.get(room).map(String::as_str) {
            Some("b") => report.kept_held.fetch_add(1, Ordering::Relaxed),
            // Not adopted (too young to have been saved): the woken instance
            // still held it and played on; its frames are checked against the record.
            Some(_) => {
                report.kept_kept.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            None => {
                report.kept_unrecorded.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        };
        // A frame seen before the wake was sent before the stop, delivered
        // late (it was on its way out as the instance stopped).
        let awake: Vec<&Value> = awake.iter().filter(|f| !seen.before(f, woke)).collect();
        report.stale.fetch_add(awake.len() as u64, Ordering::Relaxed);
        for frame in &awake {
            report.fail(format!(
                "the stopped instance, awake, said {frame} on an old connection of room {room} (a move sent into \
                 it during the pause: {queued}), whose game the other adopted and recorded"
            ));
        }
        match close {
            Ok(Some(CloseCode::Restart)) => {
                report.closed_restart.fetch_add(1, Ordering::Relaxed);
            }
            other => report.fail(format!(
                "an old connection to the stopped instance, of room {room} whose game the other adopted and \
                 recorded, did not end with 1012: {other:?} (a move sent into it during the pause, unanswered: \
                 {queued}; without one, nothing reached the room after the wake)"
            )),
        }
        if !awake.is_empty() || !matches!(close, Ok(Some(CloseCode::Restart))) {
            failed.push(room.clone());
        }
    }
    failed
}

/// Who recorded the games of `heard`'s rooms (an instance's name), by room,
/// from database `db`.
pub(super) fn holders(db: &str, heard: &[Heard]) -> Fallible<HashMap<String, String>> {
    let rooms: Vec<String> = heard.iter().map(|h| format!("'{}'", h.room)).collect();
    if rooms.is_empty() {
        return Ok(Default::default());
    }
    let sql = format!("SELECT room || ' ' || holder FROM games WHERE room IN ({})", rooms.join(","));
    let rows = crate::postgres::shared().try_psql(crate::postgres::name_of(db), &sql)?;
    Ok(rows.lines().filter_map(|l| l.split_once(' ')).map(|(r, h)| (r.to_owned(), h.to_owned())).collect())
}

/// Sends `signal` (`STOP`, `CONT`) to `child`.
pub(super) async fn signal(child: &Child, signal: &str) -> Fallible<()> {
    let pid = child.id().ok_or("the server already exited")?;
    let status = Command::new("kill").args([format!("-{signal}"), pid.to_string()]).status().await;
    match status {
        Ok(status) if status.success() => Ok(()),
        other => Err(format!("kill -{signal} {pid}: {other:?}")),
    }
}
