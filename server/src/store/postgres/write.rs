//! Writing to Postgres: one commit's records, rating updates, accounts and
//! changes to games in progress in one transaction and one round trip;
//! spilled records put back.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use skillratings::glicko2::Glicko2Rating;
use tictactoe_protocol::Player;
use tokio_postgres::Error;
use tokio_postgres::types::ToSql;

use crate::core::account::{AccountId, name_key};
use crate::core::text::look_alike_key;
use crate::ratings::{self, Standing};
use crate::store::answer;
use crate::store::backend::{Commit, Committed, NewAccount};
use crate::store::changes::encode_cells;
use crate::store::live::RoomChange;
use crate::store::postgres::Conn;
use crate::store::record::{GameRecord, unix_ms};
use crate::store::{Account, StoreError};
use tictactoe_protocol::Rules;

/// `holder` is the writer's instance: a record it finds kept when it tries
/// a commit again is its own (written), anyone else's is refused (see
/// [`CHECK_RECORDS`]).
const INSERT_GAMES: &str =
    "INSERT INTO games (id, room, size, win, x_name, x_account, x_bot, o_name, o_account,
        o_bot, moves, winner, reason, line, rated, x_before, x_after, o_before, o_after, started_at, ended_at,
        holder)
    SELECT u.*, $22 FROM unnest($1::text[], $2::text[], $3::int4[], $4::int4[], $5::text[], $6::int8[],
        $7::bool[], $8::text[], $9::int8[], $10::bool[], $11::text[], $12::int4[], $13::text[], $14::text[],
        $15::bool[], $16::float8[], $17::float8[], $18::float8[], $19::float8[], $20::int8[], $21::int8[]) AS u
    ON CONFLICT (id) DO NOTHING";

/// Of the records a commit writes (`$1`, ids), those kept already (`ours`:
/// by this writer, `$2`, in an attempt whose answer was lost) or whose game
/// another instance holds now (it adopted it while this one was cut off or
/// stalled): a record is written, and its players rated, once per game,
/// by the instance that holds the game.
const CHECK_RECORDS: &str = "SELECT u.id, coalesce((SELECT g.holder = $2 FROM games g WHERE g.id = u.id), false)
    FROM unnest($1::text[]) AS u(id)
    WHERE EXISTS (SELECT 1 FROM games g WHERE g.id = u.id)
       OR EXISTS (SELECT 1 FROM live_games l WHERE l.game_id = u.id AND NOT (l.owner = $2 AND l.epoch <= $3))";

/// A standing only moves forward (`games` grows). A commit has locked the
/// rows first ([`LOCK_RATINGS`]); an import has not, and the guard keeps a
/// newer standing from being overwritten by an older game's.
const UPSERT_RATINGS: &str = "INSERT INTO ratings (account, size, win, rating, rd, volatility, games)
    SELECT * FROM unnest($1::int8[], $2::int4[], $3::int4[], $4::float8[], $5::float8[], $6::float8[], $7::int8[])
    ON CONFLICT (account, size, win) DO UPDATE SET
        rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, games = excluded.games
    WHERE excluded.games > ratings.games";

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

const REGISTER: &str = "INSERT INTO accounts (name, name_key, name_skeleton, bot, token_hash, created_at)
    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id";

const DELETE_MOVES: &str = "DELETE FROM live_moves WHERE room = ANY($1::text[])";

const DELETE_GAMES: &str = "DELETE FROM live_games WHERE room = ANY($1::text[])";

const INSERT_LIVE: &str = "INSERT INTO live_games (room, game_id, size, win, turn_timeout_ms, x_name, x_account,
        x_bot, x_token, o_name, o_account, o_bot, o_token, clock_left_ms, started_at, house_level, owner, epoch)
    SELECT u.*, $17, $18 FROM unnest($1::text[], $2::text[], $3::int4[], $4::int4[], $5::int8[], $6::text[],
        $7::int8[], $8::bool[], $9::bytea[], $10::text[], $11::int8[], $12::bool[], $13::bytea[], $14::int8[],
        $15::int8[], $16::text[]) AS u
    ON CONFLICT (room) DO UPDATE SET game_id = excluded.game_id, size = excluded.size, win = excluded.win,
        turn_timeout_ms = excluded.turn_timeout_ms, x_name = excluded.x_name, x_account = excluded.x_account,
        x_bot = excluded.x_bot, x_token = excluded.x_token, o_name = excluded.o_name,
        o_account = excluded.o_account, o_bot = excluded.o_bot, o_token = excluded.o_token,
        clock_left_ms = excluded.clock_left_ms, started_at = excluded.started_at,
        house_level = excluded.house_level";

