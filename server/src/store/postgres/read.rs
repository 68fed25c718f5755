//! Reading Postgres for the API and for sign-in, on a connection of the
//! reader's own: it reads the last commit while the writer goes on.

use std::collections::BTreeMap;

use tictactoe_protocol::api::{self, Leaderboard, PlayerGames, PlayerProfile};
use tokio_postgres::Row;

use crate::core::account::{TokenHash, name_key};
use crate::core::text::look_alike_key;
use crate::ratings::pool_key;
use crate::store::Account;
use crate::store::backend::{BackendError, Fetched, Reader};
use crate::store::postgres::{Conn, Link};
use crate::store::row::{self, StoredRow, record_columns};
use crate::store::spelling::rfc3339;
use crate::store::tournaments::TournamentData;
use tictactoe_protocol::Rules;
use tictactoe_protocol::tournament::TournamentSummary;

/// A reader's connection to the database.
pub struct PgReader {
    link: Link,
}

impl PgReader {
    pub(super) fn new(link: Link) -> PgReader {
        PgReader { link }
    }
}

/// A game by id.
const GAME: &str = concat!("SELECT ", record_columns!(), " FROM games g WHERE g.id = $1");

/// Two index range scans merged: the player's games as X and as O.
const PLAYER_GAMES: &str = concat!(
    "SELECT ",
    record_columns!(),
    " FROM games g WHERE g.seq IN (
        (SELECT seq FROM games WHERE x_account = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3)
        UNION ALL
        (SELECT seq FROM games WHERE o_account = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3)
     ) ORDER BY g.seq DESC LIMIT $3"
);

impl StoredRow for Row {
    type Error = BackendError;

    fn int4(&self, column: &str) -> Result<i32, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn int8(&self, column: &str) -> Result<i64, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn opt_int8(&self, column: &str) -> Result<Option<i64>, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn flag(&self, column: &str) -> Result<bool, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn float(&self, column: &str) -> Result<f64, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn opt_float(&self, column: &str) -> Result<Option<f64>, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn text(&self, column: &str) -> Result<String, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn opt_text(&self, column: &str) -> Result<Option<String>, BackendError> {
        Ok(self.try_get(column)?)
    }
    fn broken(&self, column: &str, what: &str) -> BackendError {
        BackendError(format!("a stored row is broken: {column} is {what}"))
    }
}

/// The id of the account called `name` (ignoring case).
async fn account_id(c: &mut Conn, name: &str) -> Result<Option<i64>, BackendError> {
    let s = c.statement("SELECT id FROM accounts WHERE name_key = $1").await?;
    Ok(c.client.query_opt(&s, &[&name_key(name)]).await?.map(|r| r.try_get("id")).transpose()?)
}

async fn player_games(
    c: &mut Conn,
    name: &str,
    limit: usize,
    before: Option<&str>,
) -> Result<Option<PlayerGames>, BackendError> {
    let Some(id) = account_id(c, name).await? else { return Ok(None) };
    let before_seq = match before {
        // An unknown cursor is an empty page, not everything.
        Some(b) if !storable(b) => return Ok(Some(PlayerGames::default())),
        Some(b) => {
            let s = c.statement("SELECT seq FROM games WHERE id = $1").await?;
            match c.client.query_opt(&s, &[&b]).await? {
                Some(r) => r.try_get::<_, i64>("seq")?,
                // An unknown cursor is an empty page, not everything.
                None => return Ok(Some(PlayerGames::default())),
            }
        }
        None => i64::MAX,
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let s = c.statement(PLAYER_GAMES).await?;
    let games = c
        .client
        .query(&s, &[&id, &before_seq, &limit])
        .await?
        .iter()
        .map(row::record)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(PlayerGames { games }))
}

async fn leaderboard(c: &mut Conn, rules: Rules, limit: usize) -> Result<Leaderboard, BackendError> {
    let s = c
        .statement(
            "SELECT a.name AS name, a.bot AS bot, r.rating AS rating, r.rd AS rd, r.games AS games
             FROM ratings r JOIN accounts a ON a.id = r.account
             WHERE r.size = $1 AND r.win = $2 AND r.games > 0 ORDER BY r.rating DESC, a.name_key COLLATE \"C\" LIMIT $3",
        )
        .await?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let (size, win) = (rules.size as i32, rules.win as i32);
    let players = c
        .client
        .query(&s, &[&size, &win, &limit])
        .await?
        .iter()
        .map(row::leaderboard_entry)
        .collect::<Result<Vec<_>, BackendError>>()?;
    Ok(Leaderboard { players, size: rules.size, win: rules.win })
}

