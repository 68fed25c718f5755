// The page's picture of the game, kept up to date from server messages:
// pure functions, no DOM and no socket, so `node --test` checks them. What
// the picture is said in (names, endings, refusals) is in words.js.
import * as fischer from './fischer.js';
import { boardName, refusal, shown } from './words.js';

/** A fresh state: nothing known yet. */
export function initial() {
  return {
    screen: 'home', // home | waiting | room (a room looked at through its link) | game
    limits: null,
    room: null,
    size: 3,
    win: 3,
    you: null, // 1, 2, or null when watching
    players: [],
    board: [], // board[row][col]: 0 empty, 1 X, 2 O
    moves: [],
    opening: 0, // how many of `moves` are the room's opening
    host: null, // an organised room's organiser, when looking at it through its link
    reserved: null, // the names its seats are kept for, X then O
    turn: null,
    last: null, // [row, col]
    line: null, // the winning run's cells
    over: null, // { winner, reason }
    clockMs: null,
    clockAt: 0, // when clockMs was read (ms, the caller's clock)
    clock: null, // the game's Fischer clock { initial_ms, increment_ms }, or null for the per-move timer
    clocks: null, // with a Fischer clock: each side's time left [ms_1, ms_2] at clocksAt
    running: null, // whose Fischer clock runs (1, 2), or null
    clocksAt: 0, // when clocks was read (ms, the caller's clock)
    clocksHeld: false, // the Fischer clocks stand still (the server is restarting)
    paused: false,
    pausedBy: null, // why the clock stands still: 'opponent' | 'connection' | 'restart'
    note: '',
    noteKind: '', // 'error' for a refusal, else '' (said plainly, never in the warning colour)
    closed: false,
    token: null, // the seat's resume token
    offer: null, // { id, from, size, win }
    sent: null, // { id, name } of our open challenge
    online: [],
    account: null, // { name, bot } once signed in
    gone: null, // the code of a room opened through its link that does not exist (any more)
    ended: null, // the id of our game that ended while we were away: its record is looked up
    tournament: null, // the id of the tournament this game is part of, or null
    berserk: [false, false], // which sides went berserk (a tournament game)
  };
}

function emptyBoard(n) {
  return Array.from({ length: n }, () => Array(n).fill(0));
}

function replay(state, moves) {
  state.board = emptyBoard(state.size);
  moves.forEach(([r, c], i) => {
    state.board[r][c] = (i % 2) + 1;
  });
  state.moves = moves.map(([r, c]) => [r, c]);
  state.last = moves.length ? [...moves[moves.length - 1]] : null;
}

/** A game shown afresh (`game_started` or `state`): its room, board, seats and moves. */
function newGame(state, msg, moves, now) {
  state.gone = null;
  state.room = msg.room;
  state.size = msg.size;
  state.win = msg.win ?? msg.size;
  state.line = null;
  state.over = null;
  state.closed = false;
  state.paused = false;
  state.pausedBy = null;
  state.screen = 'game';
  state.you = msg.you;
  state.players = msg.players;
  replay(state, moves);
  state.opening = msg.opening ?? 0;
  state.turn = msg.turn;
  state.clockAt = now;
  state.tournament = msg.tournament ?? null;
  state.berserk = msg.berserk ? [...msg.berserk] : [false, false];
}

/**
 * Folds one server message into `state` (a copy is returned; `now` is the
 * caller's clock in ms, for the turn clock).
 */
export function apply(prev, msg, now = 0) {
  const state = fold(structuredClone(prev), prev, msg, now);
  // A refusal stays marked as one until something else is said: a message
  // that says nothing new (who is online, every 2 s) leaves it as it was.
  if (msg.type !== 'error' && state.note !== prev.note) state.noteKind = '';
  return state;
}

/** The waiting screen, for a quick match's opponent or a friend to join, on the board and clock `msg` names. */
function waiting(state, msg, note) {
  state.gone = null;
  state.screen = 'waiting';
  state.size = msg.size;
  state.win = msg.win;
  state.clock = msg.clock ?? null;
  state.note = note;
}

/** The board and the clock, as people say them: `3×3, 3+2`, or `3×3` on the per-move timer. */
function terms(msg) {
  return msg.clock ? `${boardName(msg.size, msg.win)}, ${fischer.label(msg.clock)}` : boardName(msg.size, msg.win);
}