/// A chunk of moves of a game the database does not hold (its start was
/// lost on a full queue) is left out: it could never be replayed.
const INSERT_MOVES: &str = "INSERT INTO live_moves (room, seq, cells)
    SELECT u.room, u.seq, u.cells FROM unnest($1::text[], $2::int4[], $3::bytea[]) AS u(room, seq, cells)
    WHERE EXISTS (SELECT 1 FROM live_games g WHERE g.room = u.room)
    ON CONFLICT (room, seq) DO UPDATE SET cells = excluded.cells
        WHERE live_moves.cells IS DISTINCT FROM excluded.cells";

const UPDATE_CLOCKS: &str = "UPDATE live_games g SET clock_left_ms = u.left_ms
    FROM unnest($1::text[], $2::int8[]) AS u(room, left_ms) WHERE g.room = u.room";

/// One statement of a pipeline: an account's id for a registration.
type Step<'a> = Pin<Box<dyn Future<Output = Result<Option<AccountId>, Error>> + 'a>>;

/// Runs `steps` (the statements after `BEGIN`) pipelined: each is sent, in
/// order, before any answer is awaited, and the transaction's end after
/// them; then every answer is awaited. The first error, if any.
async fn pipelined(
    client: &tokio_postgres::Client,
    steps: Vec<Step<'_>>,
) -> Result<Vec<Option<AccountId>>, Error> {
    let mut steps: Vec<_> = steps.into_iter().map(futures::future::maybe_done).collect();
    // A statement is sent when its future is first polled.
    for step in &mut steps {
        let _ = futures::poll!(&mut *step);
    }
    // One that failed already was never sent (its values could not be
    // encoded): what was sent after it must not be committed.
    let broken = steps.iter_mut().any(|s| matches!(Pin::new(s).output_mut(), Some(Err(_))));
    let mut end = std::pin::pin!(futures::future::maybe_done(client.batch_execute(if broken {
        "ROLLBACK"
    } else {
        "COMMIT"
    })));
    let _ = futures::poll!(end.as_mut());
    let mut out = Vec::with_capacity(steps.len());
    let mut failed = None;
    for mut step in steps {
        (&mut step).await;
        match Pin::new(&mut step).take_output() {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => {
                // The first error is the cause; those after it are the aborted transaction's.
                failed.get_or_insert(e);
            }
            None => {}
        }
    }
    end.as_mut().await;
    if let Some(Err(e)) = end.as_mut().take_output() {
        failed.get_or_insert(e);
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The columns of finished games, as arrays.
#[derive(Default)]
struct Games<'a> {
    id: Vec<&'a str>,
    room: Vec<&'a str>,
    size: Vec<i32>,
    win: Vec<i32>,
    x_name: Vec<&'a str>,
    x_account: Vec<Option<i64>>,
    x_bot: Vec<bool>,
    o_name: Vec<&'a str>,
    o_account: Vec<Option<i64>>,
    o_bot: Vec<bool>,
    moves: Vec<String>,
    winner: Vec<i32>,
    reason: Vec<String>,
    line: Vec<Option<String>>,
    rated: Vec<bool>,
    ratings: [Vec<Option<f64>>; 4],
    started_at: Vec<i64>,
    ended_at: Vec<i64>,
}

impl<'a> Games<'a> {
    fn of(games: &'a [GameRecord]) -> Games<'a> {
        let mut c = Games::default();
        for g in games {
            let [x, o] = &g.players;
            c.id.push(&g.id);
            c.room.push(&g.room);
            c.size.push(g.rules.size as i32);
            c.win.push(g.rules.win as i32);
            c.x_name.push(&x.name);
            c.x_account.push(x.account);
            c.x_bot.push(x.bot);
            c.o_name.push(&o.name);
            c.o_account.push(o.account);
            c.o_bot.push(o.bot);
            c.moves.push(serde_json::to_string(&g.moves).unwrap_or_default());
            c.winner.push(i32::from(g.winner.map_or(0, |p| p.number())));
            c.reason.push(answer::reason(g.reason));
            c.line.push(g.line.as_ref().map(|l| serde_json::to_string(l).unwrap_or_default()));
            c.rated.push(g.ratings.is_some());
            let r = g.ratings.as_ref();
            c.ratings[0].push(r.map(|r| r[0].before.rating.rating));
            c.ratings[1].push(r.map(|r| r[0].after.rating.rating));
            c.ratings[2].push(r.map(|r| r[1].before.rating.rating));
            c.ratings[3].push(r.map(|r| r[1].after.rating.rating));
            c.started_at.push(g.started_at_ms);
            c.ended_at.push(g.ended_at_ms);
        }
        c
    }

    fn params<'b>(&'b self, holder: &'b &'b str) -> [&'b (dyn ToSql + Sync); 22] {
        [
            &self.id,
            &self.room,
            &self.size,
            &self.win,
            &self.x_name,
            &self.x_account,
            &self.x_bot,
            &self.o_name,
            &self.o_account,
            &self.o_bot,
            &self.moves,
            &self.winner,
            &self.reason,
            &self.line,
            &self.rated,
            &self.ratings[0],
            &self.ratings[1],
            &self.ratings[2],
            &self.ratings[3],
            &self.started_at,
            &self.ended_at,
            holder,
        ]
    }
}

/// The standings the records moved, one per account and pool (the latest),
/// ordered by account and pool: transactions that rate the same accounts
/// lock their rows in one order, so they never deadlock.
#[derive(Default)]
struct Ratings {
    account: Vec<i64>,
    size: Vec<i32>,
    win: Vec<i32>,
    rating: Vec<f64>,
    rd: Vec<f64>,
    volatility: Vec<f64>,
    games: Vec<i64>,
}

impl Ratings {
    fn of(games: &[GameRecord]) -> Ratings {
        let rows = latest(games);
        let mut c = Ratings::default();
        for ((account, size, win), s) in rows {
            c.account.push(account);
            c.size.push(size);
            c.win.push(win);
            c.rating.push(s.rating.rating);
            c.rd.push(s.rating.deviation);
            c.volatility.push(s.rating.volatility);
            c.games.push(i64::from(s.games));
        }
        c
    }
}

/// One round of changes to games in progress: no room twice, so that its
/// statements may each write all rooms at once (deletes, then new games,
/// then moves, then clocks). A room changed twice in one commit (after
/// failed writes) has its second change in the next round.
#[derive(Default)]
struct Round<'a> {
    rooms: rustc_hash::FxHashSet<&'a str>,
    delete_moves: Vec<&'a str>,
    delete_games: Vec<&'a str>,
    starts: Starts<'a>,
    move_rooms: Vec<&'a str>,
    move_seqs: Vec<i32>,
    move_cells: Vec<Vec<u8>>,
    clock_rooms: Vec<&'a str>,
    clock_ms: Vec<Option<i64>>,
}

