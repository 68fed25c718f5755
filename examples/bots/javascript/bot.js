#!/usr/bin/env node
// A complete tictactoe bot in one file: connect, get a game, play it, exit.
//
//   npm install
//   node bot.js --server ws://127.0.0.1:7878        # quick match, 3x3
//   node bot.js --join K7QM3XPA2B                   # a friend's room
//   node bot.js --games 10                          # rematch, or find someone new
//   node bot.js --accept-challenges 1 --sizes 3,4   # wait to be challenged by name
//   node bot.js --clock 3+2                         # quick match on a Fischer clock (or TTT_CLOCK=3+2)
//
// It plays as a bot account: the first run registers its name (`register`,
// `bot: true`) and keeps the token in ~/.config/ttt/bots/NAME.token (or under
// $TTT_CONFIG_DIR), readable only by you; later runs sign in with it (`hello`
// with `token`), so its games are rated. TTT_TOKEN overrides the file;
// `--guest 1` plays without an account, and so does a server that keeps none.
//
// After each game it asks for a rematch; when the room closes (`room_closed`)
// or the rematch goes unanswered, a quick-match bot queues again and a bot in
// a private room stops. If the connection drops mid-game, or the server
// restarts (close code 1012), it reconnects and resumes its seat; waiting in
// the queue, it queues again.
//
// Started by a match runner (`ttt arena 'bot:node bot.js' …`) with TTT_SERVER,
// TTT_JOIN (a room code) and TTT_NAME in its environment, it joins that room
// as a guest under that name, plays every game (rematch after each) and exits
// 0 when the room closes. A game from an opening starts with moves on the
// board: `game_started` lists them in `moves`.
//
// With `--accept-challenges 1` it queues for nothing: it waits until someone
// challenges it by name (`challenged`), accepts boards of the --sizes it plays
// and declines the rest with a reason, agrees to every rematch, and after
// each game waits for the next challenge.
//
// With --clock MINUTES+SECONDS (Lichess's way of writing a time control: 3+2
// is three minutes each and two seconds added per move) it asks quick match
// for a game on that Fischer clock. On a clock it spends its time as engines
// do: a budget per move of a twentieth of the time left plus three quarters
// of the increment, never more than half of the time left nor the time left
// less a safety margin, read from the `clocks` and `running` the server sends
// with every move (the house bot and `ttt bot` spend theirs the same way).
//
// The protocol is in PROTOCOL.md at the repository root. This bot wins when it
// can, blocks when it must, and otherwise takes the free cell closest to the centre.
'use strict';
const WebSocket = require('ws');
const fs = require('fs');
const os = require('os');
const path = require('path');

// A match runner starts the bot with these three: that room, that name, every game (0).
const arena = process.env.TTT_JOIN || null;
const args = {
  server: process.env.TTT_SERVER || 'ws://127.0.0.1:7878', name: process.env.TTT_NAME || 'js-bot', size: 3, win: null,
  join: arena, games: arena ? 0 : 1, guest: arena ? 1 : undefined,
};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const accepting = Boolean(args['accept-challenges']);
const sizes = args.sizes ? String(args.sizes).split(',').map(Number) : []; // empty: any

// `minutes+seconds` (3+2, 0.5+0, 10+0.1) as the wire's Fischer clock.
function parseClock(text) {
  const [minutes, seconds] = String(text).split('+').map(Number);
  if (!Number.isFinite(minutes) || !Number.isFinite(seconds)) {
    console.error(`error: ${JSON.stringify(text)} is not a time control: write minutes+seconds, as in 3+2`);
    process.exit(2);
  }
  return { initial_ms: Math.round(minutes * 60000), increment_ms: Math.round(seconds * 1000) };
}
const askedClock = (args.clock || process.env.TTT_CLOCK) ? parseClock(args.clock || process.env.TTT_CLOCK) : null;

const SAFETY = 500; // ms kept back from the time left for the move's trip to the server

// Milliseconds the move asked for by `msg` (game_started, state, moved) may
// take. On a Fischer clock (`control`, from game_started or state): a twentieth
// of our time left plus 3/4 of the increment, at most half of what is left
// past 250 ms, and at most the time left less SAFETY. No clock runs during
// each side's first move (`running` is null): that move's own time
// (`clock_ms`) bounds it. Without a clock, a second.
function budget(msg, control) {
  if (!control || !msg.clocks) return 1000;
  const left = msg.clocks[(msg.next ?? msg.turn) - 1];
  const firstMove = msg.clock_ms || 30000; // game_started has none: X's first move has 30 s
  const limit = (msg.running ? left : firstMove) - SAFETY;
  return Math.max(0, Math.min(left / 20 + (control.increment_ms * 3) / 4, (left - 250) / 2, limit));
}

// Every run of `win` cells in a row, column or diagonal of an n x n board, as arrays of [row, col].
function lines(n, win) {
  const all = [];
  for (const [dr, dc] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        const er = r + dr * (win - 1);
        const ec = c + dc * (win - 1);
        if (er >= 0 && er < n && ec >= 0 && ec < n) all.push([...Array(win).keys()].map((i) => [r + i * dr, c + i * dc]));
      }
    }
  }
  return all;
}

