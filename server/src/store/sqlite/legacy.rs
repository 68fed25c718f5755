//! Games in progress as servers before the journal saved them: a row per
//! game (`live_games`) and its moves in chunks (`live_moves`). A file from
//! such a server has its games read once, at the first start that has the
//! journal, which then holds them; the tables go.

use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Transaction, params};
use rustc_hash::FxHashMap;

use crate::core::account::{Identity, TokenHash};
use crate::store::changes::{LiveGame, decode_cells, saved_rules};
use tictactoe_protocol::HouseLevel;

/// The games the old tables hold, if they are there; then the tables go.
/// Moves after a gap are not kept; a row that cannot be read back is set
/// aside in `quarantine` (a game with its moves).
pub(super) fn take(tx: &Transaction<'_>) -> rusqlite::Result<Vec<LiveGame>> {
    let there: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'live_games'",
        [],
        |r| r.get(0),
    )?;
    if there == 0 {
        return Ok(Vec::new());
    }
    let mut moves: FxHashMap<String, Vec<[u16; 2]>> = FxHashMap::default();
    let mut bad = Vec::new();
    {
        let mut stmt = tx.prepare("SELECT room, first, cells FROM live_moves ORDER BY room, first")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let read =
                || -> rusqlite::Result<(String, i64, Vec<u8>)> { Ok((r.get(0)?, r.get(1)?, r.get(2)?)) };
            let (room, first, cells) = match read() {
                Ok(row) => row,
                Err(e) => {
                    bad.push(Bad::of("live_moves", r, 3, e.to_string()));
                    continue;
                }
            };
            let list = moves.entry(room).or_default();
            if first == list.len() as i64 && cells.len() % 4 == 0 {
                list.extend(decode_cells(&cells));
            }
        }
    }
    let mut games = Vec::new();
    {
        let mut stmt = tx.prepare(
            "SELECT room, size, win, turn_timeout_ms, x_name, x_account, x_bot, x_token,
                o_name, o_account, o_bot, o_token, clock_left_ms, started_at, game_id, house_level
             FROM live_games",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            match live_game(r, &mut moves) {
                Ok(game) => games.push(game),
                Err(why) => bad.push(Bad::of("live_games", r, 16, why)),
            }
        }
    }
    for b in &bad {
        b.set_aside(tx)?;
    }
    tx.execute_batch("DROP TABLE live_moves; DROP TABLE live_games;")?;
    if !games.is_empty() {
        tracing::info!(games = games.len(), "games in progress moved from the old tables into the journal");
    }
    Ok(games)
}

/// One saved game from its row (and its moves, taken from `moves`), or why
/// it cannot be played on.
fn live_game(
    r: &rusqlite::Row<'_>,
    moves: &mut FxHashMap<String, Vec<[u16; 2]>>,
) -> Result<LiveGame, String> {
    let e = |e: rusqlite::Error| e.to_string();
    let room: String = r.get(0).map_err(e)?;
    let identity = |i: usize| -> Result<Arc<Identity>, String> {
        Ok(Arc::new(Identity {
            name: r.get::<_, String>(i).map_err(e)?.into(),
            account: r.get(i + 1).map_err(e)?,
            bot: r.get(i + 2).map_err(e)?,
            ratings: Box::default(),
        }))
    };
    let token = |i: usize| -> Result<TokenHash, String> {
        TokenHash::try_from(r.get::<_, Vec<u8>>(i).map_err(e)?.as_slice())
            .map_err(|_| "a resume token's hash is not 32 bytes".to_owned())
    };
    let ms = |i: usize| -> Result<Option<Duration>, String> {
        match r.get::<_, Option<i64>>(i).map_err(e)? {
            None => Ok(None),
            Some(v) => {
                u64::try_from(v).map(|v| Some(Duration::from_millis(v))).map_err(|_| format!("{v} ms"))
            }
        }
    };
    let rules = saved_rules(r.get(1).map_err(e)?, r.get(2).map_err(e)?)?;
    let house = match r.get::<_, Option<String>>(15).map_err(e)? {
        None => None,
        Some(level) => Some(HouseLevel::from_name(&level).ok_or(format!("house level {level:?}"))?),
    };
    let game = LiveGame {
        berserk: [false; 2],
        tournament: None,
        opening: 0,
        times: Vec::new(),
        id: r.get::<_, String>(14).map_err(e)?.into(),
        moves: moves.remove(&room).unwrap_or_default(),
        room: room.into(),
        rules,
        turn_timeout: ms(3)?,
        players: [identity(4)?, identity(8)?],
        tokens: [token(7)?, token(11)?],
        clock_left: ms(12)?,
        started_at_ms: r.get(13).map_err(e)?,
        house,
    };
    match game.unplayable() {
        Some(why) => Err(why.into()),
        None => Ok(game),
    }
}

/// A saved row that cannot be read back, to be set aside.
struct Bad {
    what: &'static str,
    key: Option<String>,
    reason: String,
    data: serde_json::Value,
}

impl Bad {
    /// The first `columns` values of `r`, as JSON, with why they are bad.
    fn of(what: &'static str, r: &rusqlite::Row<'_>, columns: usize, reason: String) -> Bad {
        use rusqlite::types::ValueRef;
        let data = (0..columns)
            .map(|i| match r.get_ref(i) {
                Ok(ValueRef::Null) | Err(_) => serde_json::Value::Null,
                Ok(ValueRef::Integer(n)) => n.into(),
                Ok(ValueRef::Real(f)) => f.into(),
                Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into(),
                Ok(ValueRef::Blob(b)) => b.iter().map(|x| format!("{x:02x}")).collect::<String>().into(),
            })
            .collect();
        let key = match r.get_ref(0) {
            Ok(ValueRef::Text(t)) => Some(String::from_utf8_lossy(t).into_owned()),
            _ => None,
        };
        Bad { what, key, reason, data }
    }

    /// Moves the row (and, for a game, its moves) into `quarantine`.
    fn set_aside(&self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        tracing::error!(
            table = self.what,
            key = self.key.as_deref().unwrap_or("?"),
            reason = %self.reason,
            "a saved row cannot be read back: set aside in the quarantine table"
        );
        let now = crate::store::record::unix_ms(std::time::SystemTime::now());
        tx.execute(
            "INSERT INTO quarantine (what, key, reason, data, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![self.what, self.key, self.reason, self.data.to_string(), now],
        )?;
        let Some(key) = &self.key else { return Ok(()) };
        if self.what == "live_games" {
            // Its moves go along, each kept as it was.
            let mut stmt = tx.prepare("SELECT first, cells FROM live_moves WHERE room = ?1")?;
            let chunks = stmt
                .query_map([key], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            for (first, cells) in chunks {
                let hex: String = cells.iter().map(|x| format!("{x:02x}")).collect();
                let data = serde_json::json!([key, first, hex]).to_string();
                tx.execute(
                    "INSERT INTO quarantine (what, key, reason, data, at) VALUES ('live_moves', ?1, ?2, ?3, ?4)",
                    params![key, "its game cannot be read back", data, now],
                )?;
            }
        }
        Ok(())
    }
}