/// The columns of games that started, as arrays.
#[derive(Default)]
struct Starts<'a> {
    room: Vec<&'a str>,
    game_id: Vec<&'a str>,
    size: Vec<i32>,
    win: Vec<i32>,
    turn_ms: Vec<Option<i64>>,
    x_name: Vec<&'a str>,
    x_account: Vec<Option<i64>>,
    x_bot: Vec<bool>,
    x_token: Vec<&'a [u8]>,
    o_name: Vec<&'a str>,
    o_account: Vec<Option<i64>>,
    o_bot: Vec<bool>,
    o_token: Vec<&'a [u8]>,
    clock_ms: Vec<Option<i64>>,
    started_at: Vec<i64>,
    house: Vec<Option<&'static str>>,
}

fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The changes in rounds (see [`Round`]).
fn rounds<'a>(changes: &[RoomChange<'a>]) -> Vec<Round<'a>> {
    let mut rounds: Vec<Round<'a>> = vec![Round::default()];
    for ch in changes {
        if rounds.last().is_some_and(|r| r.rooms.contains(ch.room)) {
            rounds.push(Round::default());
        }
        let Some(r) = rounds.last_mut() else { continue };
        r.rooms.insert(ch.room);
        if ch.delete_moves {
            r.delete_moves.push(ch.room);
        }
        if ch.delete_game {
            r.delete_games.push(ch.room);
        }
        if let Some(g) = ch.start {
            let s = &mut r.starts;
            let [x, o] = &g.players;
            s.room.push(&g.room);
            s.game_id.push(&g.id);
            s.size.push(g.rules.size as i32);
            s.win.push(g.rules.win as i32);
            s.turn_ms.push(g.turn_timeout.map(millis));
            s.x_name.push(&x.name);
            s.x_account.push(x.account);
            s.x_bot.push(x.bot);
            s.x_token.push(&g.tokens[0]);
            s.o_name.push(&o.name);
            s.o_account.push(o.account);
            s.o_bot.push(o.bot);
            s.o_token.push(&g.tokens[1]);
            s.clock_ms.push(g.clock_left.map(millis));
            s.started_at.push(g.started_at_ms);
            s.house.push(g.house.map(|h| h.name()));
        }
        if !ch.moves.is_empty() {
            r.move_rooms.push(ch.room);
            r.move_seqs.push(i32::try_from(ch.first).unwrap_or(i32::MAX));
            r.move_cells.push(encode_cells(ch.moves));
        }
        if let Some(left) = ch.clock {
            r.clock_rooms.push(ch.room);
            r.clock_ms.push(left.map(millis));
        }
    }
    rounds
}

