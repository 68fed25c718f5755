//! Games in progress in the store: how the writer folds [`LiveWrite`]s into
//! as few changes as it can, for any backend to write.
//!
//! A move is one small job on the store's queue. The writer commits what it
//! holds at most every [`HOLD`] (see `writer::run`), and until then keeps
//! each room's changes folded: its new moves become one row, and a game that
//! starts and ends between two commits costs no live rows at all (its record
//! is the only write).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::store::changes::{LiveGame, LiveWrite};

/// The longest a write waits for the commit that makes it durable, besides
/// the commit itself: inside the 100 ms of moves the contract allows a
/// crash to lose.
pub(super) const HOLD: Duration = Duration::from_millis(30);

/// Most room changes kept while writes fail; beyond it the oldest are dropped.
const BACKLOG: usize = 100_000;

/// What is waiting to be written for one room.
#[derive(Debug, Default)]
struct Delta {
    /// What the database holds for the room goes first: its game ended, or another began.
    reset: bool,
    /// A game to insert.
    start: Option<Box<LiveGame>>,
    /// 0-based index of `moves[0]`.
    first: u32,
    /// New moves, contiguous.
    moves: Vec<[u16; 2]>,
    /// With a Fischer clock: the movers' times left after `moves`.
    times: Vec<u64>,
    /// A clock to save.
    clock: Option<Option<Duration>>,
    /// Sides that went berserk since the last commit, player 1 first.
    berserk: [bool; 2],
    /// When the oldest of `moves` was accepted.
    oldest_move: Option<Instant>,
}

/// One room's part of a commit, in the order a backend applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoomChange<'a> {
    /// The room's code, the key of its saved game.
    pub room: &'a str,
    /// Its saved game goes first (it ended, or another began).
    pub delete_game: bool,
    /// Its saved moves go first.
    pub delete_moves: bool,
    /// A game to save, with no moves yet.
    pub start: Option<&'a LiveGame>,
    /// 0-based index of `moves[0]`.
    pub first: u32,
    /// New moves, contiguous; empty for none.
    pub moves: &'a [[u16; 2]],
    /// With a Fischer clock: the movers' times left after `moves` (ms), like them.
    pub times: &'a [u64],
    /// A clock to save: what the player to move has left, if timed.
    pub clock: Option<Option<Duration>>,
    /// Sides that went berserk (player 1 first): saved after the game's start and moves.
    pub berserk: [bool; 2],
}

/// Changes to the games in progress, folded per room until the next commit.
#[derive(Debug, Default)]
pub(super) struct Fold {
    rooms: FxHashMap<Arc<str>, Delta>,
    /// Rooms with a saved game, and rooms with saved moves, in the database.
    games_in_db: FxHashSet<Arc<str>>,
    moves_in_db: FxHashSet<Arc<str>>,
    /// Taken to be written, in order; kept (and retried) while writes fail.
    taken: Vec<(Arc<str>, Delta)>,
    /// When the oldest held move of each game that ended was accepted, and
    /// how many there were: they are durable with the game's record.
    ended: Vec<(Instant, usize)>,
    /// Room changes given up on (the backlog of failed writes was full).
    pub(super) dropped: u64,
}

impl Fold {
    /// A fold that knows the games already saved (those restored at start):
    /// when they end, their rows go.
    pub(super) fn saved(rooms: impl IntoIterator<Item = Arc<str>>) -> Fold {
        let games_in_db: FxHashSet<Arc<str>> = rooms.into_iter().collect();
        Fold { moves_in_db: games_in_db.clone(), games_in_db, ..Fold::default() }
    }

    /// Adds one write.
    pub(super) fn add(&mut self, write: LiveWrite) {
        match write {
            LiveWrite::Start(game) => {
                let room = game.room.clone();
                self.replace(room, Delta { reset: true, start: Some(game), ..Delta::default() });
            }
            LiveWrite::Move { room, seq, cell, left, at } => {
                let delta = self.rooms.entry(room).or_default();
                let index = seq.saturating_sub(1);
                if delta.moves.is_empty() {
                    delta.first = index;
                }
                // A move lost on a full queue leaves a gap: the moves after
                // it cannot be replayed, so they are not saved either.
                if delta.first + delta.moves.len() as u32 == index {
                    delta.moves.push(cell);
                    delta.times.extend(left);
                }
                delta.oldest_move = Some(delta.oldest_move.map_or(at, |s| s.min(at)));
            }
            LiveWrite::Clock { room, left } => self.rooms.entry(room).or_default().clock = Some(left),
            LiveWrite::Berserk { room, player } => {
                self.rooms.entry(room).or_default().berserk
                    [usize::from(player == tictactoe_protocol::Player::O)] = true;
            }
        }
    }

