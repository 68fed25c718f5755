//! The journal's fields as bytes (see `journal`): integers little-endian,
//! strings and blobs with a u32 length; a game's start is its `START`
//! entry and the entries that follow it.

use std::sync::Arc;
use std::time::Duration;

use crate::core::account::{Identity, TokenHash};
use crate::store::changes::{LiveGame, encode_cells, saved_rules};
use tictactoe_protocol::{HouseLevel, Player};

// The journal's vocabulary: a row's kind, then each entry's tag.

/// A row of one commit's changes.
pub(super) const CHANGES: u8 = 1;
/// A row that holds every game in progress: what came before it is void.
pub(super) const SNAPSHOT: u8 = 2;

pub(super) const START: u8 = 1;
pub(super) const MOVES: u8 = 2;
pub(super) const CLOCK: u8 = 3;
pub(super) const END: u8 = 4;
/// A game's Fischer clock, after its `START` (rows of servers before time
/// controls have none).
pub(super) const FISCHER: u8 = 5;
/// The movers' times left after moves, after their `MOVES`.
pub(super) const TIMES: u8 = 6;
/// How many of a game's moves are its room's opening, after its `START`.
pub(super) const OPENING: u8 = 7;
/// The arena tournament a game is played in, after its `START`.
pub(super) const TOURNAMENT: u8 = 8;
/// A side of a game went berserk (its number, 1 or 2): after its `START`,
/// in order with the moves.
pub(super) const BERSERK: u8 = 9;

/// Appends encoded fields.
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    pub(super) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn str(&mut self, s: &str) {
        self.u32(u32::try_from(s.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(s.as_bytes());
    }

    /// A duration in milliseconds, -1 for none.
    pub(super) fn duration(&mut self, d: Option<Duration>) {
        self.i64(d.map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    }

    pub(super) fn start(&mut self, g: &LiveGame) {
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
        if let Some(tournament) = &g.tournament {
            self.u8(TOURNAMENT);
            self.str(&g.room);
            self.str(tournament);
        }
        self.berserk(&g.room, g.berserk);
    }

    /// A `BERSERK` entry for each side of `berserk` that went berserk.
    pub(super) fn berserk(&mut self, room: &str, berserk: [bool; 2]) {
        for (player, _) in [Player::X, Player::O].into_iter().zip(berserk).filter(|(_, b)| *b) {
            self.u8(BERSERK);
            self.str(room);
            self.u8(player.number());
        }
    }

    pub(super) fn times(&mut self, room: &str, first: u32, times: &[u64]) {
        self.u8(TIMES);
        self.str(room);
        self.u32(first);
        self.u32(u32::try_from(times.len()).unwrap_or(u32::MAX));
        for t in times {
            self.0.extend_from_slice(&t.to_le_bytes());
        }
    }

    pub(super) fn moves(&mut self, room: &str, first: u32, moves: &[[u16; 2]]) {
        self.u8(MOVES);
        self.str(room);
        self.u32(first);
        self.u32(u32::try_from(moves.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(&encode_cells(moves));
    }
}

/// Reads encoded fields, failing on a short or bad row.
pub(super) struct RowCursor<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl RowCursor<'_> {
    pub(super) fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or("the row ends early")?;
        let bytes = &self.bytes[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    pub(super) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn i64(&mut self) -> Result<i64, String> {
        let mut b = [0; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(i64::from_le_bytes(b))
    }

    pub(super) fn str(&mut self) -> Result<Arc<str>, String> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes).map(Arc::from).map_err(|_| "a text is not UTF-8".to_owned())
    }

    pub(super) fn duration(&mut self) -> Result<Option<Duration>, String> {
        match self.i64()? {
            -1 => Ok(None),
            ms => u64::try_from(ms).map(|ms| Some(Duration::from_millis(ms))).map_err(|_| format!("{ms} ms")),
        }
    }

    pub(super) fn game(&mut self) -> Result<LiveGame, String> {
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
        Ok(LiveGame {
            berserk: [false; 2],
            tournament: None,
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
