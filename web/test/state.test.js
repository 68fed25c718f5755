// The page's state logic, checked without a browser: `node --test web/test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apply, cellLabel, cellName, clockLeft, columnName, initial, myTurn, roomFromPath, statusText, step,
} from '../state.js';

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
  assert.equal(statusText(s), 'You won.');
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
  assert.equal(statusText(s), 'You lost (resignation).');
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
  assert.equal(statusText(s), 'X (ann) won (resignation).');
});

test('challenges: offered, then ended', () => {
  let s = apply(initial(), {
    type: 'challenged', challenge: 'c1', from: { name: '<b>eve</b>', account: false, bot: false, rating: null },
    size: 15, win: 5, expires_ms: 30000,
  });
  assert.deepEqual(s.offer, { id: 'c1', from: '<b>eve</b>', size: 15, win: 5 });
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
