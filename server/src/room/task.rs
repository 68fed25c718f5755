//! The task that owns one [`Room`]: it feeds the room its inbox and its
//! deadlines, serializes what the room says (each broadcast once) and
//! delivers it to the connections' queues, and hands what the room saves
//! (moves, records) to the store without waiting.
//!
//! An ended game's `game_over` (and whatever the room says after it) is held
//! back until the store has committed the game's record: a result a player
//! saw is never lost to a crash, nor played again after a restart. Moves are
//! never held: a game ends only after its last move was delivered.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::Instrument;

use rustc_hash::FxHashMap;

use tictactoe_protocol::{RatingChange, ServerMessage};

use crate::cmd::encode;
use crate::cmd::{ConnHandle, LobbyCmd, Outbound, RoomCmd};
use crate::core::account::AccountId;
use crate::core::ids::ConnId;
use crate::core::queue::{self, Recv};
use crate::core::signal::{Armed, Shutdown};
use crate::core::stats::Counts;
use crate::core::stats::{Gauge, Stats};
use crate::house::{Searches, Thinker};
use crate::room::{Output, Room};
use crate::store::changes::LiveWrite;
use crate::store::fence::{Fence, Verdict};
use crate::store::record::unix_ms;
use crate::store::{Outcome, Recorded, STUCK, Store};
use tokio::sync::oneshot;

/// The room's present connections; ids are counters, so a fast hash is enough.
type Conns = FxHashMap<ConnId, ConnHandle>;

/// What every room task needs besides its room.
#[derive(Clone)]
pub struct RoomContext {
    /// In a cluster, this instance's lease: the room acts only while it
    /// runs, and checks its game after a lapse.
    pub fence: Option<Arc<Fence>>,
    /// Where the room reports that it closed.
    pub lobby: mpsc::Sender<LobbyCmd>,
    /// Cancelled when the server shuts down.
    pub shutdown: Shutdown,
    /// Server-wide counters.
    pub stats: Arc<Stats>,
    /// Where games in progress are saved and finished games recorded.
    pub store: Store,
    /// How long after it is asked for the house's move is due.
    pub house_think: Duration,
    /// The house's searches: a few at once, players taking turns.
    pub searches: Searches,
}

/// Starts the task for `room`, whose present members are `conns`, reading `rx`.
pub fn spawn(
    room: Box<Room>,
    conns: Vec<ConnHandle>,
    rx: queue::Receiver<RoomCmd>,
    ctx: RoomContext,
    tracker: &tokio_util::task::TaskTracker,
) {
    let span = tracing::info_span!("room", code = %room.code());
    let conns = conns.into_iter().map(|c| (c.id, c)).collect();
    tracker.spawn(run(room, conns, rx, ctx).instrument(span));
}

