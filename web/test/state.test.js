// The page's state logic and its words, checked without a browser: `node --test web/test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apply, cellSize, clockLeft, clockText, connectionDown, initial, myTurn, roomFromPath, sizes, step,
} from '../state.js';
import {
  cellLabel, cellName, columnName, count, ending, moveRows, outcome, statusText,
} from '../words.js';

const started = (you, turnTimeout = 30000) => ({
  type: 'game_started', room: 'R1', size: 3, win: 3, you, mark: 'XO'[you - 1],
  players: [{ name: 'ann', account: false, bot: false, rating: null }, { name: 'bob', account: true, bot: true, rating: 1612 }],
  turn: 1, resume_token: 'R1tok', turn_timeout_ms: turnTimeout,
});

test('coordinates are named as the terminal names them', () => {
  assert.equal(columnName(0), 'a');
  assert.equal(columnName(25), 'z');
  assert.equal(columnName(26), 'aa');
  assert.equal(cellName(1, 1), 'b2');
  assert.equal(cellName(99, 99), 'cv100');
});

test('a game: turns, labels, the clock and the result', () => {
  let s = apply(initial(), started(1), 1000);
  assert.equal(s.screen, 'game');
  assert.equal(s.token, 'R1tok');
  assert.ok(myTurn(s));
  assert.equal(statusText(s), 'Your turn (X).');
  assert.equal(clockLeft(s, 6000), 25000);
  s = apply(s, { type: 'moved', room: 'R1', row: 1, col: 1, player: 1, seq: 1, next: 2, clock_ms: 30000 }, 7000);
  assert.equal(cellLabel(s, 1, 1), 'b2 X');
  assert.equal(cellLabel(s, 0, 0), 'a1');
  assert.deepEqual(s.last, [1, 1]);
  assert.equal(statusText(s), "bob 1612 (bot)'s turn.");
  assert.ok(!myTurn(s));
  s = apply(s, {
    type: 'game_over', room: 'R1', winner: 1, reason: 'line',
    line: { kind: 'col', index: 1, cells: [[0, 1], [1, 1], [2, 1]] },
    moves: [[1, 1], [0, 0], [0, 1], [2, 2], [2, 1]], game_id: 'g1', ratings: null,
  });
  assert.equal(statusText(s), 'You won — 3 in a row.');
  assert.deepEqual(outcome(s), { score: '1-0', headline: 'You won', how: '3 in a row', tone: 'win' });
  assert.deepEqual(s.line, [[0, 1], [1, 1], [2, 1]]);
  assert.equal(cellLabel(s, 2, 2), 'c3 O');
  assert.equal(s.token, null, 'a finished game has no seat to resume');
});

test('a rated game says how the rating moved', () => {
  let s = apply(initial(), started(2));
  s = apply(s, {
    type: 'game_over', room: 'R1', winner: 1, reason: 'resign', line: null, moves: [], game_id: 'g2',
    ratings: [{ before: 1500, after: 1662 }, { before: 1500, after: 1338 }],
  });
  assert.equal(statusText(s), 'You lost — you resigned.');
  assert.equal(outcome(s).score, '1-0', 'the score puts X first, whoever we are');
  assert.equal(s.note, 'Rating 1500 → 1338 (-162).');
});

test('a paused clock stands still while the opponent is away', () => {
  let s = apply(initial(), started(2), 0);
  s = apply(s, { type: 'opponent_disconnected', grace_ms: 30000 }, 10000);
  assert.equal(clockLeft(s, 10000), 20000);
  assert.equal(clockLeft(s, 25000), 20000);
  assert.match(s.note, /30 s to come back/);
  s = apply(s, { type: 'opponent_reconnected' }, 25000);
  assert.equal(clockLeft(s, 26000), 19000);
});