/** `apply` on `state` (a copy of `prev`, changed in place). */
function fold(state, prev, msg, now) {
  switch (msg.type) {
    case 'welcome':
      state.limits = msg.limits;
      break;
    case 'queued':
      waiting(state, msg, `Waiting for an opponent on ${terms(msg)}…`);
      break;
    case 'room_created':
      waiting(state, msg, `Room ${msg.room} is open${msg.clock ? ` (${fischer.label(msg.clock)})` : ''}: waiting for a friend to join.`);
      state.room = msg.room;
      break;
    case 'game_started':
      // A room's opening is on the board before the first move.
      newGame(state, msg, msg.moves ?? [], now);
      fischer.take(state, msg, now);
      state.token = msg.resume_token;
      // A Fischer clock starts once each side has moved: its first move has the per-move 30 s.
      if (msg.clock) state.clockMs = msg.running ? null : fischer.FIRST_MOVE_MS;
      else state.clockMs = msg.turn_timeout_ms > 0 ? msg.turn_timeout_ms : null;
      state.offer = null;
      state.sent = null;
      state.note = 'Game started.';
      break;
    case 'state':
      if (msg.you === null && msg.players.length < 2) {
        // A room still waiting for its second player, looked at through its
        // link: shown with who waits; the seat is taken only on a click.
        state.screen = 'room';
        state.room = msg.room;
        state.size = msg.size;
        state.win = msg.win ?? msg.size;
        state.players = msg.players;
        state.you = null;
        // An organiser's room: who organises it, and for whom its seats are kept.
        state.host = msg.host ?? null;
        state.reserved = msg.reserved ?? null;
        state.note = '';
        break;
      }
      newGame(state, msg, msg.moves, now);
      fischer.take(state, msg, now);
      state.clockMs = msg.clock_ms;
      if (msg.turn === null && msg.moves.length > 0) state.note = 'The game is over.';
      break;
    case 'moved':
      if (state.board[msg.row]) state.board[msg.row][msg.col] = msg.player;
      state.moves.push([msg.row, msg.col]);
      state.last = [msg.row, msg.col];
      state.turn = msg.next;
      state.clockMs = msg.clock_ms;
      state.clockAt = now;
      fischer.take(state, msg, now);
      state.note = '';
      break;
    case 'record':
      // Our game as its record tells it (`msg.game`, from /api/games/{id}):
      // it ended while we were away, so its room is gone and nothing more
      // can happen in it. `msg.you` is the seat we had.
      // Its `clocks` are each side's time after each move: the last pair is where they stopped.
      newGame(state, { ...msg.game, turn: null, you: msg.you ?? null }, [], now);
      fold(state, prev, { ...msg.game, type: 'game_over', clocks: msg.game.clocks?.at(-1) ?? null, running: null }, now);
      state.closed = true;
      state.ended = null;
      state.note = `This game ended while you were away.${state.note ? ` ${state.note}` : ''}`;
      break;
    case 'game_over':
      replay(state, msg.moves);
      state.turn = null;
      state.clockMs = null;
      fischer.take(state, msg, now);
      state.over = { winner: msg.winner, reason: msg.reason, ratings: msg.ratings };
      state.line = msg.line ? msg.line.cells : null;
      state.token = null;
      state.note = '';
      if (msg.ratings && state.you) {
        const { before, after } = msg.ratings[state.you - 1];
        state.note = `Rating ${before} → ${after} (${after >= before ? '+' : ''}${after - before}).`;
      }
      break;
    case 'berserked':
      // A tournament game's player halved their clock: the clocks as they are now, the same one running.
      if (msg.room !== state.room || state.screen !== 'game') break;
      state.berserk[msg.player - 1] = true;
      fischer.take(state, { clocks: msg.clocks, running: state.running }, now);
      state.note = msg.player === state.you
        ? 'Berserk: half your time and no increment; a win with enough moves of your own scores a point more.'
        : `${state.players[msg.player - 1]?.name ?? 'XO'[msg.player - 1]} went berserk.`;
      break;
    case 'opponent_disconnected':
      // The per-move timer waits for an away player; a Fischer game's
      // first-move time runs on, as its clocks do.
      if (!state.clock) {
        state.paused = true;
        state.pausedBy = 'opponent';
        state.clockMs = clockLeft(prev, now);
        state.clockAt = now;
      }
      state.note = `Your opponent disconnected; they have ${Math.round(msg.grace_ms / 1000)} s to come back.`;
      break;
    case 'opponent_reconnected':
      state.paused = false;
      state.pausedBy = null;
      state.clockAt = now;
      state.note = 'Your opponent is back.';
      break;
    case 'rematch_offered':
      state.note = 'Your opponent offers a rematch.';
      break;
    case 'room_closed':
      state.closed = true;
      state.clockMs = null;
      state.note = state.you ? 'Your opponent has left the room.' : 'The room has closed.';
      if (state.screen === 'room') state.screen = 'home';
      break;
    case 'online':
      state.online = msg.players;
      break;
    case 'challenge_sent':
      state.sent = { id: msg.challenge, name: msg.name };
      state.note = `Challenge sent to ${msg.name}; waiting for an answer…`;
      break;
    case 'challenged':
      state.offer = { id: msg.challenge, from: shown(msg.from), size: msg.size, win: msg.win, clock: msg.clock ?? null };
      break;
    case 'challenge_ended':
      if (state.offer && state.offer.id === msg.challenge) state.offer = null;
      if (state.sent && state.sent.id === msg.challenge) state.sent = null;
      state.note = msg.message;
      break;
    case 'authenticated':
      state.account = { name: msg.name, bot: msg.bot };
      break;
    case 'error':
      state.note = refusal(msg, state.limits);
      state.noteKind = 'error';
      if (msg.code === 'invalid_token') {
        state.token = null;
        if (msg.game_id) {
          // Our seat's game ended while we were away: its record says how.
          state.ended = msg.game_id;
          state.note = 'Your game ended while you were away; looking up how…';
          state.noteKind = '';
        }
      }
      break;
    default: // pong, registered, and types this page does not know
  }
  return state;
}