    /// The game in `room` ended (its record is in the same commit): nothing of it stays.
    pub(super) fn end(&mut self, room: &Arc<str>) {
        self.replace(room.clone(), Delta { reset: true, ..Delta::default() });
    }

    fn replace(&mut self, room: Arc<str>, delta: Delta) {
        if let Some(old) = self.rooms.insert(room, delta) {
            if let Some(oldest) = old.oldest_move {
                self.ended.push((oldest, old.moves.len()));
            }
        }
    }

    /// Whether anything waits for a commit.
    pub(super) fn is_empty(&self) -> bool {
        self.rooms.is_empty() && !self.has_taken()
    }

    /// The games in `rooms` are in the database, held by this writer now
    /// (adopted from another instance): when they end, their rows go.
    pub(super) fn held_now(&mut self, rooms: &[Arc<str>]) {
        self.games_in_db.extend(rooms.iter().cloned());
        self.moves_in_db.extend(rooms.iter().cloned());
    }

    /// The rooms whose changes are taken and not yet written.
    pub(super) fn taken_rooms(&self) -> Vec<Arc<str>> {
        let mut rooms: Vec<Arc<str>> = self.taken.iter().map(|(room, _)| room.clone()).collect();
        rooms.sort_unstable();
        rooms.dedup();
        rooms
    }

    /// Gives up every change to the games in `rooms`: another instance
    /// holds them now, and the database refuses this writer's.
    pub(super) fn give_up(&mut self, rooms: &[Arc<str>]) {
        let before = self.taken.len() + self.rooms.len();
        self.taken.retain(|(room, _)| !rooms.contains(room));
        self.rooms.retain(|room, _| !rooms.contains(room));
        for room in rooms {
            self.games_in_db.remove(room);
            self.moves_in_db.remove(room);
        }
        self.dropped += (before - self.taken.len() - self.rooms.len()) as u64;
    }

    /// Takes everything held to be written.
    pub(super) fn take(&mut self) {
        self.taken.extend(self.rooms.drain());
        if self.taken.len() > BACKLOG {
            let over = self.taken.len() - BACKLOG;
            self.taken.drain(..over);
            self.dropped += over as u64;
        }
    }

    /// Room changes held, folded or taken.
    pub(super) fn held(&self) -> usize {
        self.rooms.len() + self.taken.len()
    }

    /// Whether anything is taken and not yet written.
    pub(super) fn has_taken(&self) -> bool {
        !self.taken.is_empty() || !self.ended.is_empty()
    }

    /// What was taken, in order, as a backend writes it: per room, what to
    /// delete first, then the game to insert, its new moves, its clock.
    pub(super) fn changes(&self) -> Vec<RoomChange<'_>> {
        // Rooms given rows earlier in this transaction (after failed writes,
        // one room may have several changes taken).
        let (mut games_here, mut moves_here) = (FxHashSet::<&str>::default(), FxHashSet::<&str>::default());
        let mut out = Vec::with_capacity(self.taken.len());
        for (room, d) in &self.taken {
            let mut change = RoomChange {
                room,
                delete_game: false,
                delete_moves: false,
                start: d.start.as_deref(),
                first: d.first,
                moves: &d.moves,
                times: &d.times,
                clock: d.clock,
                berserk: d.berserk,
            };
            if d.reset {
                // Nothing to delete for a game that never reached the database.
                change.delete_game = self.games_in_db.contains(room) || games_here.remove(&**room);
                change.delete_moves = self.moves_in_db.contains(room) || moves_here.remove(&**room);
            }
            if d.start.is_some() {
                games_here.insert(room);
            }
            if !d.moves.is_empty() {
                moves_here.insert(room);
            }
            out.push(change);
        }
        out
    }

    /// What was taken is committed at `done`: `durable` hears, for each
    /// room's moves, how long the oldest waited since it was accepted.
    /// Returns how many moves that made durable.
    pub(super) fn committed(&mut self, done: Instant, mut durable: impl FnMut(Duration)) -> u64 {
        let mut moves = 0;
        for (room, d) in self.taken.drain(..) {
            moves += d.moves.len() as u64;
            if d.reset {
                self.games_in_db.remove(&room);
                self.moves_in_db.remove(&room);
            }
            if d.start.is_some() {
                self.games_in_db.insert(room.clone());
            }
            if !d.moves.is_empty() {
                self.moves_in_db.insert(room);
            }
            if let Some(oldest) = d.oldest_move {
                durable(done.saturating_duration_since(oldest));
            }
        }
        for (oldest, n) in self.ended.drain(..) {
            moves += n as u64;
            durable(done.saturating_duration_since(oldest));
        }
        moves
    }
}
