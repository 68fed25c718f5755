//! Arena tournaments in Postgres: their rows and entrants written in a
//! commit's pipeline, and read back with the records that name them.

use tictactoe_protocol::tournament::TournamentSummary;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use crate::core::account::name_key;
use crate::store::backend::BackendError;
use crate::store::postgres::Conn;
use crate::store::postgres::pipeline::Step;
use crate::store::row::{self, scored_columns, tournament_columns};
use crate::store::tournaments::{LISTED, LISTED_AFTER_MS, TournamentData, TournamentWrite};

/// A tournament created again (by id) is left as it was.
const CREATE: &str =
    "INSERT INTO tournaments (id, name, created_by, created_by_account, size, win, initial_ms,
        increment_ms, duration_ms, starts_at, created_at)
    VALUES ($1, $2, $3, (SELECT id FROM accounts WHERE name_key = $4), $5, $6, $7, $8, $9, $10, $11)
    ON CONFLICT (id) DO NOTHING";

/// A join of an entrant who paused clears its pause and keeps when it first joined.
const JOIN: &str = "INSERT INTO tournament_players (tournament, account, name, paused, joined_at)
    VALUES ($1, $2, $3, false, $4)
    ON CONFLICT (tournament, account) DO UPDATE SET paused = false";

const PAUSE: &str = "UPDATE tournament_players SET paused = true WHERE tournament = $1 AND account = $2";

const TOURNAMENT: &str = concat!("SELECT ", tournament_columns!(), " FROM tournaments t WHERE t.id = $1");

const ENTRANTS: &str = "SELECT account, name, paused FROM tournament_players WHERE tournament = $1
    ORDER BY joined_at, account";

const GAMES: &str = concat!("SELECT ", scored_columns!(), " FROM games g WHERE g.tournament = $1");

const LIST: &str = concat!(
    "SELECT ",
    tournament_columns!(),
    " FROM tournaments t WHERE t.starts_at + t.duration_ms > $1
      ORDER BY t.starts_at DESC, t.id DESC LIMIT $2"
);

/// The statements a commit's tournament changes run, prepared before its
/// transaction opens (once it is open, nothing may fail before its end is sent).
pub(super) struct TournamentStatements {
    create: Statement,
    join: Statement,
    pause: Statement,
}

impl TournamentStatements {
    pub(super) async fn prepare(c: &mut Conn) -> Result<TournamentStatements, tokio_postgres::Error> {
        Ok(TournamentStatements {
            create: c.statement(CREATE).await?,
            join: c.statement(JOIN).await?,
            pause: c.statement(PAUSE).await?,
        })
    }
}

/// One change's values, as its statement takes them.
enum Values<'a> {
    Create { id: &'a str, name: &'a str, by: &'a str, key: String, numbers: [i32; 2], times: [i64; 4] },
    Join { tournament: &'a str, account: i64, name: &'a str },
    Pause { tournament: &'a str, account: i64 },
}

/// A commit's changes to tournaments, in order, and when they are made (Unix ms).
pub(super) struct TournamentRows<'a> {
    rows: Vec<Values<'a>>,
    now: i64,
}

impl<'a> TournamentRows<'a> {
    /// `writes`' values, made at `now` (Unix ms).
    pub(super) fn of(writes: &'a [TournamentWrite], now: i64) -> TournamentRows<'a> {
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let rows = writes
            .iter()
            .map(|w| match w {
                TournamentWrite::Create(t) => Values::Create {
                    id: &t.id,
                    name: &t.terms.name,
                    by: &t.created_by,
                    key: name_key(&t.created_by),
                    numbers: [t.terms.size, t.terms.win].map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
                    times: [
                        int(t.terms.clock.initial_ms),
                        int(t.terms.clock.increment_ms),
                        int(t.terms.duration_ms),
                        t.starts_at,
                    ],
                },
                TournamentWrite::Join { tournament, account, name } => {
                    Values::Join { tournament, account: *account, name }
                }
                TournamentWrite::Pause { tournament, account } => {
                    Values::Pause { tournament, account: *account }
                }
            })
            .collect();
        TournamentRows { rows, now }
    }

    /// Adds their statements to a commit's pipeline, in order.
    pub(super) fn steps(
        &'a self,
        client: &'a Client,
        st: &'a TournamentStatements,
        steps: &mut Vec<Step<'a>>,
    ) {
        let now = &self.now;
        for row in &self.rows {
            steps.push(Box::pin(async move {
                match row {
                    Values::Create { id, name, by, key, numbers, times } => {
                        let params: [&(dyn ToSql + Sync); 11] = [
                            id,
                            name,
                            by,
                            key,
                            &numbers[0],
                            &numbers[1],
                            &times[0],
                            &times[1],
                            &times[2],
                            &times[3],
                            now,
                        ];
                        client.execute(&st.create, &params).await
                    }
                    Values::Join { tournament, account, name } => {
                        client.execute(&st.join, &[tournament, account, name, now]).await
                    }
                    Values::Pause { tournament, account } => {
                        client.execute(&st.pause, &[tournament, account]).await
                    }
                }
                .map(|_| None)
            }));
        }
    }
}

/// Tournament `id` with its entrants and recorded games, if there is one.
pub(super) async fn read(c: &mut Conn, id: &str) -> Result<Option<TournamentData>, BackendError> {
    let s = c.statement(TOURNAMENT).await?;
    let Some(r) = c.client.query_opt(&s, &[&id]).await? else { return Ok(None) };
    let (row, _) = row::tournament_row(&r)?;
    let s = c.statement(ENTRANTS).await?;
    let entrants = c.client.query(&s, &[&id]).await?.iter().map(row::entrant).collect::<Result<_, _>>()?;
    let s = c.statement(GAMES).await?;
    let games = c.client.query(&s, &[&id]).await?.iter().map(row::scored_game).collect::<Result<_, _>>()?;
    Ok(Some(TournamentData { row, entrants, games }))
}

/// The tournaments listed at `now_ms`: not finished, or finished within a
/// day; newest start first.
pub(super) async fn list(c: &mut Conn, now_ms: i64) -> Result<Vec<TournamentSummary>, BackendError> {
    let s = c.statement(LIST).await?;
    let limit = i64::try_from(LISTED).unwrap_or(i64::MAX);
    c.client
        .query(&s, &[&now_ms.saturating_sub(LISTED_AFTER_MS), &limit])
        .await?
        .iter()
        .map(|r| {
            let (row, players) = row::tournament_row(r)?;
            Ok(row.summary(players, now_ms))
        })
        .collect()
}
