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

use crate::core::account::{Identity, TokenHash};
use crate::store::changes::{LiveGame, decode_cells, encode_cells, saved_rules};
use crate::store::live::RoomChange;
use tictactoe_protocol::{Fischer, HouseLevel};

/// A row of one commit's changes.
pub(super) const CHANGES: u8 = 1;
/// A row that holds every game in progress: what came before it is void.
pub(super) const SNAPSHOT: u8 = 2;

const START: u8 = 1;
const MOVES: u8 = 2;
const CLOCK: u8 = 3;
const END: u8 = 4;
/// A game's Fischer clock, after its `START` (rows of servers before time
/// controls have none).
const FISCHER: u8 = 5;
/// The movers' times left after moves, after their `MOVES`.
const TIMES: u8 = 6;
/// How many of a game's moves are its room's opening, after its `START`.
const OPENING: u8 = 7;

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

    /// A committed row of changes: the games follow it.
    pub(super) fn committed(&mut self, row: &[u8]) {
        self.since_snapshot += row.len();
        // The row was encoded here a moment ago: it decodes.
        if let Ok(entries) = decode(row) {
            for entry in entries.1 {
                apply(&mut self.games, entry);
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
            END => Entry::End { room: r.str()? },
            tag => return Err(format!("entry tag {tag} at byte {at} is unknown")),
        };
        entries.push(entry);
    }
    Ok((kind, entries))
}

/// Appends encoded fields.
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn str(&mut self, s: &str) {
        self.u32(u32::try_from(s.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(s.as_bytes());
    }

    /// A duration in milliseconds, -1 for none.
    fn duration(&mut self, d: Option<Duration>) {
        self.i64(d.map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    }

    fn start(&mut self, g: &LiveGame) {
        self.u8(START);
        self.str(&g.room);
        self.str(&g.id);
        self.u32(u32::try_from(g.rules.size).unwrap_or(u32::MAX));
        self.u32(u32::try_from(g.rules.win).unwrap_or(u32::MAX));
        self.duration(g.turn_timeout);
        for (who, token) in g.players.iter().zip(&g.tokens) {
            self.str(&who.name);
            self.i64(who.account.unwrap_or(-1));
            self.u8(u8::from(who.bot));
            self.0.extend_from_slice(token);
        }
        self.i64(g.started_at_ms);
        self.str(g.house.map_or("", HouseLevel::name));
        if g.opening > 0 {
            self.u8(OPENING);
            self.str(&g.room);
            self.u32(u32::try_from(g.opening).unwrap_or(u32::MAX));
        }
        if let Some(clock) = g.rules.clock {
            self.u8(FISCHER);
            self.str(&g.room);
            self.i64(i64::try_from(clock.initial_ms).unwrap_or(i64::MAX));
            self.i64(i64::try_from(clock.increment_ms).unwrap_or(i64::MAX));
        }
    }

    fn times(&mut self, room: &str, first: u32, times: &[u64]) {
        self.u8(TIMES);
        self.str(room);
        self.u32(first);
        self.u32(u32::try_from(times.len()).unwrap_or(u32::MAX));
        for t in times {
            self.0.extend_from_slice(&t.to_le_bytes());
        }
    }

    fn moves(&mut self, room: &str, first: u32, moves: &[[u16; 2]]) {
        self.u8(MOVES);
        self.str(room);
        self.u32(first);
        self.u32(u32::try_from(moves.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(&encode_cells(moves));
    }
}

/// Reads encoded fields, failing on a short or bad row.
struct RowCursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl RowCursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or("the row ends early")?;
        let bytes = &self.bytes[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self) -> Result<i64, String> {
        let mut b = [0; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(i64::from_le_bytes(b))
    }

    fn str(&mut self) -> Result<Arc<str>, String> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes).map(Arc::from).map_err(|_| "a text is not UTF-8".to_owned())
    }

    fn duration(&mut self) -> Result<Option<Duration>, String> {
        match self.i64()? {
            -1 => Ok(None),
            ms => u64::try_from(ms).map(|ms| Some(Duration::from_millis(ms))).map_err(|_| format!("{ms} ms")),
        }
    }

    fn game(&mut self) -> Result<LiveGame, String> {
        let room = self.str()?;
        let id = self.str()?;
        let rules = saved_rules(i64::from(self.u32()?), i64::from(self.u32()?))?;
        let turn_timeout = self.duration()?;
        let mut seat = || -> Result<(Arc<Identity>, TokenHash), String> {
            let name = self.str()?;
            let account = match self.i64()? {
                -1 => None,
                id => Some(id),
            };
            let bot = self.u8()? != 0;
            let token = TokenHash::try_from(self.take(32)?).map_err(|_| "a token's hash is short")?;
            Ok((Arc::new(Identity { name, account, bot, ratings: Box::default() }), token))
        };
        let (x, x_token) = seat()?;
        let (o, o_token) = seat()?;
        let started_at_ms = self.i64()?;
        let house = match &*self.str()? {
            "" => None,
            level => Some(HouseLevel::from_name(level).ok_or(format!("house level {level:?}"))?),
        };
        Ok(LiveGame { berserk: [false; 2], tournament: None,
            opening: 0,
            id,
            room,
            rules,
            turn_timeout,
            players: [x, o],
            tokens: [x_token, o_token],
            moves: Vec::new(),
            times: Vec::new(),
            clock_left: None,
            started_at_ms,
            house,
        })
    }
}
