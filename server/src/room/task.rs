//! The task that owns one [`Room`]: it feeds the room its inbox and its
//! deadlines, serializes what the room says (each broadcast once) and
//! delivers it to the connections' queues, and hands what the room saves
//! (moves, records) to the store without waiting.
//!
//! An ended game's `game_over` (and whatever the room says after it) is held
//! back until the store has committed the game's record: a result a player
//! saw is never lost to a crash, nor played again after a restart. Moves are
//! never held: a game ends only after its last move was delivered.

use std::future::poll_fn;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::Instrument;

use rustc_hash::FxHashMap;

use tictactoe_protocol::ServerMessage;

use crate::cmd::encode;
use crate::cmd::{ConnHandle, LobbyCmd, Outbound, RoomCmd};
use crate::core::ids::ConnId;
use crate::core::queue::{self, Recv};
use crate::core::signal::{Armed, Shutdown};
use crate::core::stats::Counts;
use crate::core::stats::{Gauge, Stats};
use crate::house::{Searches, Thinker};
use crate::room::{Output, Room};
use crate::store::changes::LiveWrite;
use crate::store::fence::Fence;
use crate::store::record::unix_ms;
use crate::store::{Outcome, Recorded, STUCK, Store};

mod lease;
mod withheld;

use lease::{lapsed, let_go, may_act, unwritten_still_ours};
use withheld::{Wait, Withheld, release};

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
    let mut held = Withheld::default();
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
    // Requests that reach the inbox after the room closed are answered, not
    // lost: a player who asked for a rematch as the other left hears why.
    // Until its record is committed the room goes on reading them: a player
    // resuming a game that ended while they were away is told its id (once
    // the record is there), not that the room is gone.
    while held.waiting() {
        tokio::select! {
            biased;
            _ = held.committed() => {
                if !unwritten_still_ours(&held, &ctx, &mut checked).await
                    || release(&mut room, &mut conns, &mut held) == Outcome::Refused
                {
                    return let_go(&mut room, &conns, &ctx).await;
                }
            }
            Recv::Item(cmd) = inbox.recv() => handle(&mut room, &mut conns, cmd, Instant::now().into_std()),
        }
        deliver(&mut room, &code, &mut conns, &ctx, &mut house, &mut held);
    }
    let now = Instant::now().into_std();
    for cmd in inbox.close() {
        handle(&mut room, &mut conns, cmd, now);
    }
    deliver(&mut room, &code, &mut conns, &ctx, &mut house, &mut held);
    let counts = room.counts();
    tracing::info!(games_started = counts.started, games_finished = counts.finished(), "room closed");
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
    held: &mut Withheld,
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
                Output::Think { seq, game, level, asker, budget } => {
                    let think = budget.map_or(ctx.house_think, |b| b.min(ctx.house_think));
                    house.start(seq, game, level, asker, think, &ctx.searches);
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
