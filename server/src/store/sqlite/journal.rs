//! Games in progress in SQLite as an append-only journal: each commit adds
//! one row (`live_log`) that holds all of its changes, encoded compactly, so
//! a commit writes the pages at the table's end and nothing else — no row
//! per room rewritten or deleted, wherever its key falls. Replaying the rows
//! in order gives the games in progress. Now and then, once the journal has
//! grown well past what the games in progress take, one row (a snapshot)
//! replaces it.
//!
//! A row is a kind byte ([`CHANGES`] or [`SNAPSHOT`]) and then entries, each
//! a tag byte and its fields: integers little-endian, strings and blobs
//! with a u32 length.

use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;

use crate::store::changes::{LiveGame, decode_cells};
use crate::store::live::RoomChange;
use crate::store::sqlite::journal_bytes::{
    BERSERK, CHANGES, CLOCK, END, FISCHER, MOVES, OPENING, RowCursor, SNAPSHOT, START, TIMES, TOURNAMENT,
    Writer,
};
use tictactoe_protocol::{Fischer, Player};

/// The journal's rows are replaced by a snapshot once they hold this many
/// bytes more than one, and at least [`SNAPSHOT_MIN`]: each byte of changes
/// is then written about twice at most.
const SNAPSHOT_MIN: usize = 1 << 20;

/// The games in progress as the journal holds them, kept by the writer in
/// step with what is committed.
#[derive(Debug, Default)]
pub(super) struct Journal {
    /// Each room's saved game, as a replay of the journal gives it.
    pub(super) games: FxHashMap<Arc<str>, LiveGame>,
    /// Bytes of rows written since the last snapshot.
    since_snapshot: usize,
    /// Bytes of the last snapshot.
    snapshot: usize,
}

impl Journal {
    /// A journal whose rows are just a snapshot of `games` (`bytes` long).
    pub(super) fn from_snapshot(games: FxHashMap<Arc<str>, LiveGame>, bytes: usize) -> Journal {
        Journal { games, since_snapshot: 0, snapshot: bytes }
    }

    /// A commit wrote `changes` as a row of `bytes`: the games follow them,
    /// as a replay of that row would give them (the row is not decoded).
    pub(super) fn committed(&mut self, changes: &[RoomChange<'_>], bytes: usize) {
        self.since_snapshot += bytes;
        for c in changes {
            if c.delete_game || c.delete_moves {
                self.games.remove(c.room);
            }
            if let Some(game) = c.start {
                // What a row holds of a start: never its moves or clock (they follow it).
                let saved =
                    LiveGame { moves: Vec::new(), times: Vec::new(), clock_left: None, ..game.clone() };
                self.games.insert(game.room.clone(), saved);
            }
            let Some(game) = self.games.get_mut(c.room) else { continue };
            if !c.moves.is_empty() && game.moves.len() == c.first as usize {
                game.moves.extend_from_slice(c.moves);
            }
            if !c.times.is_empty() && game.times.len() == c.first as usize {
                game.times.extend_from_slice(c.times);
            }
            if let Some(left) = c.clock {
                game.clock_left = left;
            }
            for (side, went) in game.berserk.iter_mut().zip(c.berserk) {
                *side |= went;
            }
        }
    }

    /// Whether the journal has grown enough to be replaced by a snapshot.
    pub(super) fn wants_snapshot(&self) -> bool {
        self.since_snapshot > SNAPSHOT_MIN.max(2 * self.snapshot)
    }

    /// A snapshot of `bytes` replaced the rows.
    pub(super) fn snapshotted(&mut self, bytes: usize) {
        self.since_snapshot = 0;
        self.snapshot = bytes;
    }
}

/// One change, decoded.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Entry {
    /// A game starts in its room (replacing what the room held).
    Start(Box<LiveGame>),
    /// Moves from the `first`-th (0-based) on.
    Moves { room: Arc<str>, first: u32, cells: Vec<[u16; 2]> },
    /// What the player to move has left (saved at a graceful stop).
    Clock { room: Arc<str>, left: Option<Duration> },
    /// The room's game is played on this Fischer clock.
    Fischer { room: Arc<str>, clock: Fischer },
    /// The movers' times left (ms) after moves from the `first`-th (0-based) on.
    Times { room: Arc<str>, first: u32, times: Vec<u64> },
    /// The first `moves` of the room's game are its opening.
    Opening { room: Arc<str>, moves: u32 },
    /// The room's game is played in this arena tournament.
    Tournament { room: Arc<str>, id: Arc<str> },
    /// A side of the room's game went berserk.
    Berserk { room: Arc<str>, player: Player },
    /// The room's game ended (or another replaces it): it goes.
    End { room: Arc<str> },
}

