//! The first round trip of a commit that writes records: it opens the
//! transaction, checks the records (kept already, or another instance's
//! game) and locks the standings they move, so that the database
//! serialises the rating of an account whichever instance rates it.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use tokio_postgres::types::ToSql;

use crate::ratings::Standing;
use crate::ratings::StandingKey;
use crate::store::backend::BackendError;
use crate::store::postgres::Conn;
use crate::store::record::GameRecord;
use crate::store::row;

/// Of the records a commit writes (`$1`, ids), those kept already (`ours`:
/// by this writer, `$2`, in an attempt whose answer was lost) or whose game
/// another instance holds now (it adopted it while this one was cut off or
/// stalled): a record is written, and its players rated, once per game,
/// by the instance that holds the game.
const CHECK_RECORDS: &str = "SELECT u.id AS id,
        coalesce((SELECT g.holder = $2 FROM games g WHERE g.id = u.id), false) AS ours
    FROM unnest($1::text[]) AS u(id)
    WHERE EXISTS (SELECT 1 FROM games g WHERE g.id = u.id)
       OR EXISTS (SELECT 1 FROM live_games l WHERE l.game_id = u.id AND NOT (l.owner = $2 AND l.epoch <= $3))";

/// The rows of the standings a commit moves, made if missing (games 0, the
/// start's values): then [`LOCK_RATINGS`] has a row to lock for each.
const ENSURE_RATINGS: &str = "INSERT INTO ratings (account, size, win, rating, rd, volatility, games)
    SELECT u.account, u.size, u.win, $4, $5, $6, 0 FROM unnest($1::int8[], $2::int4[], $3::int4[])
        AS u(account, size, win)
    ON CONFLICT DO NOTHING";

/// The standings a commit moves, locked until it ends (in one order: two
/// writers never wait for each other in a circle).
const LOCK_RATINGS: &str = "SELECT account, size, win, rating, rd, volatility, games FROM ratings
    WHERE (account, size, win) IN (SELECT * FROM unnest($1::int8[], $2::int4[], $3::int4[]))
    ORDER BY account, size, win FOR UPDATE";

/// What the commit's first round trip found.
pub(super) struct Opening {
    /// Records kept already by this writer (an attempt whose answer was
    /// lost wrote them): left out, as done.
    pub(super) written: Vec<Arc<str>>,
    /// Records of games another instance holds or recorded: left out, refused.
    pub(super) refused: Vec<Arc<str>>,
    /// The standings the records move, as the database holds them (locked).
    pub(super) stored: FxHashMap<StandingKey, Standing>,
}

/// Opens the commit's transaction, checks its records (see
/// [`CHECK_RECORDS`]) and locks the standings they move (making the rows
/// missing): one round trip.
pub(super) async fn open(
    c: &mut Conn,
    records: &[GameRecord],
    first: &[(StandingKey, Standing)],
    owner: &str,
    epoch: i64,
) -> Result<Opening, BackendError> {
    let ensure = c.statement(ENSURE_RATINGS).await?;
    let lock = c.statement(LOCK_RATINGS).await?;
    let check = c.statement(CHECK_RECORDS).await?;
    let account: Vec<i64> = first.iter().map(|(k, _)| k.0).collect();
    let size: Vec<i32> = first.iter().map(|(k, _)| k.1.size as i32).collect();
    let win: Vec<i32> = first.iter().map(|(k, _)| k.1.win as i32).collect();
    let ids: Vec<&str> = records.iter().map(|r| &*r.id).collect();
    let start = Standing::default();
    let (r, d, v) = (start.rating.rating, start.rating.deviation, start.rating.volatility);
    let client = &c.client;
    let ensure_params: [&(dyn ToSql + Sync); 6] = [&account, &size, &win, &r, &d, &v];
    let lock_params: [&(dyn ToSql + Sync); 3] = [&account, &size, &win];
    let check_params: [&(dyn ToSql + Sync); 3] = [&ids, &owner, &epoch];
    // Pipelined: `join!` sends each in order before awaiting any.
    let (began, ensured, rows, checked) = futures::join!(
        client.batch_execute("BEGIN"),
        client.execute(&ensure, &ensure_params),
        client.query(&lock, &lock_params),
        client.query(&check, &check_params),
    );
    let read = match (began, ensured, rows, checked) {
        (Ok(()), Ok(_), Ok(rows), Ok(checked)) => standings(&rows).and_then(|s| Ok((s, left_out(&checked)?))),
        (Err(e), ..) | (_, Err(e), ..) | (_, _, Err(e), _) | (.., Err(e)) => Err(e.into()),
    };
    match read {
        Ok((stored, (written, refused))) => Ok(Opening { written, refused, stored }),
        Err(e) => {
            // The transaction is open: nothing of it may stay.
            let _ = client.batch_execute("ROLLBACK").await;
            Err(e)
        }
    }
}

/// The rows of [`CHECK_RECORDS`]: the ids kept by this writer, and those refused.
type Checked = (Vec<Arc<str>>, Vec<Arc<str>>);

fn left_out(rows: &[tokio_postgres::Row]) -> Result<Checked, BackendError> {
    let (mut written, mut refused) = (Vec::new(), Vec::new());
    for row in rows {
        let id: &str = row.try_get("id")?;
        match row.try_get::<_, bool>("ours")? {
            true => written.push(id.into()),
            false => refused.push(id.into()),
        }
    }
    Ok((written, refused))
}

/// The standings of rows of [`LOCK_RATINGS`], by key.
fn standings(rows: &[tokio_postgres::Row]) -> Result<FxHashMap<StandingKey, Standing>, BackendError> {
    let mut stored = FxHashMap::default();
    for r in rows {
        stored.insert((r.try_get("account")?, row::pool(r)?), row::standing(r)?);
    }
    Ok(stored)
}