test('a spectator sees names and marks, and a resign in words', () => {
  let s = apply(initial(), {
    type: 'state', room: 'R1', size: 3, win: 3, board: ['X..', '...', '...'], moves: [[0, 0]], turn: 2,
    players: started(1).players, you: null, clock_ms: null,
  });
  assert.equal(statusText(s), 'O (bob 1612 (bot)) to move.');
  s = apply(s, { type: 'game_over', room: 'R1', winner: 1, reason: 'resign', line: null, moves: [[0, 0]], game_id: null, ratings: null });
  assert.equal(statusText(s), 'X (ann) won — O (bob) resigned.');
  assert.equal(outcome(s).tone, 'neutral', 'a spectator is told neutrally');
});

test('challenges: offered, then ended', () => {
  let s = apply(initial(), {
    type: 'challenged', challenge: 'c1', from: { name: '<b>eve</b>', account: false, bot: false, rating: null },
    size: 15, win: 5, expires_ms: 30000,
  });
  assert.deepEqual(s.offer, { id: 'c1', from: '<b>eve</b>', size: 15, win: 5, clock: null });
  s = apply(s, { type: 'challenge_ended', challenge: 'c1', reason: 'expired', message: 'nobody answered' });
  assert.equal(s.offer, null);
  assert.equal(s.note, 'nobody answered');
});

test('arrow keys stay on the board; invite paths name rooms', () => {
  assert.deepEqual(step([0, 0], 'ArrowUp', 3), [0, 0]);
  assert.deepEqual(step([0, 0], 'ArrowRight', 3), [0, 1]);
  assert.deepEqual(step([2, 2], 'ArrowDown', 3), [2, 2]);
  assert.equal(roomFromPath('/r/k7qm3xpa2b'), 'K7QM3XPA2B');
  assert.equal(roomFromPath('/r/'), null);
  assert.equal(roomFromPath('/'), null);
});

test('the clock says why it stands still: the opponent away, our connection, a restart', () => {
  let s = apply(initial(), started(1), 0);
  assert.deepEqual(clockText(s, 1000), { text: 'Time to move: 29 s', low: false, paused: false });
  s = apply(s, { type: 'opponent_disconnected', grace_ms: 30000 }, 2000);
  assert.deepEqual(clockText(s, 9000), { text: 'Clock paused (your opponent is away): 28 s left', low: false, paused: true });
  s = apply(s, { type: 'opponent_reconnected' }, 9000);
  s = connectionDown(s, 10000, true);
  assert.equal(clockText(s, 50000).text, 'Clock paused (the server is restarting): 27 s left');
  assert.equal(clockLeft(s, 90000), 27000, 'it stands still however long the server takes');
  // Back: the room's state sets the clock again, running.
  s = apply(s, { type: 'state', room: 'R1', size: 3, win: 3, board: [], moves: [], turn: 1, players: started(1).players, you: 1, clock_ms: 26000 }, 100000);
  assert.deepEqual(clockText(s, 101000), { text: 'Time to move: 25 s', low: false, paused: false });
  assert.equal(clockText(connectionDown(s, 101000, false), 200000).text, 'Clock paused (reconnecting): 25 s left');
  assert.ok(clockText(apply(s, {}, 124000), 124500).low, 'under 5 s and running: low');
});

test('a room opened through its link shows who waits and takes no seat', () => {
  const s = apply(initial(), {
    type: 'state', room: 'K7', size: 15, win: 5, board: [], moves: [], turn: null,
    players: [{ name: 'ann', account: true, bot: false, rating: 1500 }], you: null, clock_ms: null,
  });
  assert.equal(s.screen, 'room');
  assert.equal(s.room, 'K7');
  assert.equal(s.you, null);
  assert.equal(apply(s, { type: 'room_closed', room: 'K7', reason: 'left' }).screen, 'home');
});

