// The page's Fischer clocks without a browser: the picker's choices, the
// clock faces, and the clocks folded from server messages and ticking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chosen, custom, face, faces, label, left, preset, recorded, ticks,
} from '../fischer.js';
import { apply, clockText, connectionDown, initial } from '../state.js';
import { ending, outcome } from '../words.js';

const BLITZ = { initial_ms: 180000, increment_ms: 2000 };
const players = [{ name: 'ann', account: false, bot: false, rating: null }, { name: 'bob', account: false, bot: false, rating: null }];
const started = {
  type: 'game_started', room: 'R1', size: 3, win: 3, you: 1, mark: 'X', players, turn: 1,
  resume_token: 'tok', turn_timeout_ms: 30000, clock: BLITZ, clocks: [180000, 180000], running: null,
};
const moved = (seq, row, col, player, next, clocks, running) => ({
  type: 'moved', room: 'R1', row, col, player, seq, next, clock_ms: running ? clocks[running - 1] : 30000, clocks, running,
});

test('the presets and a custom clock, checked against the server ranges', () => {
  assert.deepEqual(preset('1+0'), { initial_ms: 60000, increment_ms: 0 });
  assert.deepEqual(preset('10+5'), { initial_ms: 600000, increment_ms: 5000 });
  assert.deepEqual(chosen({ pick: '3+2' }), { clock: BLITZ });
  assert.deepEqual(chosen({ pick: 'per-move' }), { clock: null });
  assert.deepEqual(chosen(null), { clock: null });
  assert.deepEqual(chosen({ pick: 'custom', minutes: '0.5', increment: '0.1' }), { clock: { initial_ms: 30000, increment_ms: 100 } });
  assert.deepEqual(custom('180', '180'), { clock: { initial_ms: 10800000, increment_ms: 180000 } });
  assert.deepEqual(custom(1 / 60, ''), { clock: { initial_ms: 1000, increment_ms: 0 } });
  for (const [minutes, increment, field] of [
    ['', '0', 'minutes'], ['0', '0', 'minutes'], ['180.1', '0', 'minutes'], ['abc', '0', 'minutes'], ['0.01', '0', 'minutes'],
    ['3', '-1', 'increment'], ['3', '180.5', 'increment'], ['3', 'x', 'increment'],
  ]) {
    const got = custom(minutes, increment);
    assert.equal(got.field, field, `${minutes}+${increment}`);
    assert.ok(got.error && !got.clock, `${minutes}+${increment}`);
  }
});

test('a clock in words and a time on a clock face', () => {
  assert.equal(label(BLITZ), '3+2');
  assert.equal(label({ initial_ms: 30000, increment_ms: 100 }), '0.5+0.1');
  assert.equal(label(null), 'per move');
  assert.equal(face(180000), '3:00');
  assert.equal(face(179999), '2:59');
  assert.equal(face(10000), '0:10');
  assert.equal(face(9999), '0:09.9');
  assert.equal(face(950), '0:00.9');
  assert.equal(face(-5), '0:00.0');
  assert.equal(face(10800000), '3:00:00');
  assert.equal(face(3725000), '1:02:05');
});

test('before each side has moved: both initial times, no clock runs, the first-move countdown shows', () => {
  let s = apply(initial(), started, 1000);
  assert.deepEqual(s.clock, BLITZ);
  assert.deepEqual(left(s, 60000), [180000, 180000]);
  assert.ok(!ticks(s));
  assert.equal(clockText(s, 6000).text, 'Time for the first move: 25 s');
  s = apply(s, moved(1, 0, 0, 1, 2, [180000, 180000], null), 7000);
  assert.equal(clockText(s, 7000).text, 'Time for the first move: 30 s');
  assert.deepEqual(faces(s, 9000).map((f) => f.running), [false, false]);
});

test('a running clock ticks down from when its message arrived; after a move the other runs', () => {
  let s = apply(initial(), started, 0);
  s = apply(s, moved(1, 0, 0, 1, 2, [180000, 180000], null), 100);
  s = apply(s, moved(2, 1, 1, 2, 1, [180000, 180000], 1), 200);
  assert.ok(ticks(s));
  assert.equal(clockText(s, 300), null, 'the two faces say it');
  let f = faces(s, 1700);
  assert.deepEqual(f.map((x) => x.text), ['2:58', '3:00']);
  assert.deepEqual(f.map((x) => x.running), [true, false]);
  s = apply(s, moved(3, 0, 1, 1, 2, [180500, 180000], 2), 2000);
  f = faces(s, 4000);
  assert.deepEqual(f.map((x) => x.text), ['3:00', '2:58']);
  assert.deepEqual(f.map((x) => x.running), [false, true]);
  // Low time: a running clock below 10 s, in tenths.
  s = apply(s, moved(4, 2, 2, 2, 1, [9500, 60000], 1), 5000);
  f = faces(s, 5200);
  assert.deepEqual(f[0], { text: '0:09.3', running: true, low: true });
  assert.equal(f[1].low, false);
  assert.equal(faces(s, 20000)[0].text, '0:00.0');
});

