//! Reading Postgres for the API and for sign-in, on a connection of the
//! reader's own: it reads the last commit while the writer goes on.

use std::collections::BTreeMap;

use skillratings::glicko2::Glicko2Rating;
use tictactoe_protocol::api::{
    self, GamePlayer, Leaderboard, LeaderboardEntry, PlayerGames, PlayerProfile, PoolStanding, RatingMove,
    Results,
};
use tokio_postgres::Row;

use crate::core::account::{TokenHash, name_key};
use crate::core::text::look_alike_key;
use crate::ratings::{Standing, pool_key};
use crate::store::Account;
use crate::store::answer::{self, rfc3339, rounded};
use crate::store::backend::{BackendError, Reader};
use crate::store::postgres::{Conn, Link};
use tictactoe_protocol::Rules;

/// A reader's connection to the database.
pub struct PgReader {
    link: Link,
}

impl PgReader {
    pub(super) fn new(link: Link) -> PgReader {
        PgReader { link }
    }
}

/// A game by id; [`game`] reads its columns.
const GAME: &str = "SELECT g.id, g.room, g.size, g.win, g.x_name, g.x_account, g.x_bot, g.o_name, g.o_account, \
     g.o_bot, g.moves, g.winner, g.reason, g.line, g.rated, g.x_before, g.x_after, g.o_before, g.o_after, \
     g.started_at, g.ended_at FROM games g WHERE g.id = $1";

/// Two index range scans merged: the player's games as X and as O.
const PLAYER_GAMES: &str = "SELECT g.id, g.room, g.size, g.win, g.x_name, g.x_account, g.x_bot, g.o_name, \
     g.o_account, g.o_bot, g.moves, g.winner, g.reason, g.line, g.rated, g.x_before, g.x_after, g.o_before, \
     g.o_after, g.started_at, g.ended_at FROM games g WHERE g.seq IN (
        (SELECT seq FROM games WHERE x_account = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3)
        UNION ALL
        (SELECT seq FROM games WHERE o_account = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3)
     ) ORDER BY g.seq DESC LIMIT $3";

/// A stored value that cannot be what its column holds: the row is broken.
fn broken(what: &str) -> BackendError {
    BackendError(format!("a stored game is broken: {what}"))
}

/// One game record from a row of [`GAME`]'s columns.
fn game(r: &Row) -> Result<api::GameRecord, BackendError> {
    let rated: bool = r.try_get(14)?;
    let rating =
        |i: usize| -> Result<Option<i64>, BackendError> { Ok(r.try_get::<_, Option<f64>>(i)?.map(rounded)) };
    let player = |name: usize, before: usize| -> Result<GamePlayer, BackendError> {
        Ok(GamePlayer {
            account: r.try_get::<_, Option<i64>>(name + 1)?.is_some(),
            bot: r.try_get(name + 2)?,
            name: r.try_get(name)?,
            rating: if rated { rating(before)? } else { None },
        })
    };
    let change = |before: usize| -> Result<Option<RatingMove>, BackendError> {
        Ok(match (rating(before)?, rating(before + 1)?) {
            (Some(before), Some(after)) => Some(RatingMove { after, before }),
            _ => None,
        })
    };
    let ratings = match (rated, change(15)?, change(17)?) {
        (true, Some(x), Some(o)) => Some([x, o]),
        _ => None,
    };
    let moves: String = r.try_get(10)?;
    let line: Option<String> = r.try_get(13)?;
    let reason: String = r.try_get(12)?;
    let small = |i: usize| -> Result<usize, BackendError> {
        usize::try_from(r.try_get::<_, i32>(i)?).map_err(|_| broken("a negative size"))
    };
    Ok(api::GameRecord {
        ended_at: rfc3339(r.try_get(20)?),
        id: r.try_get(0)?,
        line: match line {
            None => None,
            Some(text) => Some(serde_json::from_str(&text).map_err(|_| broken("not a line"))?),
        },
        moves: serde_json::from_str(&moves).map_err(|_| broken("not a list of moves"))?,
        players: [player(4, 15)?, player(7, 17)?],
        rated,
        ratings,
        reason: answer::parse_reason(&reason).ok_or_else(|| broken("not an end reason"))?,
        room: r.try_get(1)?,
        size: small(2)?,
        started_at: rfc3339(r.try_get(19)?),
        win: small(3)?,
        winner: u8::try_from(r.try_get::<_, i32>(11)?).map_err(|_| broken("not a winner"))?,
    })
}

/// A count from SQL, which is never negative.
fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The id of the account called `name` (ignoring case).
async fn account_id(c: &mut Conn, name: &str) -> Result<Option<i64>, BackendError> {
    let s = c.statement("SELECT id FROM accounts WHERE name_key = $1").await?;
    Ok(c.client.query_opt(&s, &[&name_key(name)]).await?.map(|r| r.try_get(0)).transpose()?)
}

fn pool(r: &Row, size: usize) -> Result<Rules, BackendError> {
    let side = |i: usize| -> Result<usize, BackendError> {
        usize::try_from(r.try_get::<_, i32>(i)?).map_err(|_| broken("a negative size"))
    };
    Ok(Rules { size: side(size)?, win: side(size + 1)? })
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
                Some(r) => r.try_get::<_, i64>(0)?,
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
        .map(game)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(PlayerGames { games }))
}