/**
 * The connection to the server dropped (`restart`: the server said it is
 * restarting) at `now`: the server holds every game's clock until the
 * players are back, so the clock shown stands still too. The room's
 * `state` sets it again once we are back.
 */
export function connectionDown(prev, now, restart) {
  const state = structuredClone(prev);
  if (state.screen !== 'game' || state.over) return state;
  // A Fischer clock runs on the server while we are away (an away player's
  // clock runs), so it ticks on here too — but a restarting server charges
  // its outage to nobody: then it stands still.
  if (restart && fischer.ticks(state)) {
    state.clocks = fischer.left(state, now);
    state.clocksAt = now;
    state.clocksHeld = true;
  }
  if (state.clockMs === null) return state;
  state.clockMs = clockLeft(prev, now);
  state.clockAt = now;
  state.paused = true;
  state.pausedBy = restart ? 'restart' : 'connection';
  return state;
}

/**
 * The clock as shown at `now`: its text, whether time is low (under 5 s,
 * running), and whether it stands still; null when there is no clock.
 */
export function clockText(state, now) {
  const left = clockLeft(state, now);
  if (left === null || state.screen !== 'game' || state.over) return null;
  // Once a Fischer clock runs, the two clock faces say it all.
  if (state.clock && state.running) return null;
  const secs = Math.ceil(left / 1000);
  // On a Fischer clock, each side's first move has this timer; the clocks start after.
  const what = state.clock ? 'Time for the first move' : 'Time to move';
  if (!state.paused) return { text: `${what}: ${secs} s`, low: left < 5000, paused: false };
  const why = {
    opponent: 'your opponent is away',
    connection: 'reconnecting',
    restart: 'the server is restarting',
  }[state.pausedBy] ?? 'a player is away';
  return { text: `Clock paused (${why}): ${secs} s left`, low: false, paused: true };
}

/**
 * The side of a board's square cell, in px, so that the whole board (its n
 * cells, a row and a column of labels a little more than half a cell each,
 * and `gap` px between tracks) fits `width` × `height`: from 18 px (below
 * that the board scrolls in its frame) to 72 px.
 */
export function cellSize(n, width, height, gap = 2) {
  const fit = (room) => (room - (n + 1) * gap) / (n + 0.6);
  return Math.max(18, Math.min(72, Math.floor(Math.min(fit(width), fit(height)))));
}

/** The board sizes the server plays (its `welcome` limits), smallest first. */
export function sizes(limits) {
  const { min_size: min = 2, max_size: max = 100 } = limits ?? {};
  const out = [];
  for (let n = Math.max(1, min); n <= max; n++) out.push(n);
  return out;
}

/** Whether it is our move in a game in progress. */
export function myTurn(state) {
  return state.screen === 'game' && !state.over && state.you !== null && state.turn === state.you;
}

/** Milliseconds the player to move has at `now`, or null when untimed. */
export function clockLeft(state, now) {
  if (state.clockMs === null || state.clockMs === undefined) return null;
  if (state.paused) return state.clockMs;
  return Math.max(0, state.clockMs - (now - state.clockAt));
}

/** The next cell focused by an arrow key from `[row, col]` on an n×n board. */
export function step([row, col], key, n) {
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  const [dr, dc] = moves[key] ?? [0, 0];
  return [Math.min(n - 1, Math.max(0, row + dr)), Math.min(n - 1, Math.max(0, col + dc))];
}

/** The room code in a page path `/r/{room}`, or null. */
export function roomFromPath(path) {
  const m = /^\/r\/([A-Za-z0-9]{1,32})\/?$/.exec(path);
  return m ? m[1].toUpperCase() : null;
}
