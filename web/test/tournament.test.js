// The tournaments as the page folds and says them, without a browser: `node --test web/test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, initial } from '../state.js';
import {
  applyTour, canBerserk, initialTour, joinButton, joining, lastGame, leaving, lookAt, span, standingRows, termsText, timeText,
} from '../tournament.js';
import { outcome, refusal } from '../words.js';

const T0 = 1_800_000_000_000; // a Unix ms the tournament starts at

/** A tournament's summary as the server sends it (flat, `id` the tournament's). */
const summary = (over = {}) => ({
  id: 'T1', name: 'Friday arena', created_by: 'ann', size: 3, win: 3, clock: { initial_ms: 60000, increment_ms: 0 },
  duration_ms: 300000, starts_at: T0, ends_at: T0 + 300000, status: 'running', players: 2, ...over,
});

const row = (rank, name, score, over = {}) => ({
  rank, name, score, games: 0, streak: false, results: [], performance: null, paused: false, ...over,
});

/** A `tournament_update` with `standings`. */
const update = (standings, over = {}) => ({
  type: 'tournament_update', ...summary({ players: standings.length, ...over }), standings, games: [],
});

test('the list, a tournament created, and updates of another tournament only refresh its line', () => {
  let t = applyTour(initialTour(), { type: 'tournaments', tournaments: [summary(), summary({ id: 'T0', name: 'old', status: 'finished' })] });
  assert.deepEqual(t.list.map((s) => s.id), ['T1', 'T0']);
  t = applyTour(t, { type: 'tournament', ...summary({ id: 'T2', name: 'new', status: 'starting', players: 0 }) });
  assert.equal(t.created, 'T2', 'its page opens');
  assert.deepEqual(t.list.map((s) => s.id), ['T2', 'T1', 'T0'], 'newest first');
  t = applyTour(t, update([row(1, 'bob', 2), row(2, 'cid', 0)]));
  assert.equal(t.view, null, 'not the one looked at: no standings kept');
  assert.equal(t.list.find((s) => s.id === 'T1').players, 2);
  assert.equal(t.list[1].standings, undefined, 'the list keeps summaries only');
});

test('the standings looked at follow every update: the table moves', () => {
  let t = lookAt(initialTour(), 'T1');
  t = applyTour(t, update([row(1, 'ann', 0), row(2, 'bob', 0)]), 'ann');
  assert.deepEqual(standingRows(t.view, 'ann').map((r) => [r.rank, r.name, r.score, r.me]), [['1', 'ann', '0', true], ['2', 'bob', '0', false]]);
  t = applyTour(t, update([
    row(1, 'bob', 6, { games: 3, streak: true, results: [2, 2, 2], performance: 2000 }),
    row(2, 'ann', 1, { games: 3, results: [0, 1, 0], performance: 1000, paused: true }),
  ]), 'ann');
  const [bob, ann] = standingRows(t.view, 'ann');
  assert.deepEqual(bob, {
    rank: '1', name: 'bob', score: '6', games: '3', streak: '🔥', results: '2 2 2', performance: '2000', paused: '', me: false,
  });
  assert.deepEqual({ ...ann }, {
    rank: '2', name: 'ann', score: '1', games: '3', streak: '', results: '0 1 0', performance: '1000', paused: 'paused', me: true,
  });
  assert.equal(standingRows(applyTour(t, update([row(1, 'new', 0)])).view)[0].performance, '–', 'no game yet: no performance');
  assert.deepEqual(standingRows(null), []);
  // Looking at another tournament forgets the first one's standings.
  assert.equal(lookAt(t, 'T9').view, null);
  assert.deepEqual(lookAt(t, 'T1').view, t.view, 'the same one is kept');
});

test('join and pause: a join takes when our row comes back unpaused; the button says what it will do', () => {
  let t = applyTour(lookAt(initialTour(), 'T1'), update([row(1, 'bob', 0)]), 'ann');
  assert.deepEqual(joinButton(t, null), { label: 'Join', hint: 'Sign in to play in tournaments.' });
  assert.deepEqual(joinButton(t, 'ann'), { label: 'Join', hint: '' });
  t = joining(t, 'T1');
  assert.equal(t.joining, 'T1');
  t = applyTour(t, update([row(1, 'bob', 0), row(2, 'ann', 0)]), 'ann');
  assert.equal(t.joined, 'T1');
  assert.equal(t.joining, null);
  assert.equal(joinButton(t, 'ann').label, 'Pause');
  assert.match(joinButton(t, 'ann').hint, /opens by itself/);
  assert.match(joinButton(applyTour(t, update([row(1, 'ann', 0)], { status: 'starting' }), 'ann'), 'ann').hint, /when it starts/);
  // Someone else's update leaves us in; the server pausing us (our connection went) takes us out.
  t = applyTour(t, update([row(1, 'bob', 2), row(2, 'ann', 0), row(3, 'cid', 0)]), 'ann');
  assert.equal(t.joined, 'T1');
  const paused = applyTour(t, update([row(1, 'bob', 2), row(2, 'ann', 0, { paused: true })]), 'ann');
  assert.equal(paused.joined, null);
  assert.deepEqual(joinButton(paused, 'ann'), { label: 'Join', hint: 'Paused: your score stays; join again to be paired.' });
  // Pause: out at once; the tournament over: no button at all.
  assert.equal(leaving(t, 'T1').joined, null);
  const over = applyTour(t, update([row(1, 'ann', 0)], { status: 'finished' }), 'ann');
  assert.equal(over.joined, null);
  assert.equal(joinButton(over, 'ann'), null);
  assert.deepEqual(timeText(over.view, T0), { word: 'Finished', left: 'no new games (those still being played count)' });
});