async fn leaderboard(c: &mut Conn, rules: Rules, limit: usize) -> Result<Leaderboard, BackendError> {
    let s = c
        .statement(
            "SELECT a.name, a.bot, r.rating, r.rd, r.games FROM ratings r JOIN accounts a ON a.id = r.account
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
        .map(|r| {
            Ok(LeaderboardEntry {
                bot: r.try_get(1)?,
                games: count(r.try_get(4)?),
                name: r.try_get(0)?,
                rating: rounded(r.try_get(2)?),
                rd: rounded(r.try_get(3)?),
            })
        })
        .collect::<Result<Vec<_>, BackendError>>()?;
    Ok(Leaderboard { players, size: rules.size, win: rules.win })
}

async fn player(c: &mut Conn, name: &str) -> Result<Option<PlayerProfile>, BackendError> {
    let s = c.statement("SELECT id, name, bot, created_at FROM accounts WHERE name_key = $1").await?;
    let Some(row) = c.client.query_opt(&s, &[&name_key(name)]).await? else { return Ok(None) };
    let (id, name, bot, created_at): (i64, String, bool, i64) =
        (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?);
    let mut ratings = BTreeMap::new();
    let s = c.statement("SELECT size, win, rating, rd, games FROM ratings WHERE account = $1").await?;
    for r in c.client.query(&s, &[&id]).await? {
        let standing = PoolStanding {
            games: count(r.try_get(4)?),
            rating: rounded(r.try_get(2)?),
            rd: rounded(r.try_get(3)?),
        };
        ratings.insert(pool_key(pool(&r, 0)?), standing);
    }
    let s = c
        .statement(
            "SELECT
                count(*) FILTER (WHERE (x_account = $1 AND winner = 1) OR (o_account = $1 AND winner = 2)),
                count(*) FILTER (WHERE reason = 'draw'),
                count(*) FILTER (WHERE (x_account = $1 AND winner = 2) OR (o_account = $1 AND winner = 1)),
                count(*) FILTER (WHERE reason = 'aborted'),
                count(*) FILTER (WHERE reason = 'shutdown')
             FROM games WHERE x_account = $1 OR o_account = $1",
        )
        .await?;
    let r = c.client.query_one(&s, &[&id]).await?;
    let results = Results {
        wins: count(r.try_get(0)?),
        draws: count(r.try_get(1)?),
        losses: count(r.try_get(2)?),
        aborted: count(r.try_get(3)?),
        interrupted: count(r.try_get(4)?),
    };
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
    let Some(row) = c.client.query_opt(&s, &[&name_key(name), &look_alike_key(name)]).await? else {
        return Ok(None);
    };
    let (id, name, bot): (i64, String, bool) = (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
    let Ok(hash) = TokenHash::try_from(row.try_get::<_, &[u8]>(3)?) else { return Ok(None) };
    let s = c
        .statement("SELECT size, win, rating, rd, volatility, games FROM ratings WHERE account = $1")
        .await?;
    let standings = c
        .client
        .query(&s, &[&id])
        .await?
        .iter()
        .map(|r| {
            let rating =
                Glicko2Rating { rating: r.try_get(2)?, deviation: r.try_get(3)?, volatility: r.try_get(4)? };
            let games = u32::try_from(r.try_get::<_, i64>(5)?).unwrap_or(u32::MAX);
            Ok((pool(r, 0)?, Standing { rating, games }))
        })
        .collect::<Result<Vec<_>, BackendError>>()?;
    Ok(Some((Account { id, name: name.into(), bot, standings }, hash)))
}

/// Whether `text` can be stored at all: Postgres's text holds no NUL, so
/// a name or an id with one names nothing (rather than failing the query).
fn storable(text: &str) -> bool {
    !text.contains('\0')
}

impl Reader for PgReader {
    fn account(&mut self, name: &str) -> Result<Option<(Account, TokenHash)>, BackendError> {
        if !storable(name) {
            return Ok(None);
        }
        self.link.call_again(async |c| account(c, name).await)
    }

    fn game(&mut self, id: &str) -> Result<Option<api::GameRecord>, BackendError> {
        if !storable(id) {
            return Ok(None);
        }
        self.link.call_again(async |c| {
            let s = c.statement(GAME).await?;
            c.client.query_opt(&s, &[&id]).await?.as_ref().map(game).transpose()
        })
    }

    fn player(&mut self, name: &str) -> Result<Option<PlayerProfile>, BackendError> {
        if !storable(name) {
            return Ok(None);
        }
        self.link.call_again(async |c| player(c, name).await)
    }

    fn player_games(
        &mut self,
        name: &str,
        limit: usize,
        before: Option<&str>,
    ) -> Result<Option<PlayerGames>, BackendError> {
        if !storable(name) {
            return Ok(None);
        }
        self.link.call_again(async |c| player_games(c, name, limit, before).await)
    }

    fn leaderboard(&mut self, rules: Rules, limit: usize) -> Result<Leaderboard, BackendError> {
        self.link.call_again(async |c| leaderboard(c, rules, limit).await)
    }
}