// Win now, else block, else the free cell nearest the centre. Past
// `deadline` (Date.now()) it stops looking and takes the centre.
function choose(board, me, avoid, win, deadline) {
  const n = board.length;
  const isFree = ([r, c]) => board[r][c] === 0 && !avoid.has(`${r},${c}`);
  for (const who of [me, 3 - me]) {
    if (Date.now() > deadline) break;
    for (const line of lines(n, win)) {
      const empty = line.filter(isFree);
      if (line.filter(([r, c]) => board[r][c] === who).length === win - 1 && empty.length === 1) return empty[0];
    }
  }
  const centre = (n - 1) / 2;
  const free = [];
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (isFree([r, c])) free.push([r, c]);
  free.sort((a, b) => Math.abs(a[0] - centre) + Math.abs(a[1] - centre) - (Math.abs(b[0] - centre) + Math.abs(b[1] - centre)));
  return free[0];
}

let ws = null;
let last = null; // the last request, sent again if it was rate-limited
const send = (msg) => {
  last = msg;
  ws.send(JSON.stringify(msg));
};
let queued = false; // waiting in quick match: a restart keeps no queue, so queue again
const newGame = () => {
  queued = true;
  // Quick match pairs only players asking the same clock.
  const asked = askedClock ? { clock: askedClock } : {};
  send({ type: 'quick_match', size: Number(args.size), ...(args.win ? { win: Number(args.win) } : {}), ...asked });
};
let board = null;
let me = null;
let win = null; // marks in a row that win; the size is the classic rule
let clock = null; // the game's Fischer clock, or null for the per-move timer
let deadline = 0; // when the move being chosen must be sent (Date.now())
let played = 0;
let rematchWait = 30000; // an unanswered rematch is given up after a turn's time
let rematchTimer = null;
const avoid = new Set();
// While a game is on: the seat's resume token. If the connection drops (or
// the server restarts: close code 1012), the bot reconnects with a jittered,
// doubling backoff and sends `resume` while the grace period lasts.
let seat = null;
let grace = 60000; // reconnect_grace_ms from `welcome`
let giveUpAt = null; // while reconnecting: when to stop trying
let backoff = 100;
const RESTART_WAIT = 60000; // a restarting server is given this long to come back

// The budget counts from when the message asking for the move arrived.
function move(msg) {
  if (msg) deadline = Date.now() + budget(msg, clock);
  const [row, col] = choose(board, me, avoid, win, deadline);
  // The id comes back on our own `moved`, or on the `error` that refuses it.
  send({ type: 'move', row, col, id: `${row},${col}` });
}

let done = false; // set once the run has ended; later messages are not ours to act on
function finish(code, text) {
  if (done) return;
  done = true;
  clearTimeout(rematchTimer);
  (code === 0 ? console.log : console.error)(text);
  process.exitCode = code;
  if (ws) ws.close();
}

// The opponent is gone: quick match finds someone else; a private room ends the run.
function opponentGone(why) {
  clearTimeout(rematchTimer);
  if (args.join) finish(1, `error: ${why} after ${played} games`);
  else newGame();
}

const tokenFile = path.join(process.env.TTT_CONFIG_DIR || path.join(os.homedir(), '.config', 'ttt'), 'bots', `${args.name}.token`);
let registering = false;

// Sends `hello` (with the token when there is one), then asks for a game.
function helloAndPlay(token) {
  registering = false;
  send(token ? { type: 'hello', name: args.name, token } : { type: 'hello', name: args.name });
  if (seat) send({ type: 'resume', token: seat }); // back after a drop: take the seat again
  else if (accepting) {
    console.log(`${args.name} is waiting for challenges`);
    giveUpAt = null;
    backoff = 100;
  } else if (queued || !args.join) {
    if (giveUpAt !== null) console.log('back in the queue');
    giveUpAt = null;
    backoff = 100;
    newGame();
  } else send({ type: 'join_room', room: args.join });
}

// Signs in with the saved token, or registers the name once first.
function signIn() {
  let token = process.env.TTT_TOKEN || null;
  if (!token && fs.existsSync(tokenFile)) token = fs.readFileSync(tokenFile, 'utf8').trim();
  if (token || args.guest) return helloAndPlay(token);
  registering = true;
  send({ type: 'register', name: args.name, bot: true });
}