/// A standing's key: account, size, win.
type Key = (i64, i32, i32);

/// Each standing a rated record moves, in the records' order: its key,
/// and the standing before and after the game.
fn moved(records: &[GameRecord]) -> impl Iterator<Item = (Key, ratings::Rated)> + '_ {
    records.iter().flat_map(|g| {
        let rated = g.ratings.iter().flatten().copied();
        let key = |who: &crate::core::account::Identity| {
            who.account.map(|a| (a, g.rules.size as i32, g.rules.win as i32))
        };
        g.players.iter().zip(rated).filter_map(move |(who, r)| Some((key(who)?, r)))
    })
}

/// The standings `records` move, each with the one its first game here was
/// rated from (what the database must still hold for the ratings to stand).
fn rated_from(records: &[GameRecord]) -> Vec<(Key, Standing)> {
    let mut first: FxHashMap<Key, Standing> = FxHashMap::default();
    for (key, r) in moved(records) {
        first.entry(key).or_insert(r.before);
    }
    let mut keys: Vec<_> = first.into_iter().collect();
    keys.sort_by_key(|(k, _)| *k);
    keys
}

/// The standings `records` leave, one per account and pool (the latest),
/// ordered by account and pool.
fn latest(records: &[GameRecord]) -> Vec<(Key, Standing)> {
    let mut last: FxHashMap<Key, Standing> = FxHashMap::default();
    for (key, r) in moved(records) {
        let kept = last.entry(key).or_insert(r.after);
        if r.after.games > kept.games {
            *kept = r.after;
        }
    }
    let mut keys: Vec<_> = last.into_iter().collect();
    keys.sort_by_key(|(k, _)| *k);
    keys
}

/// `records` rated again, in order, from `stored` (the database's standings,
/// locked): another writer moved some since this one's book read them.
fn rerate(records: &[GameRecord], mut stored: FxHashMap<Key, Standing>) -> Vec<GameRecord> {
    let mut out = records.to_vec();
    for g in &mut out {
        let (Some(_), [Some(x), Some(o)]) = (&g.ratings, [g.players[0].account, g.players[1].account]) else {
            continue;
        };
        let keys = [x, o].map(|a| (a, g.rules.size as i32, g.rules.win as i32));
        let before = keys.map(|k| stored.get(&k).copied().unwrap_or_default());
        let rated = ratings::rate(before, g.winner.map(|w| usize::from(w != Player::X)));
        for (k, r) in keys.iter().zip(&rated) {
            stored.insert(*k, r.after);
        }
        g.ratings = Some(rated);
    }
    out
}

/// What the commit's first round trip found.
struct Opening {
    /// Records left out: kept already by this writer (done), or refused.
    written: Vec<Arc<str>>,
    refused: Vec<Arc<str>>,
    /// The standings the records move, as the database holds them (locked).
    stored: FxHashMap<Key, Standing>,
}