async fn player(c: &mut Conn, name: &str) -> Result<Option<PlayerProfile>, BackendError> {
    let s = c.statement("SELECT id, name, bot, created_at FROM accounts WHERE name_key = $1").await?;
    let Some(r) = c.client.query_opt(&s, &[&name_key(name)]).await? else { return Ok(None) };
    let (id, name, bot, created_at): (i64, String, bool, i64) =
        (r.try_get("id")?, r.try_get("name")?, r.try_get("bot")?, r.try_get("created_at")?);
    let mut ratings = BTreeMap::new();
    let s = c.statement("SELECT size, win, rating, rd, games FROM ratings WHERE account = $1").await?;
    for r in c.client.query(&s, &[&id]).await? {
        ratings.insert(pool_key(row::pool(&r)?), row::pool_standing(&r)?);
    }
    let s = c
        .statement(
            "SELECT
                count(*) FILTER (WHERE (x_account = $1 AND winner = 1) OR (o_account = $1 AND winner = 2)) AS wins,
                count(*) FILTER (WHERE reason = 'draw') AS draws,
                count(*) FILTER (WHERE (x_account = $1 AND winner = 2) OR (o_account = $1 AND winner = 1)) AS losses,
                count(*) FILTER (WHERE reason = 'aborted') AS aborted,
                count(*) FILTER (WHERE reason = 'shutdown') AS interrupted
             FROM games WHERE x_account = $1 OR o_account = $1",
        )
        .await?;
    let results = row::results(&c.client.query_one(&s, &[&id]).await?)?;
    Ok(Some(PlayerProfile { bot, created_at: rfc3339(created_at), name, ratings, results }))
}

/// The account of `name` (ignoring case), else the one whose name looks like it.
async fn account(c: &mut Conn, name: &str) -> Result<Option<(Account, TokenHash)>, BackendError> {
    let s = c
        .statement(
            "SELECT id, name, bot, token_hash FROM accounts WHERE name_key = $1 OR name_skeleton = $2
             ORDER BY (name_key = $1) DESC LIMIT 1",
        )
        .await?;
    let Some(r) = c.client.query_opt(&s, &[&name_key(name), &look_alike_key(name)]).await? else {
        return Ok(None);
    };
    let (id, name, bot): (i64, String, bool) = (r.try_get("id")?, r.try_get("name")?, r.try_get("bot")?);
    let Ok(hash) = TokenHash::try_from(r.try_get::<_, &[u8]>("token_hash")?) else { return Ok(None) };
    let s = c
        .statement("SELECT size, win, rating, rd, volatility, games FROM ratings WHERE account = $1")
        .await?;
    let standings = c
        .client
        .query(&s, &[&id])
        .await?
        .iter()
        .map(|r| Ok((row::pool(r)?, row::standing(r)?)))
        .collect::<Result<Vec<_>, BackendError>>()?;
    Ok(Some((Account { id, name: name.into(), bot, standings }, hash)))
}

/// Whether `text` can be stored at all: Postgres's text holds no NUL, so
/// a name or an id with one names nothing (rather than failing the query).
fn storable(text: &str) -> bool {
    !text.contains('\0')
}

impl Reader for PgReader {
    fn account(&mut self, name: &str) -> Fetched<(Account, TokenHash)> {
        if !storable(name) {
            return Ok(None);
        }
        self.link.call_again(async |c| account(c, name).await)
    }

    fn game(&mut self, id: &str) -> Fetched<api::GameRecord> {
        if !storable(id) {
            return Ok(None);
        }
        self.link.call_again(async |c| {
            let s = c.statement(GAME).await?;
            c.client.query_opt(&s, &[&id]).await?.as_ref().map(row::record).transpose()
        })
    }

    fn player(&mut self, name: &str) -> Fetched<PlayerProfile> {
        if !storable(name) {
            return Ok(None);
        }
        self.link.call_again(async |c| player(c, name).await)
    }

    fn player_games(&mut self, name: &str, limit: usize, before: Option<&str>) -> Fetched<PlayerGames> {
        if !storable(name) {
            return Ok(None);
        }
        self.link.call_again(async |c| player_games(c, name, limit, before).await)
    }

    fn leaderboard(&mut self, rules: Rules, limit: usize) -> Result<Leaderboard, BackendError> {
        self.link.call_again(async |c| leaderboard(c, rules, limit).await)
    }

    fn tournament(&mut self, id: &str) -> Fetched<TournamentData> {
        if !storable(id) {
            return Ok(None);
        }
        self.link.call_again(async |c| super::tournaments::read(c, id).await)
    }

    fn tournaments(&mut self, now_ms: i64) -> Result<Vec<TournamentSummary>, BackendError> {
        self.link.call_again(async |c| super::tournaments::list(c, now_ms).await)
    }
}
