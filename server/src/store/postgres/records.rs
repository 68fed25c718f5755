//! What finished games write to Postgres: their records and the standings
//! they leave, each as column arrays that one statement takes whole
//! (`unnest`).

use tokio_postgres::types::ToSql;

use crate::core::account::Identity;
use crate::store::rating;
use crate::store::record::GameRecord;
use crate::store::spelling;
use crate::store::tournaments::berserk_mask;

/// `holder` is the writer's instance: a record it finds kept when it tries
/// a commit again is its own (written), anyone else's is refused (see
/// `opening::CHECK_RECORDS`).
pub(super) const INSERT_GAMES: &str =
    "INSERT INTO games (id, room, size, win, x_name, x_account, x_bot, o_name, o_account,
        o_bot, moves, winner, reason, line, rated, x_before, x_after, o_before, o_after, started_at, ended_at,
        clock, times, opening, host, tournament, berserk, holder)
    SELECT u.*, $28 FROM unnest($1::text[], $2::text[], $3::int4[], $4::int4[], $5::text[], $6::int8[],
        $7::bool[], $8::text[], $9::int8[], $10::bool[], $11::text[], $12::int4[], $13::text[], $14::text[],
        $15::bool[], $16::float8[], $17::float8[], $18::float8[], $19::float8[], $20::int8[], $21::int8[],
        $22::text[], $23::text[], $24::int4[], $25::text[], $26::text[], $27::int4[]) AS u
    ON CONFLICT (id) DO NOTHING";

/// A standing only moves forward (`games` grows). A commit has locked the
/// rows first (`opening::LOCK_RATINGS`); an import has not, and the guard
/// keeps a newer standing from being overwritten by an older game's.
pub(super) const UPSERT_RATINGS: &str = "INSERT INTO ratings (account, size, win, rating, rd, volatility, games)
    SELECT * FROM unnest($1::int8[], $2::int4[], $3::int4[], $4::float8[], $5::float8[], $6::float8[], $7::int8[])
    ON CONFLICT (account, size, win) DO UPDATE SET
        rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, games = excluded.games
    WHERE excluded.games > ratings.games";

/// One side's players (X's or O's), as the columns of a game's row.
#[derive(Default)]
pub(super) struct PlayerColumns<'a> {
    pub(super) name: Vec<&'a str>,
    pub(super) account: Vec<Option<i64>>,
    pub(super) bot: Vec<bool>,
}

impl<'a> PlayerColumns<'a> {
    pub(super) fn push(&mut self, who: &'a Identity) {
        self.name.push(&who.name);
        self.account.push(who.account);
        self.bot.push(who.bot);
    }
}

/// The rows of [`INSERT_GAMES`].
#[derive(Default)]
pub(super) struct RecordColumns<'a> {
    pub(super) id: Vec<&'a str>,
    room: Vec<&'a str>,
    size: Vec<i32>,
    win: Vec<i32>,
    x: PlayerColumns<'a>,
    o: PlayerColumns<'a>,
    moves: Vec<String>,
    winner: Vec<i32>,
    reason: Vec<String>,
    line: Vec<Option<String>>,
    rated: Vec<bool>,
    /// X's before and after, then O's.
    ratings: [Vec<Option<f64>>; 4],
    started_at: Vec<i64>,
    ended_at: Vec<i64>,
    clock: Vec<Option<String>>,
    times: Vec<Option<String>>,
    opening: Vec<i32>,
    host: Vec<Option<&'a str>>,
    tournament: Vec<Option<&'a str>>,
    berserk: Vec<i32>,
}

impl<'a> RecordColumns<'a> {
    pub(super) fn of(games: &'a [GameRecord]) -> RecordColumns<'a> {
        let mut c = RecordColumns::default();
        for g in games {
            c.id.push(&g.id);
            c.room.push(&g.room);
            c.size.push(g.rules.size as i32);
            c.win.push(g.rules.win as i32);
            c.x.push(&g.players[0]);
            c.o.push(&g.players[1]);
            c.moves.push(serde_json::to_string(&g.moves).unwrap_or_default());
            c.winner.push(i32::from(g.winner.map_or(0, |p| p.number())));
            c.reason.push(spelling::reason(g.reason));
            c.line.push(g.line.as_ref().map(|l| serde_json::to_string(l).unwrap_or_default()));
            c.rated.push(g.ratings.is_some());
            let r = g.ratings.as_ref();
            c.ratings[0].push(r.map(|r| r[0].before.rating.rating));
            c.ratings[1].push(r.map(|r| r[0].after.rating.rating));
            c.ratings[2].push(r.map(|r| r[1].before.rating.rating));
            c.ratings[3].push(r.map(|r| r[1].after.rating.rating));
            c.started_at.push(g.started_at_ms);
            c.ended_at.push(g.ended_at_ms);
            c.clock.push(g.clock_text());
            c.times.push(g.times_text());
            c.opening.push(i32::try_from(g.opening).unwrap_or(i32::MAX));
            c.host.push(g.host.as_deref());
            c.tournament.push(g.tournament.as_deref());
            c.berserk.push(berserk_mask(g.berserk));
        }
        c
    }

    /// The parameters of [`INSERT_GAMES`], `holder` last.
    pub(super) fn params<'b>(&'b self, holder: &'b &'b str) -> [&'b (dyn ToSql + Sync); 28] {
        [
            &self.id,
            &self.room,
            &self.size,
            &self.win,
            &self.x.name,
            &self.x.account,
            &self.x.bot,
            &self.o.name,
            &self.o.account,
            &self.o.bot,
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
            &self.clock,
            &self.times,
            &self.opening,
            &self.host,
            &self.tournament,
            &self.berserk,
            holder,
        ]
    }
}

/// The rows of [`UPSERT_RATINGS`]: the standings records leave
/// ([`rating::latest`]), in the order they are locked.
#[derive(Default)]
pub(super) struct StandingColumns {
    account: Vec<i64>,
    size: Vec<i32>,
    win: Vec<i32>,
    rating: Vec<f64>,
    rd: Vec<f64>,
    volatility: Vec<f64>,
    games: Vec<i64>,
}

impl StandingColumns {
    pub(super) fn of(games: &[GameRecord]) -> StandingColumns {
        let mut c = StandingColumns::default();
        for ((account, rules), s) in rating::latest(games) {
            c.account.push(account);
            c.size.push(rules.size as i32);
            c.win.push(rules.win as i32);
            c.rating.push(s.rating.rating);
            c.rd.push(s.rating.deviation);
            c.volatility.push(s.rating.volatility);
            c.games.push(i64::from(s.games));
        }
        c
    }

    /// Whether there is no row to write.
    pub(super) fn is_empty(&self) -> bool {
        self.account.is_empty()
    }

    /// The parameters of [`UPSERT_RATINGS`].
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 7] {
        [&self.account, &self.size, &self.win, &self.rating, &self.rd, &self.volatility, &self.games]
    }
}