test('refusals are marked as such and said in words; other notes are not', () => {
  let s = apply(initial(), { type: 'error', code: 'room_not_found', message: 'no room has the code X' });
  assert.equal(s.noteKind, 'error');
  s = apply(s, { type: 'error', code: 'player_not_found', message: 'nobody called "zed" is online; send who for the players who are' });
  assert.equal(s.note, 'Nobody by that name is online right now.');
  s = apply(s, { type: 'error', code: 'invalid_win', message: 'win must be from 3 to 3 on a 3x3 board' });
  assert.doesNotMatch(s.note, /must be from/);
  s = apply(apply(s, { type: 'welcome', limits: { min_size: 2, max_size: 30 } }), { type: 'error', code: 'invalid_size', message: 'x' });
  assert.equal(s.note, 'This server plays boards from 2×2 to 30×30.');
  s = apply(s, started(1));
  assert.equal(s.noteKind, '');
});

test('the move list, the cell size, the size menu and results in words', () => {
  assert.deepEqual(moveRows([[1, 1], [0, 0], [2, 2]]), [{ n: 1, x: 'b2', o: 'a1' }, { n: 2, x: 'c3', o: '' }]);
  // 15×15 at a laptop's and a phone's room: whole, and no cell under 18 px.
  for (const [w, h] of [[830, 640], [356, 600]]) {
    const px = cellSize(15, w, h);
    assert.ok(px >= 18 && 0.6 * px + 15 * px + 16 * 2 <= Math.min(w, h), `${w}×${h}: ${px}`);
  }
  assert.equal(cellSize(3, 2000, 2000), 72);
  assert.equal(cellSize(100, 400, 400), 18, 'too big even so: the frame scrolls');
  assert.deepEqual(sizes({ min_size: 2, max_size: 5 }), [2, 3, 4, 5]);
  assert.equal(count(1, 'draw', 'draws'), '1 draw');
  assert.equal(count(0, 'loss', 'losses'), '0 losses');
  const g = { players: [{ name: 'ann' }, { name: 'bob' }] };
  assert.equal(ending({ ...g, winner: 0, reason: 'draw' }), 'a draw');
  assert.equal(ending({ ...g, winner: 2, reason: 'timeout' }), 'bob won on time');
  assert.equal(ending({ ...g, winner: 1, reason: 'line' }), 'ann won');
});

test('every way a game ends has a banner: who won, how, and the score with X first', () => {
  const over = (you, winner, reason) => apply(apply(initial(), started(you)), {
    type: 'game_over', room: 'R1', winner, reason, line: null, moves: [], game_id: null, ratings: null,
  });
  const cases = [
    [1, 2, 'line', '0-1', 'You lost — your opponent made 3 in a row.'],
    [2, 2, 'timeout', '0-1', 'You won — your opponent ran out of time.'],
    [1, 2, 'timeout', '0-1', 'You lost — you ran out of time.'],
    [2, 2, 'disconnect', '0-1', 'You won — your opponent did not come back.'],
    [1, 2, 'disconnect', '0-1', 'You lost — your connection was gone too long.'],
    [null, 2, 'disconnect', '0-1', 'O (bob) won — X (ann) did not come back.'],
    [1, 0, 'draw', '½-½', 'Draw — the board is full.'],
    [null, 0, 'draw', '½-½', 'Draw — the board is full.'],
    [1, 0, 'aborted', '', 'Aborted — the game ended before both players had moved.'],
    [2, 0, 'shutdown', '', 'No winner — the server shut down.'],
  ];
  for (const [you, winner, reason, score, said] of cases) {
    const s = you === null
      ? apply(apply(initial(), { ...started(1), type: 'state', you: null, moves: [], board: [], clock_ms: null }), {
        type: 'game_over', room: 'R1', winner, reason, line: null, moves: [], game_id: null, ratings: null,
      })
      : over(you, winner, reason);
    assert.equal(outcome(s).score, score, `${you} ${winner} ${reason}`);
    assert.equal(statusText(s), said, `${you} ${winner} ${reason}`);
  }
  assert.equal(outcome(apply(initial(), started(1))), null, 'no banner while the game is on');
});

