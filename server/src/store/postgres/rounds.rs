//! What changes to games in progress write to Postgres: the changes in
//! rounds, each round's rows as column arrays, and the statements that
//! take them whole (`unnest`), in a commit's pipeline.

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use crate::store::changes::encode_cells;
use crate::store::live::RoomChange;
use crate::store::postgres::Conn;
use crate::store::postgres::pipeline::Step;
use crate::store::postgres::records::PlayerColumns;
use crate::store::tournaments::berserk_mask;

const DELETE_MOVES: &str = "DELETE FROM live_moves WHERE room = ANY($1::text[])";

const DELETE_GAMES: &str = "DELETE FROM live_games WHERE room = ANY($1::text[])";

/// `owner` and `epoch` (`$21`, `$22`) hold the games that start.
const INSERT_LIVE: &str =
    "INSERT INTO live_games (room, game_id, size, win, turn_timeout_ms, x_name, x_account,
        x_bot, x_token, o_name, o_account, o_bot, o_token, clock_left_ms, started_at, house_level, clock,
        opening, tournament, berserk, owner, epoch)
    SELECT u.*, $21, $22 FROM unnest($1::text[], $2::text[], $3::int4[], $4::int4[], $5::int8[], $6::text[],
        $7::int8[], $8::bool[], $9::bytea[], $10::text[], $11::int8[], $12::bool[], $13::bytea[], $14::int8[],
        $15::int8[], $16::text[], $17::text[], $18::int4[], $19::text[], $20::int4[]) AS u
    ON CONFLICT (room) DO UPDATE SET game_id = excluded.game_id, size = excluded.size, win = excluded.win,
        turn_timeout_ms = excluded.turn_timeout_ms, x_name = excluded.x_name, x_account = excluded.x_account,
        x_bot = excluded.x_bot, x_token = excluded.x_token, o_name = excluded.o_name,
        o_account = excluded.o_account, o_bot = excluded.o_bot, o_token = excluded.o_token,
        clock_left_ms = excluded.clock_left_ms, started_at = excluded.started_at,
        house_level = excluded.house_level, clock = excluded.clock, opening = excluded.opening,
        tournament = excluded.tournament, berserk = excluded.berserk";

/// A chunk of moves of a game the database does not hold (its start was
/// lost on a full queue) is left out: it could never be replayed.
const INSERT_MOVES: &str = "INSERT INTO live_moves (room, seq, cells, times)
    SELECT u.room, u.seq, u.cells, u.times
    FROM unnest($1::text[], $2::int4[], $3::bytea[], $4::bytea[]) AS u(room, seq, cells, times)
    WHERE EXISTS (SELECT 1 FROM live_games g WHERE g.room = u.room)
    ON CONFLICT (room, seq) DO UPDATE SET cells = excluded.cells, times = excluded.times
        WHERE live_moves.cells IS DISTINCT FROM excluded.cells";

/// Sides that went berserk join the game's mask (1 for player 1, 2 for player 2).
const UPDATE_BERSERK: &str = "UPDATE live_games g SET berserk = g.berserk | u.mask
    FROM unnest($1::text[], $2::int4[]) AS u(room, mask) WHERE g.room = u.room";

const UPDATE_CLOCKS: &str = "UPDATE live_games g SET clock_left_ms = u.left_ms
    FROM unnest($1::text[], $2::int8[]) AS u(room, left_ms) WHERE g.room = u.room";

/// One round of changes to games in progress: no room twice, so that its
/// statements may each write all rooms at once (deletes, then new games,
/// then moves, then clocks, then berserk sides). A room changed twice in one commit (after
/// failed writes) has its second change in the next round.
#[derive(Default)]
pub(super) struct Round<'a> {
    rooms: rustc_hash::FxHashSet<&'a str>,
    delete_moves: Vec<&'a str>,
    delete_games: Vec<&'a str>,
    starts: StartColumns<'a>,
    move_rooms: Vec<&'a str>,
    move_seqs: Vec<i32>,
    move_cells: Vec<Vec<u8>>,
    /// With a Fischer clock: the movers' times left, a little-endian u64 per move.
    move_times: Vec<Option<Vec<u8>>>,
    clock_rooms: Vec<&'a str>,
    clock_ms: Vec<Option<i64>>,
    berserk_rooms: Vec<&'a str>,
    berserk_masks: Vec<i32>,
}

/// The rows of [`INSERT_LIVE`]: games that started.
#[derive(Default)]
struct StartColumns<'a> {
    room: Vec<&'a str>,
    game_id: Vec<&'a str>,
    size: Vec<i32>,
    win: Vec<i32>,
    turn_ms: Vec<Option<i64>>,
    x: PlayerColumns<'a>,
    x_token: Vec<&'a [u8]>,
    o: PlayerColumns<'a>,
    o_token: Vec<&'a [u8]>,
    clock_ms: Vec<Option<i64>>,
    started_at: Vec<i64>,
    house: Vec<Option<&'static str>>,
    fischer: Vec<Option<String>>,
    opening: Vec<i32>,
    tournament: Vec<Option<&'a str>>,
    berserk: Vec<i32>,
}

fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The changes in rounds (see [`Round`]).
pub(super) fn rounds<'a>(changes: &[RoomChange<'a>]) -> Vec<Round<'a>> {
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
            s.room.push(&g.room);
            s.game_id.push(&g.id);
            s.size.push(g.rules.size as i32);
            s.win.push(g.rules.win as i32);
            s.turn_ms.push(g.turn_timeout.map(millis));
            s.x.push(&g.players[0]);
            s.x_token.push(&g.tokens[0]);
            s.o.push(&g.players[1]);
            s.o_token.push(&g.tokens[1]);
            s.clock_ms.push(g.clock_left.map(millis));
            s.started_at.push(g.started_at_ms);
            s.house.push(g.house.map(|h| h.name()));
            s.fischer.push(g.rules.clock.map(|c| serde_json::to_string(&c).unwrap_or_default()));
            s.opening.push(i32::try_from(g.opening).unwrap_or(i32::MAX));
            s.tournament.push(g.tournament.as_deref());
            s.berserk.push(berserk_mask(g.berserk));
        }
        if !ch.moves.is_empty() {
            r.move_rooms.push(ch.room);
            r.move_seqs.push(i32::try_from(ch.first).unwrap_or(i32::MAX));
            r.move_cells.push(encode_cells(ch.moves));
            let times = ch.times.iter().flat_map(|t| t.to_le_bytes()).collect();
            r.move_times.push(Some(times).filter(|_| !ch.times.is_empty()));
        }
        if let Some(left) = ch.clock {
            r.clock_rooms.push(ch.room);
            r.clock_ms.push(left.map(millis));
        }
        if ch.berserk.contains(&true) {
            r.berserk_rooms.push(ch.room);
            r.berserk_masks.push(berserk_mask(ch.berserk));
        }
    }
    rounds
}

/// The statements a round may run, prepared before the transaction opens
/// (once it is open, nothing may fail before its end is sent).
pub(super) struct RoundStatements {
    delete_moves: Statement,
    delete_games: Statement,
    starts: Statement,
    moves: Statement,
    clocks: Statement,
    berserk: Statement,
}

impl RoundStatements {
    pub(super) async fn prepare(c: &mut Conn) -> Result<RoundStatements, tokio_postgres::Error> {
        Ok(RoundStatements {
            delete_moves: c.statement(DELETE_MOVES).await?,
            delete_games: c.statement(DELETE_GAMES).await?,
            starts: c.statement(INSERT_LIVE).await?,
            moves: c.statement(INSERT_MOVES).await?,
            clocks: c.statement(UPDATE_CLOCKS).await?,
            berserk: c.statement(UPDATE_BERSERK).await?,
        })
    }
}

impl<'a> Round<'a> {
    /// Adds the statements this round runs to a commit's pipeline, in the
    /// order they apply; `owner` and `epoch` hold the games it starts.
    pub(super) fn steps(
        &'a self,
        client: &'a Client,
        st: &'a RoundStatements,
        owner: &'a str,
        epoch: i64,
        steps: &mut Vec<Step<'a>>,
    ) {
        if !self.delete_moves.is_empty() {
            steps.push(Box::pin(async move {
                client.execute(&st.delete_moves, &[&self.delete_moves]).await.map(|_| None)
            }));
        }
        if !self.delete_games.is_empty() {
            steps.push(Box::pin(async move {
                client.execute(&st.delete_games, &[&self.delete_games]).await.map(|_| None)
            }));
        }
        if !self.starts.room.is_empty() {
            steps.push(Box::pin(async move {
                let s = &self.starts;
                let params: [&(dyn ToSql + Sync); 22] = [
                    &s.room,
                    &s.game_id,
                    &s.size,
                    &s.win,
                    &s.turn_ms,
                    &s.x.name,
                    &s.x.account,
                    &s.x.bot,
                    &s.x_token,
                    &s.o.name,
                    &s.o.account,
                    &s.o.bot,
                    &s.o_token,
                    &s.clock_ms,
                    &s.started_at,
                    &s.house,
                    &s.fischer,
                    &s.opening,
                    &s.tournament,
                    &s.berserk,
                    &owner,
                    &epoch,
                ];
                client.execute(&st.starts, &params).await.map(|_| None)
            }));
        }
        if !self.move_rooms.is_empty() {
            steps.push(Box::pin(async move {
                let params: [&(dyn ToSql + Sync); 4] =
                    [&self.move_rooms, &self.move_seqs, &self.move_cells, &self.move_times];
                client.execute(&st.moves, &params).await.map(|_| None)
            }));
        }
        if !self.clock_rooms.is_empty() {
            steps.push(Box::pin(async move {
                client.execute(&st.clocks, &[&self.clock_rooms, &self.clock_ms]).await.map(|_| None)
            }));
        }
        if !self.berserk_rooms.is_empty() {
            steps.push(Box::pin(async move {
                client.execute(&st.berserk, &[&self.berserk_rooms, &self.berserk_masks]).await.map(|_| None)
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change<'a>(room: &'a str, delete: bool, first: u32, moves: &'a [[u16; 2]]) -> RoomChange<'a> {
        RoomChange {
            room,
            delete_game: delete,
            delete_moves: delete,
            start: None,
            first,
            moves,
            times: &[],
            clock: None,
            berserk: [false; 2],
        }
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
