//! The room and the cluster's lease: a room acts only while this instance's
//! lease surely runs, and after a lapse only once the database said its game
//! is still this instance's; a game found another's is let go at once.

use std::sync::Arc;

use super::{Conns, RoomContext, Withheld};
use crate::cmd::{LobbyCmd, Outbound};
use crate::room::Room;
use crate::store::Outcome;
use crate::store::fence::{Fence, Verdict};

/// Whether the room may act now: in a cluster, only while this instance's
/// lease runs, and after a lapse only once the database said its game —
/// in progress, or ended with its record not yet written — is still this
/// instance's (waits for that answer).
pub(super) async fn may_act(room: &Room, held: &Withheld, ctx: &RoomContext, checked: &mut u64) -> bool {
    let Some(fence) = &ctx.fence else { return true };
    if fence.current(*checked, std::time::Instant::now()) {
        return true;
    }
    let unwritten = held.waits.front().filter(|w| !matches!(w.outcome, Outcome::Written(_)));
    // Nothing to contradict without a game in progress or a result to tell.
    let Some(game) = room.live_game().cloned().or_else(|| unwritten.and_then(|w| w.game.clone())) else {
        *checked = fence.generation();
        return true;
    };
    still_ours(fence, game, checked).await
}

/// Asks, after a lapse, whether `game` is still this instance's; if so, the
/// generation it was found so at is `checked`.
pub(super) async fn still_ours(fence: &Fence, game: Arc<str>, checked: &mut u64) -> bool {
    match fence.check(game).await {
        Ok(Verdict::Held(generation)) => {
            *checked = generation;
            true
        }
        Ok(Verdict::Lost) | Err(_) => false,
    }
}

/// Whether the oldest wait's `game_over` may go out. A record the store
/// could not write goes out unwritten (the store is down), unless the lease
/// lapsed meanwhile: then only once the database said the game is still
/// this instance's (a stall may have made it another's, and the write fail).
pub(super) async fn unwritten_still_ours(held: &Withheld, ctx: &RoomContext, checked: &mut u64) -> bool {
    let (Some(fence), Some(wait)) = (&ctx.fence, held.waits.front()) else { return true };
    let Outcome::Waiting(_) = wait.outcome else { return true };
    if fence.current(*checked, std::time::Instant::now()) {
        return true;
    }
    let Some(game) = wait.game.clone() else { return true };
    still_ours(fence, game, checked).await
}

/// Waits for the next lapse of the lease to end; `false` once nobody can
/// tell of one any more.
pub(super) async fn lapsed(lapses: &mut Option<tokio::sync::watch::Receiver<u64>>) -> bool {
    match lapses {
        Some(rx) => rx.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// Another instance holds (or ended) this room's game: the room closes at
/// once, saying nothing of its own; its players get 1012 and resume where
/// the game lives.
pub(super) async fn let_go(room: &mut Room, conns: &Conns, ctx: &RoomContext) {
    tracing::warn!("another instance holds this room's game now: its players go there");
    ::metrics::counter!("ttt_rooms_let_go_total").increment(1);
    for conn in conns.values() {
        conn.send(Outbound::Restart);
    }
    let _ =
        ctx.lobby.send(LobbyCmd::RoomClosed { room: room.code().clone(), ended: room.take_ended() }).await;
}