/// Applies one entry to the games in progress. Moves that do not follow
/// the game's last (a move lost on a full queue left a gap) are not kept:
/// the game goes on from its last contiguous move.
pub(super) fn apply(games: &mut FxHashMap<Arc<str>, LiveGame>, entry: Entry) {
    match entry {
        Entry::Start(game) => {
            games.insert(game.room.clone(), *game);
        }
        Entry::Moves { room, first, cells } => {
            if let Some(game) = games.get_mut(&room) {
                if game.moves.len() == first as usize {
                    game.moves.extend(cells);
                }
            }
        }
        Entry::Clock { room, left } => {
            if let Some(game) = games.get_mut(&room) {
                game.clock_left = left;
            }
        }
        Entry::Fischer { room, clock } => {
            if let Some(game) = games.get_mut(&room) {
                game.rules.clock = Some(clock);
            }
        }
        Entry::Opening { room, moves } => {
            if let Some(game) = games.get_mut(&room) {
                game.opening = moves as usize;
            }
        }
        Entry::Times { room, first, times } => {
            if let Some(game) = games.get_mut(&room) {
                if game.times.len() == first as usize {
                    game.times.extend(times);
                }
            }
        }
        Entry::Tournament { room, id } => {
            if let Some(game) = games.get_mut(&room) {
                game.tournament = Some(id);
            }
        }
        Entry::Berserk { room, player } => {
            if let Some(game) = games.get_mut(&room) {
                game.berserk[usize::from(player == Player::O)] = true;
            }
        }
        Entry::End { room } => {
            games.remove(&room);
        }
    }
}

/// One commit's changes as a row, or `None` when there are none.
pub(super) fn encode_changes(changes: &[RoomChange<'_>]) -> Option<Vec<u8>> {
    let mut out = Writer(Vec::with_capacity(16 * changes.len() + 1));
    out.u8(CHANGES);
    for c in changes {
        if c.delete_game || c.delete_moves {
            out.u8(END);
            out.str(c.room);
        }
        if let Some(game) = c.start {
            out.start(game);
        }
        if !c.moves.is_empty() {
            out.moves(c.room, c.first, c.moves);
        }
        if !c.times.is_empty() {
            out.times(c.room, c.first, c.times);
        }
        if let Some(left) = c.clock {
            out.u8(CLOCK);
            out.str(c.room);
            out.duration(left);
        }
        out.berserk(c.room, c.berserk);
    }
    (out.0.len() > 1).then_some(out.0)
}

/// A row that holds `games` (with their moves and clocks).
pub(super) fn encode_snapshot<'a>(games: impl Iterator<Item = &'a LiveGame>) -> Vec<u8> {
    let mut out = Writer(vec![SNAPSHOT]);
    for game in games {
        out.start(game);
        if !game.moves.is_empty() {
            out.moves(&game.room, 0, &game.moves);
        }
        if !game.times.is_empty() {
            out.times(&game.room, 0, &game.times);
        }
        if game.clock_left.is_some() {
            out.u8(CLOCK);
            out.str(&game.room);
            out.duration(game.clock_left);
        }
    }
    out.0
}

/// A row's kind and entries, or what is wrong with it.
pub(super) fn decode(row: &[u8]) -> Result<(u8, Vec<Entry>), String> {
    let mut r = RowCursor { bytes: row, at: 0 };
    let kind = r.u8()?;
    if kind != CHANGES && kind != SNAPSHOT {
        return Err(format!("row kind {kind} is unknown"));
    }
    let mut entries = Vec::new();
    while r.at < row.len() {
        let at = r.at;
        let entry = match r.u8()? {
            START => Entry::Start(Box::new(r.game()?)),
            MOVES => {
                let room = r.str()?;
                let first = r.u32()?;
                let n = r.u32()? as usize;
                let bytes = r.take(n.checked_mul(4).ok_or("too many moves")?)?;
                let cells = decode_cells(bytes).collect();
                Entry::Moves { room, first, cells }
            }
            CLOCK => Entry::Clock { room: r.str()?, left: r.duration()? },
            FISCHER => {
                let room = r.str()?;
                let (initial, increment) = (r.i64()?, r.i64()?);
                let clock = Fischer::checked(Some(initial), Some(increment))?;
                Entry::Fischer { room, clock }
            }
            OPENING => Entry::Opening { room: r.str()?, moves: r.u32()? },
            TIMES => {
                let room = r.str()?;
                let first = r.u32()?;
                let n = r.u32()? as usize;
                let bytes = r.take(n.checked_mul(8).ok_or("too many times")?)?;
                let times = bytes
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
                    .collect();
                Entry::Times { room, first, times }
            }
            TOURNAMENT => Entry::Tournament { room: r.str()?, id: r.str()? },
            BERSERK => {
                let room = r.str()?;
                let n = r.u8()?;
                Entry::Berserk { room, player: Player::from_number(n).ok_or(format!("player {n}"))? }
            }
            END => Entry::End { room: r.str()? },
            tag => return Err(format!("entry tag {tag} at byte {at} is unknown")),
        };
        entries.push(entry);
    }
    Ok((kind, entries))
}
