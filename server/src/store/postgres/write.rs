//! Writing to Postgres: one commit's records, rating updates, accounts and
//! changes to games in progress in one transaction, pipelined; spilled
//! records put back.

use std::borrow::Cow;

use tokio_postgres::Error;

use crate::core::account::name_key;
use crate::core::text::look_alike_key;
use crate::store::backend::{BackendError, Commit, Committed, NewAccount};
use crate::store::postgres::Conn;
use crate::store::postgres::opening;
use crate::store::postgres::pipeline::{Step, pipelined};
use crate::store::postgres::records::{INSERT_GAMES, RecordColumns, StandingColumns, UPSERT_RATINGS};
use crate::store::postgres::rounds::{RoundStatements, rounds};
use crate::store::postgres::tournaments::{TournamentRows, TournamentStatements};
use crate::store::rating;
use crate::store::record::{GameRecord, unix_ms};
use crate::store::{Account, StoreError};

const REGISTER: &str = "INSERT INTO accounts (name, name_key, name_skeleton, bot, token_hash, created_at)
    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id";

/// An account to register: its row's values.
struct Registration<'a> {
    account: &'a NewAccount,
    key: String,
    skeleton: String,
    now: i64,
}

/// The statements a commit may run, prepared before its transaction opens:
/// once it is open, nothing may fail before its end is sent.
struct Prepared {
    games: tokio_postgres::Statement,
    ratings: tokio_postgres::Statement,
    register: tokio_postgres::Statement,
    rounds: RoundStatements,
    tournaments: TournamentStatements,
}

/// Writes `batch` in one transaction, pipelined (a round trip, two when it
/// writes records), tournaments' changes after the new accounts (a join
/// may name one): each new account's row or `NameTaken`, in order, and
/// the standings it rated again. `owner` and `epoch` hold the games it starts.
pub(super) async fn commit(
    c: &mut Conn,
    batch: &Commit<'_>,
    owner: &str,
    epoch: i64,
) -> Result<Committed, BackendError> {
    let st = Prepared {
        games: c.statement(INSERT_GAMES).await?,
        ratings: c.statement(UPSERT_RATINGS).await?,
        register: c.statement(REGISTER).await?,
        rounds: RoundStatements::prepare(c).await?,
        tournaments: TournamentStatements::prepare(c).await?,
    };
    // Records first are checked, and lock the standings they move (the
    // first round trip): the database serialises rating updates of an
    // account, whichever writer (instance) rates it, and rates a game once.
    let began = !batch.records.is_empty();
    let (opening, kept) = match began {
        true => {
            let first = rating::rated_from(batch.records);
            let opening = opening::open(c, batch.records, &first, owner, epoch).await?;
            let left_out =
                |r: &GameRecord| opening.written.contains(&r.id) || opening.refused.contains(&r.id);
            let kept: Cow<'_, [GameRecord]> = match opening.written.is_empty() && opening.refused.is_empty() {
                true => Cow::Borrowed(batch.records),
                false => Cow::Owned(batch.records.iter().filter(|r| !left_out(r)).cloned().collect()),
            };
            (Some(opening), kept)
        }
        false => (None, Cow::Borrowed(batch.records)),
    };
    let rerated = opening.as_ref().and_then(|o| rating::rated_again(&kept, &o.stored));
    let records = rerated.as_deref().unwrap_or(&kept);
    let changes = batch.live();
    let rounds = rounds(&changes);
    let games = RecordColumns::of(records);
    let ratings = StandingColumns::of(records);
    let now = unix_ms(std::time::SystemTime::now());
    let tournaments = TournamentRows::of(batch.tournaments, now);
    let registrations: Vec<Registration<'_>> = batch
        .accounts
        .iter()
        .map(|a| Registration { account: a, key: name_key(&a.name), skeleton: look_alike_key(&a.name), now })
        .collect();
    let client = &c.client;
    let st = &st;
    let mut steps: Vec<Step<'_>> = Vec::new();
    if !began {
        steps.push(Box::pin(async { client.batch_execute("BEGIN").await.map(|()| None) }));
    }
    let games = &games;
    if !games.id.is_empty() {
        steps.push(Box::pin(
            async move { client.execute(&st.games, &games.params(&owner)).await.map(|_| None) },
        ));
    }
    let ratings = &ratings;
    if !ratings.is_empty() {
        steps.push(Box::pin(
            async move { client.execute(&st.ratings, &ratings.params()).await.map(|_| None) },
        ));
    }
    let first_registration = steps.len();
    for reg in &registrations {
        steps.push(Box::pin(async move {
            let a = reg.account;
            let token: &[u8] = &a.token;
            let row = client
                .query_opt(&st.register, &[&a.name, &reg.key, &reg.skeleton, &a.bot, &token, &reg.now])
                .await?;
            row.map(|r| r.try_get::<_, i64>("id")).transpose()
        }));
    }
    tournaments.steps(client, &st.tournaments, &mut steps);
    for round in &rounds {
        round.steps(client, &st.rounds, owner, epoch, &mut steps);
    }
    let answers = pipelined(client, steps).await?;
    let accounts = registrations
        .iter()
        .zip(&answers[first_registration..])
        .map(|(reg, id)| match id {
            Some(id) => Ok(Account {
                id: *id,
                name: reg.account.name.as_str().into(),
                bot: reg.account.bot,
                standings: Vec::new(),
            }),
            None => Err(StoreError::NameTaken),
        })
        .collect();
    // Rated again, the standings they leave are news to the writer's book,
    // and the records' ratings to their rooms.
    let ratings = rerated.iter().flatten().map(|r| (r.id.clone(), r.ratings)).collect();
    let refused = opening.map(|o| o.refused).unwrap_or_default();
    let standings = match rerated {
        Some(records) => {
            rating::latest(&records).into_iter().map(|((account, rules), s)| (account, rules, s)).collect()
        }
        None => Vec::new(),
    };
    Ok(Committed { accounts, standings, ratings, refused })
}

/// Puts spilled records back, in one transaction, with the standings they
/// leave; returns how many were new. Their games ended (the players saw
/// their `game_over`): what is still saved of them as games in progress is
/// taken over (the session's hold, `owner` with `epoch`) and deleted first,
/// wherever it was held, so that no instance plays them on.
pub(super) async fn import(
    c: &mut Conn,
    records: &[GameRecord],
    owner: &str,
    epoch: i64,
) -> Result<usize, Error> {
    let insert = c.statement(INSERT_GAMES).await?;
    let upsert = c.statement(UPSERT_RATINGS).await?;
    let games = RecordColumns::of(records);
    let ratings = StandingColumns::of(records);
    let tx = c.client.transaction().await?;
    tx.batch_execute("SET LOCAL ttt.taking = 'on'").await?;
    let rooms: Vec<String> = tx
        .query(
            "UPDATE live_games SET owner = $1, epoch = $2 WHERE game_id = ANY($3) RETURNING room",
            &[&owner, &epoch, &games.id],
        )
        .await?
        .iter()
        .map(|row| row.try_get("room"))
        .collect::<Result<_, _>>()?;
    if !rooms.is_empty() {
        tx.execute("DELETE FROM live_moves WHERE room = ANY($1)", &[&rooms]).await?;
        tx.execute("DELETE FROM live_games WHERE room = ANY($1)", &[&rooms]).await?;
    }
    let new = tx.execute(&insert, &games.params(&owner)).await?;
    if !ratings.is_empty() {
        tx.execute(&upsert, &ratings.params()).await?;
    }
    tx.commit().await?;
    Ok(usize::try_from(new).unwrap_or(0))
}