test('a player who lost while away is shown the ended game from its record, not a bare refusal', () => {
  // A reload with the seat's token: the server refuses it and names the game.
  let s = apply(initial(), { type: 'error', code: 'invalid_token', message: 'invalid resume token', game_id: 'g7Kq2ZxA' });
  assert.equal(s.ended, 'g7Kq2ZxA', 'the page looks the record up');
  assert.equal(s.noteKind, '', 'not shown as a refusal');
  assert.doesNotMatch(s.note, /token/i);
  // The record, as /api/games/{id} gives it, fed back in with the seat we had (O).
  s = apply(s, {
    type: 'record',
    you: 2,
    game: {
      id: 'g7Kq2ZxA', room: 'V3HXATSDK9', size: 3, win: 3,
      players: [{ name: 'bob', account: true, bot: false, rating: 1500 }, { name: 'alice', account: true, bot: false, rating: 1500 }],
      moves: [[1, 1], [0, 0], [0, 2]], winner: 1, reason: 'disconnect', line: null, rated: true,
      ratings: [{ before: 1500, after: 1662 }, { before: 1500, after: 1338 }],
      started_at: '2026-11-23T15:04:05.120Z', ended_at: '2026-11-23T15:04:31.877Z',
    },
  });
  assert.equal(s.screen, 'game');
  assert.equal(s.ended, null);
  assert.equal(statusText(s), 'You lost — your connection was gone too long.');
  assert.equal(outcome(s).score, '1-0');
  assert.equal(cellLabel(s, 0, 2), 'c1 X');
  assert.ok(s.closed, 'the room is gone: no rematch');
  assert.equal(s.note, 'This game ended while you were away. Rating 1500 → 1338 (-162).');
  // A line win from a record highlights the line.
  const lined = apply(initial(), {
    type: 'record', you: 1,
    game: { room: 'R', size: 3, win: 3, players: started(1).players, moves: [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]], winner: 1, reason: 'line', line: { kind: 'row', index: 0, cells: [[0, 0], [0, 1], [0, 2]] }, ratings: null },
  });
  assert.deepEqual(lined.line, [[0, 0], [0, 1], [0, 2]]);
  assert.equal(statusText(lined), 'You won — 3 in a row.');
  // Without a game id (a server that keeps no records) it is said in words.
  const bare = apply(initial(), { type: 'error', code: 'invalid_token', message: 'invalid resume token' });
  assert.equal(bare.ended, null);
  assert.match(bare.note, /ended while you were away/);
});

test('a refusal stays marked as one while other messages say nothing new', () => {
  let s = apply(initial(), { type: 'error', code: 'room_not_found', message: 'no room' });
  s = apply(s, { type: 'online', players: [] });
  assert.equal(s.noteKind, 'error', 'who is online (asked every 2 s) does not turn the error grey');
  s = apply(s, { type: 'queued', size: 3, win: 3 });
  assert.equal(s.noteKind, '');
});

test('a game from an opening starts with the opening on the board; an organised room says who organises it', () => {
  const started = {
    type: 'game_started', room: 'R', size: 3, win: 3, you: 2, mark: 'O', turn: 2,
    players: [{ name: 'ann' }, { name: 'bob' }], resume_token: 't', turn_timeout_ms: 0,
    clock: null, clocks: null, running: null, opening: 3, moves: [[1, 1], [0, 0], [2, 2]],
  };
  const s = apply(initial(), started, 0);
  assert.equal(s.opening, 3);
  assert.deepEqual(s.moves, [[1, 1], [0, 0], [2, 2]]);
  assert.equal(s.board[1][1], 1);
  assert.equal(s.board[0][0], 2);
  const look = apply(initial(), {
    type: 'state', room: 'R', size: 3, win: 3, board: ['...', '...', '...'], moves: [], turn: 1,
    players: [], you: null, clock_ms: null, clock: null, clocks: null, running: null,
    opening: 0, host: 'organiser', reserved: ['ann', 'bob'],
  }, 0);
  assert.equal(look.screen, 'room');
  assert.equal(look.host, 'organiser');
  assert.deepEqual(look.reserved, ['ann', 'bob']);
});