test('spectators fold the clocks from state; the game over stops them; no clock keeps the page as it was', () => {
  let s = apply(initial(), {
    type: 'state', room: 'R1', size: 3, win: 3, board: ['X..', '.O.', '...'], moves: [[0, 0], [1, 1]], turn: 1,
    players, you: null, clock_ms: 170000, clock: BLITZ, clocks: [170000, 175000], running: 1,
  }, 1000);
  assert.deepEqual(left(s, 3000), [168000, 175000]);
  s = apply(s, {
    type: 'game_over', room: 'R1', winner: 2, reason: 'timeout', line: null, moves: [[0, 0], [1, 1]], players,
    ratings: null, clocks: [0, 175000], running: null,
  }, 4000);
  assert.ok(!ticks(s));
  assert.deepEqual(faces(s, 9000).map((x) => [x.text, x.running, x.low]), [['0:00.0', false, true], ['2:55', false, false]]);
  const plain = apply(initial(), { ...started, clock: null, clocks: null }, 0);
  assert.equal(faces(plain, 100), null);
  assert.equal(clockText(plain, 100).text, 'Time to move: 30 s');
});

test('a lost connection leaves a Fischer clock running; a restarting server holds it', () => {
  let s = apply(initial(), started, 0);
  s = apply(s, moved(1, 0, 0, 1, 2, [180000, 180000], null), 0);
  s = apply(s, moved(2, 1, 1, 2, 1, [180000, 180000], 1), 0);
  assert.deepEqual(left(connectionDown(s, 1000, false), 5000), [175000, 180000]);
  const held = connectionDown(s, 1000, true);
  assert.ok(!ticks(held));
  assert.deepEqual(left(held, 5000), [179000, 180000]);
  // Back: the room's state sets the clocks again, and they run.
  const back = apply(held, {
    type: 'state', room: 'R1', size: 3, win: 3, board: ['X..', '.O.', '...'], moves: [[0, 0], [1, 1]], turn: 1,
    players, you: 1, clock_ms: 179000, clock: BLITZ, clocks: [179000, 180000], running: 1,
  }, 9000);
  assert.deepEqual(left(back, 10000), [178000, 180000]);
});

test('a record: the clocks where they stopped, and each side\'s time after each move for the replay', () => {
  const game = {
    id: 'g1', room: 'R1', size: 3, win: 3, players, winner: 1, reason: 'line', line: null, ratings: null,
    moves: [[0, 0], [1, 1], [0, 1]], clock: BLITZ, clocks: [[180000, 180000], [180000, 180000], [175000, 180000]],
  };
  const s = apply(initial(), { type: 'record', game, you: 1 }, 0);
  assert.deepEqual(left(s, 5000), [175000, 180000]);
  assert.deepEqual(recorded(game, 0), [180000, 180000]);
  assert.deepEqual(recorded(game, 3), [175000, 180000]);
  assert.deepEqual(recorded({ ...game, clocks: null }, 2), [180000, 180000]);
  // O's flag fell after X's third move: the replay's end says O had none left.
  assert.deepEqual(recorded({ ...game, reason: 'timeout', winner: 1 }, 3), [175000, 0]);
  assert.deepEqual(recorded({ ...game, reason: 'timeout', winner: 1 }, 2), [180000, 180000]);
});

test('waiting and a challenge name the clock', () => {
  assert.equal(apply(initial(), { type: 'queued', size: 3, win: 3, clock: BLITZ }).note, 'Waiting for an opponent on 3×3, 3+2…');
  assert.equal(apply(initial(), { type: 'queued', size: 3, win: 3, clock: null }).note, 'Waiting for an opponent on 3×3…');
  assert.match(apply(initial(), { type: 'room_created', room: 'AB', size: 3, win: 3, clock: BLITZ }).note, /Room AB is open \(3\+2\)/);
  const offer = apply(initial(), { type: 'challenged', challenge: 'c1', from: players[0], size: 3, win: 3, clock: BLITZ }).offer;
  assert.deepEqual(offer.clock, BLITZ);
});

test('a flag with no line left to win is a draw on time, in words', () => {
  const s = apply(apply(initial(), started, 0), {
    type: 'game_over', room: 'R1', winner: 0, reason: 'timeout', line: null, moves: [[0, 0], [1, 1]], players,
    ratings: null, clocks: [0, 5000], running: null,
  }, 10);
  assert.deepEqual(outcome(s), { score: '½-½', headline: 'Draw', how: 'time ran out, but no line was left to win it', tone: 'draw' });
  assert.equal(ending({ winner: 0, reason: 'timeout', players }), 'a draw on time');
  assert.equal(ending({ winner: 2, reason: 'timeout', players }), 'bob won on time');
});

test("an away opponent does not stop a Fischer game's first-move time, as it stops the per-move timer", () => {
  let s = apply(initial(), started, 1000);
  s = apply(s, { type: 'opponent_disconnected', grace_ms: 30000 }, 2000);
  const text = clockText(s, 12000);
  assert.equal(text.paused, false);
  assert.equal(text.text, 'Time for the first move: 19 s');
  let plain = apply(initial(), { ...started, clock: null, clocks: null, turn_timeout_ms: 30000 }, 1000);
  plain = apply(plain, { type: 'opponent_disconnected', grace_ms: 30000 }, 2000);
  assert.equal(clockText(plain, 12000).paused, true);
});