/// Opens the commit's transaction, checks its records (see
/// [`CHECK_RECORDS`]) and locks the standings they move (making the rows
/// missing): one round trip.
async fn open(
    c: &mut Conn,
    records: &[GameRecord],
    first: &[(Key, Standing)],
    owner: &str,
    epoch: i64,
) -> Result<Opening, Error> {
    let ensure = c.statement(ENSURE_RATINGS).await?;
    let lock = c.statement(LOCK_RATINGS).await?;
    let check = c.statement(CHECK_RECORDS).await?;
    let account: Vec<i64> = first.iter().map(|(k, _)| k.0).collect();
    let size: Vec<i32> = first.iter().map(|(k, _)| k.1).collect();
    let win: Vec<i32> = first.iter().map(|(k, _)| k.2).collect();
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
        (Ok(()), Ok(_), Ok(rows), Ok(checked)) => standings(&rows).and_then(|s| Ok((s, kept(&checked)?))),
        (Err(e), ..) | (_, Err(e), ..) | (_, _, Err(e), _) | (.., Err(e)) => Err(e),
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
type Kept = (Vec<Arc<str>>, Vec<Arc<str>>);

fn kept(rows: &[tokio_postgres::Row]) -> Result<Kept, Error> {
    let (mut written, mut refused) = (Vec::new(), Vec::new());
    for row in rows {
        let id: &str = row.try_get(0)?;
        match row.try_get::<_, bool>(1)? {
            true => written.push(id.into()),
            false => refused.push(id.into()),
        }
    }
    Ok((written, refused))
}

/// The standings of rows of [`LOCK_RATINGS`], by key.
fn standings(rows: &[tokio_postgres::Row]) -> Result<FxHashMap<Key, Standing>, Error> {
    let mut stored = FxHashMap::default();
    for row in rows {
        let key: Key = (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        let rating = Glicko2Rating {
            rating: row.try_get(3)?,
            deviation: row.try_get(4)?,
            volatility: row.try_get(5)?,
        };
        let games = u32::try_from(row.try_get::<_, i64>(6)?).unwrap_or(u32::MAX);
        stored.insert(key, Standing { rating, games });
    }
    Ok(stored)
}

/// An account to register: its row's values.
struct Registration<'a> {
    account: &'a NewAccount,
    key: String,
    skeleton: String,
    now: i64,
}

/// Writes `batch` in one transaction, pipelined (a round trip, two when it
/// rates games): each new account's row or `NameTaken`, in order, and the
/// standings it rated again. `owner` and `epoch` hold the games it starts.
pub(super) async fn commit(
    c: &mut Conn,
    batch: &Commit<'_>,
    owner: &str,
    epoch: i64,
) -> Result<Committed, Error> {
    // Prepared first: once the transaction is open, nothing may fail
    // before its end is sent.
    let st = Prepared {
        games: c.statement(INSERT_GAMES).await?,
        ratings: c.statement(UPSERT_RATINGS).await?,
        register: c.statement(REGISTER).await?,
        delete_moves: c.statement(DELETE_MOVES).await?,
        delete_games: c.statement(DELETE_GAMES).await?,
        live: c.statement(INSERT_LIVE).await?,
        moves: c.statement(INSERT_MOVES).await?,
        clocks: c.statement(UPDATE_CLOCKS).await?,
    };
    // Records first are checked, and lock the standings they move (a
    // second round trip): the database serialises rating updates of an
    // account, whichever writer (instance) rates it, and rates a game once.
    let began = !batch.records.is_empty();
    let (opening, kept) = match began {
        true => {
            let first = rated_from(batch.records);
            let opening = open(c, batch.records, &first, owner, epoch).await?;
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
    let rerated = opening.as_ref().and_then(|o| rated_again(&kept, &o.stored));
    let records = rerated.as_deref().unwrap_or(&kept);
    let changes = batch.live();
    let rounds = rounds(&changes);
    let games = Games::of(records);
    let ratings = Ratings::of(records);
    let now = unix_ms(std::time::SystemTime::now());
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
    if !ratings.account.is_empty() {
        steps.push(Box::pin(async move {
            let r = ratings;
            let params: [&(dyn ToSql + Sync); 7] =
                [&r.account, &r.size, &r.win, &r.rating, &r.rd, &r.volatility, &r.games];
            client.execute(&st.ratings, &params).await.map(|_| None)
        }));
    }
    let first_registration = steps.len();
    for reg in &registrations {
        steps.push(Box::pin(async move {
            let a = reg.account;
            let token: &[u8] = &a.token;
            let row = client
                .query_opt(&st.register, &[&a.name, &reg.key, &reg.skeleton, &a.bot, &token, &reg.now])
                .await?;
            Ok(row.map(|r| r.get::<_, i64>(0)))
        }));
    }
    for round in &rounds {
        if !round.delete_moves.is_empty() {
            steps.push(Box::pin(async move {
                client.execute(&st.delete_moves, &[&round.delete_moves]).await.map(|_| None)
            }));
        }
        if !round.delete_games.is_empty() {
            steps.push(Box::pin(async move {
                client.execute(&st.delete_games, &[&round.delete_games]).await.map(|_| None)
            }));
        }
        if !round.starts.room.is_empty() {
            steps.push(Box::pin(async move {
                let s = &round.starts;
                let params: [&(dyn ToSql + Sync); 18] = [
                    &s.room,
                    &s.game_id,
                    &s.size,
                    &s.win,
                    &s.turn_ms,
                    &s.x_name,
                    &s.x_account,
                    &s.x_bot,
                    &s.x_token,
                    &s.o_name,
                    &s.o_account,
                    &s.o_bot,
                    &s.o_token,
                    &s.clock_ms,
                    &s.started_at,
                    &s.house,
                    &owner,
                    &epoch,
                ];
                client.execute(&st.live, &params).await.map(|_| None)
            }));
        }
        if !round.move_rooms.is_empty() {
            steps.push(Box::pin(async move {
                let params: [&(dyn ToSql + Sync); 3] =
                    [&round.move_rooms, &round.move_seqs, &round.move_cells];
                client.execute(&st.moves, &params).await.map(|_| None)
            }));
        }
        if !round.clock_rooms.is_empty() {
            steps.push(Box::pin(async move {
                client.execute(&st.clocks, &[&round.clock_rooms, &round.clock_ms]).await.map(|_| None)
            }));
        }
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
        Some(records) => latest(&records)
            .into_iter()
            .filter_map(|((account, size, win), s)| {
                let rules = Rules { size: usize::try_from(size).ok()?, win: usize::try_from(win).ok()? };
                Some((account, rules, s))
            })
            .collect(),
        None => Vec::new(),
    };
    Ok(Committed { accounts, standings, ratings, refused })
}

/// `records` rated again from `stored` (the database's standings, locked)
/// when another writer moved any of them since this one's book read them;
/// `None` when the database holds what the writer rated from.
fn rated_again(records: &[GameRecord], stored: &FxHashMap<Key, Standing>) -> Option<Vec<GameRecord>> {
    let first = rated_from(records);
    if first.iter().all(|(k, from)| stored.get(k).is_some_and(|s| s.games == from.games)) {
        return None;
    }
    tracing::warn!(
        "standings moved by another writer since this one read them: the batch's games are rated again"
    );
    Some(rerate(records, stored.clone()))
}

/// The statements a commit may run.
struct Prepared {
    games: tokio_postgres::Statement,
    ratings: tokio_postgres::Statement,
    register: tokio_postgres::Statement,
    delete_moves: tokio_postgres::Statement,
    delete_games: tokio_postgres::Statement,
    live: tokio_postgres::Statement,
    moves: tokio_postgres::Statement,
    clocks: tokio_postgres::Statement,
}

/// Puts spilled records into the database in one transaction, with the
/// ratings they moved; returns how many were new.
/// Puts spilled records back, in one transaction. Their games ended (the
/// players saw their `game_over`): what is still saved of them as games in
/// progress is taken over (the session's hold, `owner` with `epoch`) and
/// deleted first, wherever it was held, so that no instance plays them on.
pub(super) async fn import(
    c: &mut Conn,
    records: &[GameRecord],
    owner: &str,
    epoch: i64,
) -> Result<usize, Error> {
    let insert = c.statement(INSERT_GAMES).await?;
    let upsert = c.statement(UPSERT_RATINGS).await?;
    let games = Games::of(records);
    let r = Ratings::of(records);
    let tx = c.client.transaction().await?;
    tx.batch_execute("SET LOCAL ttt.taking = 'on'").await?;
    let rooms: Vec<String> = tx
        .query(
            "UPDATE live_games SET owner = $1, epoch = $2 WHERE game_id = ANY($3) RETURNING room",
            &[&owner, &epoch, &games.id],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if !rooms.is_empty() {
        tx.execute("DELETE FROM live_moves WHERE room = ANY($1)", &[&rooms]).await?;
        tx.execute("DELETE FROM live_games WHERE room = ANY($1)", &[&rooms]).await?;
    }
    let new = tx.execute(&insert, &games.params(&owner)).await?;
    if !r.account.is_empty() {
        tx.execute(&upsert, &[&r.account, &r.size, &r.win, &r.rating, &r.rd, &r.volatility, &r.games])
            .await?;
    }
    tx.commit().await?;
    Ok(usize::try_from(new).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change<'a>(room: &'a str, delete: bool, first: u32, moves: &'a [[u16; 2]]) -> RoomChange<'a> {
        RoomChange { room, delete_game: delete, delete_moves: delete, start: None, first, moves, clock: None }
    }

    /// A finished game between accounts 1 and 2 that X won, rated from `before`.
    fn won(id: &str, before: [Standing; 2]) -> GameRecord {
        use crate::core::account::Identity;
        let who = |account: i64| {
            std::sync::Arc::new(Identity {
                name: "p".into(),
                account: Some(account),
                bot: false,
                ratings: Box::default(),
            })
        };
        GameRecord {
            id: id.into(),
            room: "R".into(),
            rules: Rules { size: 3, win: 3 },
            players: [who(1), who(2)],
            moves: Vec::new(),
            winner: Some(Player::X),
            reason: tictactoe_protocol::EndReason::Resign,
            line: None,
            ratings: Some(ratings::rate(before, Some(0))),
            started_at_ms: 0,
            ended_at_ms: 0,
        }
    }

    #[test]
    fn games_rated_from_a_stale_book_are_rated_again_in_order_from_the_database() {
        let start = Standing::default();
        // This writer rated two games of accounts 1 and 2 from the start;
        // meanwhile another writer rated one of theirs (1 won).
        let elsewhere = ratings::rate([start, start], Some(0));
        let first = won("A", [start, start]);
        let second =
            won("B", [first.ratings.expect("rated")[0].after, first.ratings.expect("rated")[1].after]);
        let stored = FxHashMap::from_iter([((1, 3, 3), elsewhere[0].after), ((2, 3, 3), elsewhere[1].after)]);
        let records = rerate(&[first, second], stored);
        let [a, b] = [&records[0], &records[1]].map(|g| g.ratings.expect("still rated"));
        assert_eq!(a[0].before, elsewhere[0].after, "the first game starts where the database stands");
        assert_eq!((b[0].before, b[1].before), (a[0].after, a[1].after), "the second from the first");
        assert_eq!(b[0].after.games, 3);
        assert_eq!(latest(&records), vec![((1, 3, 3), b[0].after), ((2, 3, 3), b[1].after)]);
        // What the writer rated from is what the check compares against.
        let keys = rated_from(&records);
        assert_eq!(
            keys.iter().map(|(k, s)| (*k, s.games)).collect::<Vec<_>>(),
            [((1, 3, 3), 1), ((2, 3, 3), 1)]
        );
    }

    #[test]
    fn a_room_changed_twice_goes_in_two_rounds_in_order() {
        let moves = [[0, 0], [1, 1]];
        let changes =
            [change("A", false, 0, &moves), change("B", false, 3, &moves[..1]), change("A", true, 0, &[])];
        let rounds = rounds(&changes);
        assert_eq!(rounds.len(), 2);
        assert_eq!((rounds[0].move_rooms.clone(), rounds[0].move_seqs.clone()), (vec!["A", "B"], vec![0, 3]));
        assert_eq!(rounds[0].move_cells[0], [0, 0, 0, 0, 1, 0, 1, 0]);
        assert!(rounds[0].delete_games.is_empty());
        // The end of A's game comes after its moves were written.
        assert_eq!((rounds[1].delete_games.clone(), rounds[1].delete_moves.clone()), (vec!["A"], vec!["A"]));
    }
}