test('refusals on the tournament pages are said in words; a refused join is no longer pending', () => {
  let t = joining(lookAt(initialTour(), 'T1'), 'T1');
  t = applyTour(t, { type: 'error', code: 'account_required', message: 'sign in first', id: 'T1' });
  assert.equal(t.joining, null);
  assert.equal(t.noteKind, 'error');
  assert.match(t.note, /^Sign in to play in tournaments/);
  t = applyTour(t, { type: 'error', code: 'tournament_not_found', message: 'no tournament T1', id: 'T1' });
  assert.equal(t.note, 'No tournament has that id: it may be mistyped.');
  t = applyTour(t, { type: 'error', code: 'invalid_tournament', message: 'duration_ms must be an integer from 60000 to 43200000' });
  assert.match(t.note, /duration_ms must be/, 'the server names the field at fault');
  t = applyTour(joining(t, 'T2'), { type: 'error', code: 'busy', message: 'you are in tournament T1 already: tournament_leave it first', id: 'T2' });
  assert.equal(t.joining, null);
  assert.match(t.note, /tournament_leave it first/, 'any refusal of our join is said on its page');
  const game = applyTour(t, { type: 'error', code: 'not_your_turn', message: 'wait' });
  assert.equal(game.note, t.note, 'a game refusal is not the tournament page\'s');
  assert.match(refusal({ code: 'cannot_berserk', message: 'x' }), /Too late to go berserk/);
  assert.equal(joining(t, 'T1').note, '', 'asking again clears the note');
});

test('terms, status and the time to the start or the end', () => {
  assert.equal(termsText(summary()), '3×3, 1+0, 5 min');
  assert.equal(termsText(summary({ size: 15, win: 5, clock: { initial_ms: 180000, increment_ms: 2000 }, duration_ms: 90000 })), '15×15, 5 in a row, 3+2, 1.5 min');
  assert.deepEqual(timeText(summary({ status: 'starting' }), T0 - 65000), { word: 'Starting', left: 'starts in 1:05' });
  assert.deepEqual(timeText(summary(), T0 + 1500), { word: 'Running', left: 'ends in 4:59' });
  assert.equal(timeText(summary(), T0 + 400000).left, 'ends in 0:00', 'a late clock never counts below nothing');
  assert.equal(span(3_600_000 + 61_000), '1:01:01');
});

/** A tournament game started for seat `you`. */
const started = (you, tournament = 'T1') => ({
  type: 'game_started', room: 'R1', size: 3, win: 3, you, mark: 'XO'[you - 1],
  players: [{ name: 'ann', account: true, bot: false, rating: 1500 }, { name: 'bob', account: true, bot: true, rating: 1500 }],
  turn: 1, resume_token: 'tok', turn_timeout_ms: 0, clock: { initial_ms: 60000, increment_ms: 0 },
  clocks: [60000, 60000], running: null, opening: 0, moves: [], tournament,
});

test('berserk: only in a tournament game, before our own first move; berserked marks the player and sets the clocks', () => {
  let s = apply(initial(), started(2), 0);
  assert.equal(s.tournament, 'T1');
  assert.ok(canBerserk(s), 'O before its first move');
  assert.ok(!canBerserk(apply(initial(), started(2, null))), 'not outside a tournament');
  s = apply(s, { type: 'moved', room: 'R1', row: 0, col: 0, player: 1, seq: 1, next: 2, clock_ms: null, clocks: [60000, 60000], running: null }, 1000);
  assert.ok(canBerserk(s), 'X\'s move is not ours');
  s = apply(s, { type: 'berserked', room: 'R1', player: 2, clocks: [60000, 30000] }, 2000);
  assert.deepEqual(s.berserk, [false, true]);
  assert.deepEqual(s.clocks, [60000, 30000]);
  assert.match(s.note, /^Berserk: half your time/);
  assert.ok(!canBerserk(s), 'once only');
  const other = apply(apply(initial(), started(1), 0), { type: 'berserked', room: 'R1', player: 2, clocks: [60000, 30000] }, 10);
  assert.equal(other.note, 'bob went berserk.');
  assert.ok(canBerserk(other), 'the opponent\'s berserk leaves ours');
  const moved = apply(other, { type: 'moved', room: 'R1', row: 1, col: 1, player: 1, seq: 1, next: 2, clock_ms: null, clocks: [60000, 30000], running: null }, 20);
  assert.ok(!canBerserk(moved), 'after our first move: too late');
  assert.deepEqual(apply(other, { type: 'berserked', room: 'OTHER', player: 1, clocks: [1, 1] }).berserk, [false, true], 'another room\'s is not ours');
  // A snapshot (a reload) says who went berserk.
  const back = apply(initial(), { ...started(1), type: 'state', board: [], moves: [], clock_ms: null, berserk: [true, false] });
  assert.deepEqual(back.berserk, [true, false]);
  assert.ok(!canBerserk(back));
});

test('our tournament game ended: the tournament page says how, with its replay', () => {
  let s = apply(initial(), started(1), 0);
  s = apply(s, {
    type: 'game_over', room: 'R1', winner: 1, reason: 'line', line: null, moves: [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]],
    game_id: 'g1', ratings: [{ before: 1500, after: 1520 }, { before: 1500, after: 1480 }], clocks: [50000, 40000], running: null,
  });
  assert.deepEqual(lastGame(s, outcome(s), 'g1'), {
    tournament: 'T1', headline: 'You won', how: '3 in a row', note: 'Rating 1500 → 1520 (+20).', game: 'g1',
  });
});