async fn run(mut room: Box<Room>, mut conns: Conns, mut inbox: queue::Receiver<RoomCmd>, ctx: RoomContext) {
    let _gauge = Gauge::up(&ctx.stats.rooms);
    // Named in the signals to connections; cloned once, not per delivery.
    let code = room.code().clone();
    let mut counted = Counts::default();
    // One shutdown waiter and one timer for the room's life, re-armed only when
    // the deadline changes: no timer registration per move.
    let shutdown = ctx.shutdown.waiter();
    let mut shutdown_armed = Armed::default();
    let timer = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(shutdown, timer);
    let mut armed = None;
    let mut house = Thinker::default();
    let mut held = Held::default();
    // The fence's generation this room last knew its game to be its own at,
    // and word of each lapse (a room waiting for nothing checks then too).
    let mut checked = ctx.fence.as_ref().map_or(0, |f| f.generation());
    let mut lapses = ctx.fence.as_ref().map(|f| f.lapses());
    loop {
        deliver(&mut room, &code, &mut conns, &ctx, &mut house, &mut held);
        // A search for a move the game no longer waits for (it ended, was
        // left or forfeited, the room closed) stops now, not at its deadline.
        if house.asked().is_some_and(|seq| !room.house_waits(seq)) {
            house.cancel();
        }
        count_games(&room, &mut counted, &ctx.stats);
        if room.is_closed() {
            break;
        }
        let deadline = room.next_deadline();
        if deadline != armed {
            if let Some(d) = deadline {
                timer.as_mut().reset(Instant::from_std(d));
            }
            armed = deadline;
        }
        tokio::select! {
            // Requests first (tokio's co-operative budget makes them yield
            // within 128); shutdown polled only once it has started.
            biased;
            cmd = inbox.recv() => {
                if matches!(cmd, Recv::Item(RoomCmd::Lost)) || !may_act(&room, &held, &ctx, &mut checked).await {
                    return let_go(&mut room, &conns, &ctx).await;
                }
                let now = Instant::now().into_std();
                match cmd {
                    Recv::Item(cmd) => handle(&mut room, &mut conns, cmd, now),
                    // Nobody can reach the room any more (nobody kills an inbox).
                    Recv::Ended | Recv::Killed => room.shutdown(now, ctx.store.healthy()),
                }
            }
            lapsed = lapsed(&mut lapses), if lapses.is_some() => {
                if !lapsed {
                    lapses = None;
                } else if !may_act(&room, &held, &ctx, &mut checked).await {
                    return let_go(&mut room, &conns, &ctx).await;
                }
            }
            _ = &mut timer, if armed.is_some() => {
                if !may_act(&room, &held, &ctx, &mut checked).await {
                    return let_go(&mut room, &conns, &ctx).await;
                }
                room.tick(Instant::now().into_std())
            }
            _ = held.committed(), if held.waiting() => {
                if !unwritten_still_ours(&held, &ctx, &mut checked).await
                    || release(&mut room, &mut conns, &mut held) == Outcome::Refused
                {
                    return let_go(&mut room, &conns, &ctx).await;
                }
            }
            thought = house.wait(), if house.asked().is_some() => {
                if !may_act(&room, &held, &ctx, &mut checked).await {
                    return let_go(&mut room, &conns, &ctx).await;
                }
                if let Some((seq, cell)) = house.finished(thought) {
                    room.house_move(seq, cell, Instant::now().into_std());
                }
            }
            _ = poll_fn(|cx| shutdown_armed.poll(shutdown.as_mut(), ctx.shutdown.is_stopping(), cx)) => {
                room.shutdown(Instant::now().into_std(), ctx.store.healthy())
            }
        }
    }
    // Requests that reached the inbox after the room closed are answered, not
    // lost: a player who asked for a rematch as the other left hears why.
    let now = Instant::now().into_std();
    for cmd in inbox.close() {
        handle(&mut room, &mut conns, cmd, now);
    }
    deliver(&mut room, &code, &mut conns, &ctx, &mut house, &mut held);
    while held.waiting() {
        held.committed().await;
        if !unwritten_still_ours(&held, &ctx, &mut checked).await
            || release(&mut room, &mut conns, &mut held) == Outcome::Refused
        {
            return let_go(&mut room, &conns, &ctx).await;
        }
        deliver(&mut room, &code, &mut conns, &ctx, &mut house, &mut held);
    }
    let counts = room.counts();
    tracing::info!(games_started = counts.started, games_finished = counts.finished(), "room closed");
    let _ =
        ctx.lobby.send(LobbyCmd::RoomClosed { room: room.code().clone(), ended: room.take_ended() }).await;
}