function onMessage(data) {
  if (done) return;
  const msg = JSON.parse(data.toString());
  switch (msg.type) {
    case 'welcome': // always the first message
      rematchWait = msg.limits.turn_timeout_ms || 30000;
      grace = msg.limits.reconnect_grace_ms ?? grace;
      signIn();
      break;
    case 'state': // our seat back after a reconnect: the board as the server has it
      giveUpAt = null;
      backoff = 100;
      board = Array.from({ length: msg.size }, () => Array(msg.size).fill(0));
      msg.moves.forEach(([r, c], i) => { board[r][c] = (i % 2) + 1; });
      me = msg.you;
      win = msg.win ?? msg.size;
      clock = msg.clock ?? null;
      console.log(`back in room ${msg.room} after ${msg.moves.length} moves`);
      if (msg.turn === me) move(msg);
      break;
    case 'registered':
      fs.mkdirSync(path.dirname(tokenFile), { recursive: true });
      fs.writeFileSync(tokenFile, `${msg.token}\n`, { mode: 0o600 });
      console.log(`registered the bot account ${msg.name}; token saved in ${tokenFile}`);
      helloAndPlay(msg.token);
      break;
    case 'game_started':
      clearTimeout(rematchTimer);
      board = Array.from({ length: msg.size }, () => Array(msg.size).fill(0));
      (msg.moves || []).forEach(([r, c], i) => { board[r][c] = (i % 2) + 1; }); // an opening's moves, X first
      me = msg.you;
      win = msg.win ?? msg.size;
      seat = msg.resume_token;
      queued = false;
      clock = msg.clock ?? null;
      console.log(`playing ${'XO'[me - 1]} in room ${msg.room}${clock ? ` at ${clock.initial_ms / 60000}+${clock.increment_ms / 1000}` : ''}`);
      if (msg.turn === me) move(msg);
      break;
    case 'moved':
      board[msg.row][msg.col] = msg.player;
      avoid.clear();
      if (msg.next === me) move(msg);
      break;
    case 'game_over': {
      seat = null;
      const outcome = msg.winner === 0 ? 'draw' : msg.winner === me ? 'win' : 'loss';
      console.log(`result: ${outcome} (${msg.reason}) moves=${JSON.stringify(msg.moves)}`);
      played += 1;
      if (Number(args.games) && played >= Number(args.games)) {
        send({ type: 'leave' });
        finish(0, `played ${played} games`);
      } else if (!accepting) { // a challenged bot leaves rematches to its challenger
        send({ type: 'rematch' });
        // Playing until the room closes, its closing ends the wait.
        if (Number(args.games)) rematchTimer = setTimeout(() => {
          send({ type: 'leave' });
          opponentGone('the rematch went unanswered');
        }, rematchWait);
      }
      break;
    }
    case 'room_closed': // the opponent left or dropped: no rematch is coming
      if (!Number(args.games)) finish(0, `played ${played} games`); // every game of the room is played
      else if (!accepting) opponentGone('the opponent left the room');
      break;
    case 'challenged': {
      const playing = seat !== null;
      if (playing || (sizes.length > 0 && !sizes.includes(msg.size))) {
        const reason = playing ? 'in a game; try again after it' : `this bot plays sizes ${sizes.join(',')}`;
        send({ type: 'decline', challenge: msg.challenge, reason });
      } else {
        console.log(`${msg.from.name} challenges on ${msg.size}x${msg.size}: accepted`);
        send({ type: 'accept', challenge: msg.challenge });
      }
      break;
    }
    case 'rematch_offered':
      if (accepting) send({ type: 'rematch' });
      break;
    case 'error':
      if (registering && msg.code === 'auth_failed') {
        helloAndPlay(null); // this server keeps no accounts: play as a guest
      } else if (msg.code === 'invalid_token') {
        // The game ended while we were away.
        seat = null;
        opponentGone('the game ended while the bot was reconnecting');
      } else if ((msg.code === 'cell_occupied' || msg.code === 'out_of_bounds') && msg.id) {
        avoid.add(msg.id); // try another cell
        move();
      } else if (msg.code === 'rate_limited') {
        // Not acted on: wait as long as the server says, then send it again.
        const again = last;
        setTimeout(() => again && send(again), msg.retry_after_ms ?? 1000);
      } else if (msg.code !== 'not_your_turn' && msg.code !== 'not_in_game') {
        // room_not_found, room_full, invalid_*: nothing to retry
        finish(1, `error: ${msg.code}: ${msg.message}`);
      }
      break;
    default: // queued, room_created, pong, opponent_*, challenge_ended, and unknown types: nothing to do
  }
}

// The connection is gone: with a game on, try again (1012 says the server is
// restarting and the game waits for us); else the run ends.
function onClose(code) {
  if (done) return;
  if (!seat && !queued && !accepting) {
    finish(1, 'error: the server closed the connection');
    return;
  }
  const now = Date.now();
  if (giveUpAt === null) {
    giveUpAt = now + (code === 1012 ? Math.max(grace, RESTART_WAIT) : grace);
    console.log(code === 1012 ? 'server restarting, reconnecting…' : 'connection lost, reconnecting…');
  }
  if (now >= giveUpAt) {
    finish(1, 'error: could not reconnect within the grace period');
    return;
  }
  const wait = backoff * (0.5 + Math.random() / 2);
  backoff = Math.min(backoff * 2, 2000);
  setTimeout(connect, wait);
}

function connect() {
  ws = new WebSocket(args.server);
  ws.on('message', onMessage);
  // A failed attempt is followed by 'close' (code 1006), which retries.
  ws.on('error', (err) => { if (!seat && !accepting) finish(1, `error: ${err.message}`); });
  ws.on('close', (code) => onClose(code));
}

connect();