/// Whether the room may act now: in a cluster, only while this instance's
/// lease runs, and after a lapse only once the database said its game —
/// in progress, or ended with its record not yet written — is still this
/// instance's (waits for that answer).
async fn may_act(room: &Room, held: &Held, ctx: &RoomContext, checked: &mut u64) -> bool {
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
async fn still_ours(fence: &Fence, game: Arc<str>, checked: &mut u64) -> bool {
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
async fn unwritten_still_ours(held: &Held, ctx: &RoomContext, checked: &mut u64) -> bool {
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
async fn lapsed(lapses: &mut Option<tokio::sync::watch::Receiver<u64>>) -> bool {
    match lapses {
        Some(rx) => rx.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// Another instance holds (or ended) this room's game: the room closes at
/// once, saying nothing of its own; its players get 1012 and resume where
/// the game lives.
async fn let_go(room: &mut Room, conns: &Conns, ctx: &RoomContext) {
    tracing::warn!("another instance holds this room's game now: its players go there");
    ::metrics::counter!("ttt_rooms_let_go_total").increment(1);
    for conn in conns.values() {
        conn.send(Outbound::Restart);
    }
    let _ =
        ctx.lobby.send(LobbyCmd::RoomClosed { room: room.code().clone(), ended: room.take_ended() }).await;
}

fn handle(room: &mut Room, conns: &mut Conns, cmd: RoomCmd, now: std::time::Instant) {
    match cmd {
        RoomCmd::Join { conn, name, id } => {
            let cid = conn.id;
            conns.insert(cid, conn);
            room.join(cid, name, id, rand::random(), now);
        }
        RoomCmd::Spectate { conn, id } => {
            let cid = conn.id;
            conns.insert(cid, conn);
            room.spectate(cid, id, now);
        }
        RoomCmd::Resume { conn, token, id } => {
            let cid = conn.id;
            conns.insert(cid, conn);
            room.resume(cid, &token, id, now);
        }
        RoomCmd::Request { conn, request, id } => room.request(conn, request, id, now),
        RoomCmd::Disconnected { conn } => {
            conns.remove(&conn);
            room.disconnect(conn, now);
        }
        RoomCmd::Lost => {}
    }
}

/// What waits for the store: each record's commit, then what the room said
/// after it, in order. Empty but for the few milliseconds after a game ends.
#[derive(Default)]
struct Held {
    waits: VecDeque<Wait>,
}

/// One finished game's record, and what waits for the store's answer.
struct Wait {
    /// The store's answer, while it has not come.
    answer: Option<oneshot::Receiver<Outcome>>,
    /// Past this, the store counts as stuck and nothing waits for it any more.
    deadline: Instant,
    /// What the store did with the record, once it said (a store that is
    /// stuck or gone: not written for all the room knows, not rated).
    outcome: Outcome,
    /// The game's id.
    game: Option<Arc<str>>,
    /// The game's players (player 1 first): their accounts, and their
    /// connections as it ended (who hears of the new ratings).
    players: [(Option<AccountId>, Option<ConnId>); 2],
    items: Vec<HeldItem>,
}

/// What waits: an item for one connection, or the game's `game_over`,
/// which is serialized once the store's answer has filled in its ratings.
enum HeldItem {
    One(ConnId, Outbound),
    GameOver(ServerMessage, Vec<ConnId>),
}

impl Held {
    /// Whether anything waits.
    fn waiting(&self) -> bool {
        !self.waits.is_empty()
    }

    /// Completes when the oldest wait is over: the store said what became of
    /// the record (committed, refused, or waiting while it cannot write), or
    /// it is stuck. Cancel-safe (the room's loop drops it whenever a request
    /// comes in): an answer is let go only once it has come.
    async fn committed(&mut self) {
        let Some(w) = self.waits.front_mut() else { return std::future::pending().await };
        let answer = async {
            if let Some(answer) = w.answer.as_mut() {
                if let Ok(outcome) = answer.await {
                    w.outcome = outcome;
                }
                w.answer = None;
            }
        };
        let _ = tokio::time::timeout_at(w.deadline, answer).await;
    }

    /// Holds `item` for `to` if anything waits; else gives it back.
    fn hold(&mut self, to: ConnId, item: Outbound) -> Option<(ConnId, Outbound)> {
        match self.waits.back_mut() {
            Some(w) => {
                w.items.push(HeldItem::One(to, item));
                None
            }
            None => Some((to, item)),
        }
    }

    /// Holds the `game_over` of the last record's game (something waits).
    fn hold_game_over(&mut self, msg: ServerMessage, to: Vec<ConnId>) {
        if let Some(w) = self.waits.back_mut() {
            w.items.push(HeldItem::GameOver(msg, to));
        }
    }
}

/// The oldest wait is over: the players learn their new ratings (before
/// they can read `game_over` and ask for a new game), then what it held is
/// delivered, `game_over` with the ratings the record keeps. A record the
/// store refused delivers nothing (the room lets its game go): returns the
/// outcome.
fn release(room: &mut Room, conns: &mut Conns, held: &mut Held) -> Outcome {
    let Some(wait) = held.waits.pop_front() else { return Outcome::Written(None) };
    let ratings = match wait.outcome {
        Outcome::Refused => return Outcome::Refused,
        Outcome::Written(ratings) | Outcome::Waiting(ratings) => ratings,
    };
    let mut failed = Vec::new();
    let keep = room.is_closed();
    if let Some(ratings) = ratings {
        let rules = room.rules();
        for ((account, conn), rated) in wait.players.into_iter().zip(ratings) {
            let (Some(account), shown) = (account, rated.after.shown()) else { continue };
            room.rated(account, shown);
            if let Some(to) = conn {
                put(conns, to, Outbound::Rated { account, rules, shown }, keep, &mut failed);
            }
        }
    }
    for item in wait.items {
        match item {
            HeldItem::One(to, item) => put(conns, to, item, keep, &mut failed),
            HeldItem::GameOver(mut msg, to) => {
                if let ServerMessage::GameOver { ratings: shown, .. } = &mut msg {
                    *shown = ratings.map(|r| {
                        r.map(|p| RatingChange { before: p.before.shown(), after: p.after.shown() })
                    });
                }
                let frame = encode(&msg);
                for to in to {
                    put(conns, to, Outbound::Frame(frame.clone()), keep, &mut failed);
                }
            }
        }
    }
    disconnect(room, conns, failed);
    wait.outcome
}

/// Moves `item` into `to`'s queue; a full or gone queue joins `failed`.
fn put(conns: &mut Conns, to: ConnId, item: Outbound, keep: bool, failed: &mut Vec<ConnId>) {
    let released = matches!(item, Outbound::Released { .. } | Outbound::Replaced { .. });
    let Some(conn) = conns.get(&to) else { return };
    if !conn.send(item) {
        failed.push(to);
    }
    // A closed room keeps its connections' handles: requests still in its
    // inbox are answered after it closed.
    if released && !keep {
        conns.remove(&to);
    }
}

fn disconnect(room: &mut Room, conns: &mut Conns, failed: Vec<ConnId>) {
    let now = Instant::now().into_std();
    for conn in failed {
        conns.remove(&conn);
        room.disconnect(conn, now);
    }
}

/// Serializes the room's output and moves it into the connections' queues,
/// or holds it behind a record's commit. A connection whose queue is gone or
/// full counts as disconnected, which may produce more output.
fn deliver(
    room: &mut Room,
    code: &Arc<str>,
    conns: &mut Conns,
    ctx: &RoomContext,
    house: &mut Thinker,
    held: &mut Held,
) {
    let store = &ctx.store;
    loop {
        let mut failed = Vec::new();
        let keep = room.is_closed();
        let (outputs, recipients) = room.drain();
        for output in outputs {
            let (to, item) = match output {
                Output::Send { to, msg } => {
                    if let ServerMessage::Error { code, .. } = &msg {
                        crate::metrics::refused(*code);
                    }
                    (to, Outbound::Frame(encode(&msg)))
                }
                Output::Broadcast { msg: msg @ ServerMessage::GameOver { .. }, to } if held.waiting() => {
                    held.hold_game_over(msg, recipients[to].to_vec());
                    continue;
                }
                Output::Broadcast { msg, to } => {
                    let frame = encode(&msg);
                    for &to in &recipients[to] {
                        if let Some((to, item)) = held.hold(to, Outbound::Frame(frame.clone())) {
                            put(conns, to, item, keep, &mut failed);
                        }
                    }
                    continue;
                }
                Output::Live { to, live } => (to, Outbound::Live { room: code.clone(), live }),
                Output::Release { to } => (to, Outbound::Released { room: code.clone() }),
                Output::Replace { to } => (to, Outbound::Replaced { room: code.clone() }),
                Output::Save(mut write) => {
                    if let LiveWrite::Start(game) = &mut write {
                        game.started_at_ms = unix_ms(std::time::SystemTime::now());
                    }
                    store.save(write);
                    continue;
                }
                Output::Think { seq, game, level, asker } => {
                    house.start(seq, game, level, asker, ctx.house_think, &ctx.searches);
                    continue;
                }
                Output::Record { mut record, lasted, players } => {
                    let end = std::time::SystemTime::now();
                    record.ended_at_ms = unix_ms(end);
                    record.started_at_ms = unix_ms(end - lasted);
                    let players = [0, 1].map(|i| (record.players[i].account, players[i]));
                    let game = Some(record.id.clone());
                    let answer = match store.record(record) {
                        Some(Recorded { answer: Some(answer) }) => Some(answer),
                        // Nothing to wait for; still a wait of its own when
                        // an earlier one is pending, so that what follows
                        // keeps its place (and this game's `game_over` no
                        // earlier game's ratings).
                        _ if held.waiting() => None,
                        _ => continue,
                    };
                    // The store's own limit, and a second: past it the store says it is stuck.
                    let deadline = Instant::now() + STUCK + Duration::from_secs(1);
                    let items = Vec::new();
                    // What a store that never answers (stuck, gone) leaves it at.
                    let outcome = Outcome::Waiting(None);
                    held.waits.push_back(Wait { answer, deadline, outcome, game, players, items });
                    continue;
                }
            };
            if let Some((to, item)) = held.hold(to, item) {
                put(conns, to, item, keep, &mut failed);
            }
        }
        if failed.is_empty() {
            return;
        }
        disconnect(room, conns, failed);
    }
}

fn count_games(room: &Room, counted: &mut Counts, stats: &Stats) {
    let now = *room.counts();
    if now != *counted {
        stats.add(&now, counted);
        *counted = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratings::{Standing, rate};

    /// The room's loop polls the oldest wait and drops it whenever a request
    /// comes in first: the store's answer must still be waited for, not
    /// lost with the dropped future (a lost answer would let `game_over`
    /// out before its record is committed, or out at all when it was refused).
    #[tokio::test]
    async fn a_wait_polled_and_dropped_still_waits_for_the_answer() {
        let (answer_tx, answer) = oneshot::channel();
        let mut held = Held::default();
        held.waits.push_back(Wait {
            answer: Some(answer),
            deadline: Instant::now() + Duration::from_secs(600),
            outcome: Outcome::Written(None),
            game: None,
            players: [(None, None); 2],
            items: Vec::new(),
        });
        assert!(futures::poll!(Box::pin(held.committed())).is_pending());
        assert!(futures::poll!(Box::pin(held.committed())).is_pending(), "nor after another drop");
        let ratings = rate([Standing::default(); 2], Some(0));
        answer_tx.send(Outcome::Written(Some(ratings))).expect("answered");
        held.committed().await;
        assert_eq!(held.waits[0].outcome, Outcome::Written(Some(ratings)));
    }
}
