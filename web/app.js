// The page: one WebSocket to the server that served it, speaking the same
// protocol as bots and the terminal client. State lives in state.js; this
// module wires it to the DOM (text only: names are never markup) and to
// the socket (reconnecting, and resuming the tab's seat after a reload).
import * as board from './board.js';
import * as game from './game.js';
import * as invites from './invite.js';
import * as records from './records.js';
import * as result from './result.js';
import {
  apply, boardName, connectionDown, initial, myTurn, roomFromPath, shown, sizes, statusText, step,
} from './state.js';

const $ = (id) => document.getElementById(id);
const SEAT = 'ttt.seat'; // sessionStorage: this tab's seat { token, you }, taken back after a reload
const NAME = 'ttt.name'; // localStorage: the name last chosen
const GUEST = 'ttt.guest'; // sessionStorage: this tab's guest name, kept until the user changes it
const ACCOUNT = 'ttt.account'; // localStorage: { name, token } of the account signed in
const RESTART_WAIT = 60000; // a restarting server (close 1012) is given this long

let state = initial();
let ws = null;
// A room opened through its link (/r/CODE): shown with who waits in it, or
// watched when its game is on. Its seat is taken only on an explicit click,
// so that a link on another site cannot put a signed-in player in a game.
let invite = roomFromPath(location.pathname);
let pending = null; // what to ask for once connected
let down = null; // while reconnecting: { until, restart }
let back = null; // just reconnected: { restart, timer } — said for a few seconds
let backoff = 200;
let focus = [0, 0];
let resignArmed = null; // the first Resign click arms a second one for 3 s

const now = () => performance.now();
const url = () => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`;

function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) {
    ws.send(JSON.stringify(msg));
    return true;
  }
  state.note = 'Not connected: nothing was sent. Reconnecting…';
  render();
  return false;
}

function myName() {
  return account()?.name ?? $('name').value.trim();
}

function account() {
  try {
    return JSON.parse(localStorage.getItem(ACCOUNT) ?? 'null');
  } catch {
    return null;
  }
}

/** `hello` as the account signed in, or as a guest with the name typed. */
function hello() {
  const saved = account();
  send(saved ? { type: 'hello', name: saved.name, token: saved.token } : { type: 'hello', name: myName() });
}

/** The view the address asks for: play (default), account, leaderboard, a profile or a replay. */
function view() {
  const [, what, arg] = location.hash.split('/');
  if (what === 'account' || what === 'leaderboard') return { what };
  if ((what === 'players' || what === 'games') && arg) return { what, arg: decodeURIComponent(arg) };
  return { what: 'play' };
}

function route() {
  const v = view();
  if (v.what === 'leaderboard') records.leaderboard($('leaderboard-out'), Number($('lb-size').value), Number($('lb-win').value));
  if (v.what === 'players') records.profile($('profile-out'), v.arg);
  if (v.what === 'games') records.replay($('replay-out'), v.arg);
  render();
}

function connect() {
  ws = new WebSocket(url());
  ws.addEventListener('message', (e) => onMessage(JSON.parse(e.data)));
  ws.addEventListener('close', (e) => onClose(e.code));
}

function onMessage(msg) {
  state = apply(state, msg, now());
  switch (msg.type) {
    case 'welcome': {
      if (down) {
        clearTimeout(back?.timer);
        back = { restart: down.restart, timer: setTimeout(() => { back = null; render(); }, 5000) };
      }
      down = null;
      backoff = 200;
      fillSizes();
      hello();
      const seat = savedSeat();
      if (seat) send({ type: 'resume', token: seat.token });
      else if (invite) peek(invite);
      else if (pending) send(pending);
      pending = null;
      send({ type: 'who' });
      break;
    }
    case 'registered':
      localStorage.setItem(ACCOUNT, JSON.stringify({ name: msg.name, token: msg.token }));
      $('account-note').textContent = `Registered ${msg.name}. Its token is kept in this browser; to sign in elsewhere, copy it: ${msg.token}`;
      hello();
      break;
    case 'authenticated':
      $('name').value = msg.name;
      break;
    case 'queued':
      if (view().what !== 'play') location.hash = '#/';
      break;
    case 'game_started':
      if (view().what !== 'play') location.hash = '#/';
      sessionStorage.setItem(SEAT, JSON.stringify({ token: msg.resume_token, you: msg.you }));
      focus = [Math.floor(msg.size / 2), Math.floor(msg.size / 2)];
      buildBoard();
      break;
    case 'state':
      buildBoard();
      break;
    case 'room_created':
      if (view().what !== 'play') location.hash = '#/';
      break;
    case 'game_over':
      sessionStorage.removeItem(SEAT);
      break;
    case 'error':
      if (view().what === 'account') $('account-note').textContent = msg.message;
      if (msg.code === 'auth_failed' && account()) {
        // The saved account is not this server's (or no longer): a guest again.
        localStorage.removeItem(ACCOUNT);
        state.account = null;
      } else if (msg.code === 'invalid_token') {
        // The seat is gone (its game ended while we were away): say how it
        // ended when the server names the game, else start over.
        const you = savedSeat()?.you;
        sessionStorage.removeItem(SEAT);
        if (state.ended) lookUp(state.ended, you);
        else if (invite) peek(invite);
      } else if (msg.code === 'room_full' && invite) {
        // Someone took the seat first: watch their game instead.
        send({ type: 'spectate', room: invite });
      } else if (msg.code === 'room_not_found' && invite) {
        state.gone = invite;
        state.note = '';
        invite = null;
        history.replaceState(null, '', '/');
        state.screen = 'home';
      }
      break;
    case 'room_closed':
      invite = null;
      break;
    default:
  }
  render();
}

/** This tab's seat, if it has one: `{ token, you }` (a bare token, as pages before kept it, has no `you`). */
function savedSeat() {
  const saved = sessionStorage.getItem(SEAT);
  try {
    return JSON.parse(saved ?? 'null');
  } catch {
    return { token: saved, you: null };
  }
}

/** Shows our game `id` (we had seat `you`) as its record tells it: it ended while we were away. */
async function lookUp(id, you) {
  try {
    const resp = await fetch(`/api/games/${encodeURIComponent(id)}`);
    if (!resp.ok) throw new Error(String(resp.status));
    state = apply(state, { type: 'record', game: await resp.json(), you }, now());
    buildBoard();
  } catch {
    state.ended = null;
    state.note = 'Your last game ended while you were away.';
  }
  render();
}

/**
 * Looks at `room` through a second, short-lived connection that says no
 * hello and takes part in nothing: its `state` shows who waits there (the
 * room screen), or, when both seats are taken, the main connection watches
 * the game. The main connection itself stays out of a waiting room until the
 * player clicks, so that taking the seat is one plain `join_room`.
 */
function peek(room) {
  const side = new WebSocket(url());
  side.addEventListener('message', (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type === 'welcome') {
      side.send(JSON.stringify({ type: 'spectate', room }));
      return;
    }
    if (msg.type !== 'state' && msg.type !== 'error') return;
    side.close();
    if (msg.type === 'state' && msg.players.length >= 2) send({ type: 'spectate', room });
    else onMessage(msg);
  });
}

function onClose(code) {
  const restart = code === 1012;
  const grace = state.limits?.reconnect_grace_ms ?? 30000;
  if (!down) down = { until: now() + (restart ? Math.max(grace, RESTART_WAIT) : grace), restart };
  down.restart ||= restart;
  state = connectionDown(state, now(), down.restart);
  render();
  if (now() > down.until && !savedSeat()) backoff = 5000; // idle: keep trying, slowly
  setTimeout(connect, backoff * (0.5 + Math.random() / 2));
  backoff = Math.min(backoff * 2, 5000);
}

/** The size menus offer every board the server plays (its `welcome` limits). */
function fillSizes() {
  const size = $('size');
  if (size.options.length) return;
  const all = sizes(state.limits);
  for (const n of all) size.add(new Option(`${n}×${n}`, String(n)));
  size.value = all.includes(3) ? '3' : String(all[0]);
  $('smallest').textContent = size.options[0].text;
  $('largest').textContent = size.options[size.options.length - 1].text;
  fillWins();
  for (const id of ['lb-size', 'lb-win']) {
    $(id).min = String(all[0]);
    $(id).max = String(all[all.length - 1]);
  }
}

function fillWins() {
  const n = Number($('size').value);
  const win = $('win');
  win.replaceChildren();
  for (let k = Math.min(3, n); k <= n; k++) win.add(new Option(k === n ? `${k} (a whole line)` : String(k), String(k)));
  win.value = String(n);
}

function rules() {
  return { size: Number($('size').value), win: Number($('win').value) };
}

function buildBoard() {
  board.build($('board'), state.size);
}

function cellButton(r, c) {
  return $('board').querySelector(`button[data-row="${r}"][data-col="${c}"]`);
}

function renderBoard() {
  game.fit(state);
  board.paint($('board'), state, focus);
}

function renderClock() {
  game.clock(state, now());
}

function renderWho() {
  const list = $('who');
  const items = state.online.map((p) => {
    const li = document.createElement('li');
    const name = document.createElement('span');
    name.textContent = p.name + (p.bot ? ' (bot)' : '');
    const status = document.createElement('span');
    status.className = 'status';
    status.textContent = p.status;
    li.append(name, status);
    const isMe = p.name === myName();
    if (!isMe && p.status !== 'playing') {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = p.name === 'house' ? 'Play' : 'Challenge';
      b.addEventListener('click', () => {
        const { size, win } = rules();
        send({ type: 'challenge', name: p.name, size, win });
      });
      li.append(b);
    }
    return li;
  });
  list.replaceChildren(...items);
}

function render() {
  const v = view().what;
  const play = v === 'play';
  const inGame = play && state.screen === 'game';
  $('home').hidden = !play || state.screen !== 'home';
  $('room-view').hidden = !play || state.screen !== 'room';
  $('waiting').hidden = !play || state.screen !== 'waiting';
  $('game').hidden = !inGame;
  $('account').hidden = v !== 'account';
  $('leaderboard').hidden = v !== 'leaderboard';
  $('profile').hidden = v !== 'players';
  $('replay').hidden = v !== 'games';
  const saved = account();
  $('account-status').textContent = saved
    ? `Signed in as ${saved.name}${state.account?.bot ? ' (bot)' : ''}.`
    : 'Playing as a guest.';
  $('register').hidden = !!saved;
  $('sign-in').hidden = !!saved;
  $('sign-out').hidden = !saved;
  $('account-link').textContent = saved ? saved.name : 'Account';
  $('name').disabled = !!saved;
  const conn = $('conn');
  conn.hidden = !down && !back;
  conn.classList.toggle('ok', !down && !!back);
  if (down) conn.textContent = down.restart ? 'Server restarting, reconnecting…' : 'Connection lost, reconnecting…';
  else if (back) conn.textContent = back.restart ? 'The server restarted; you are back.' : 'Reconnected; you are back.';
  const offer = state.offer;
  $('offer').hidden = !offer;
  if (offer) $('offer-text').textContent = `${offer.from} challenges you to ${boardName(offer.size, offer.win)}.`;
  $('waiting-text').textContent = state.note;
  $('home-note').textContent = state.screen === 'home' ? state.note : '';
  $('gone').hidden = !(play && state.screen === 'home' && state.gone);
  if (state.gone) $('gone-text').textContent = `No room has the code ${state.gone}. It may have closed, or the code may be mistyped.`;
  for (const id of ['home-note', 'note', 'account-note']) $(id).classList.toggle('error', state.noteKind === 'error');
  if (state.screen === 'room') {
    const host = state.players[0] ? shown(state.players[0]) : 'Nobody';
    $('room-text').textContent = `${host} is waiting in room ${state.room} for an opponent on ${boardName(state.size, state.win)}.`
      + (account() ? ` You are signed in as ${account().name}.` : '');
    invites.show($('room-invite'), state.room, 'Or join from elsewhere with any of these:');
  }
  $('invite').hidden = !(state.screen === 'waiting' && state.room);
  if (!$('invite').hidden) invites.show($('invite'), state.room, 'Invite a friend with any one of these:');
  renderWho();
  if (inGame) {
    game.players(state);
    $('status').textContent = statusText(state);
    $('status').classList.toggle('turn', myTurn(state));
    $('note').textContent = state.note;
    result.paint(state); // before the board: the banner takes room above it on a phone
    renderBoard();
    game.moves(state);
    const seated = state.you !== null;
    $('resign').hidden = !seated || !!state.over;
    if (!resignArmed) $('resign').textContent = 'Resign';
  }
  renderClock();
}

function playAt(r, c) {
  focus = [r, c];
  if (state.you === null) {
    state.note = 'You are watching: only the players move.';
  } else if (!myTurn(state)) {
    state.note = state.over ? 'The game is over.' : 'Not your turn yet.';
  } else if (state.board[r][c]) {
    state.note = 'That cell is taken.';
  } else {
    send({ type: 'move', row: r, col: c });
  }
  render();
}

/** This tab's guest name: the one it had, else the name last chosen, else a new one. */
function guestName() {
  const name = sessionStorage.getItem(GUEST) ?? localStorage.getItem(NAME) ?? `guest-${Math.floor(1000 + Math.random() * 9000)}`;
  sessionStorage.setItem(GUEST, name);
  return name;
}

/** Back to the home screen, out of any room and its link. */
function home() {
  sessionStorage.removeItem(SEAT);
  invite = null;
  history.replaceState(null, '', '/');
  state = { ...initial(), limits: state.limits, online: state.online };
  send({ type: 'who' });
  render();
}

function wire() {
  $('name').value = guestName();
  $('name').addEventListener('change', () => {
    const name = $('name').value.trim();
    if (!name) return;
    localStorage.setItem(NAME, name);
    sessionStorage.setItem(GUEST, name);
    send({ type: 'hello', name });
  });
  $('size').addEventListener('change', fillWins);
  $('register').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ type: 'register', name: $('register-name').value.trim() });
  });
  $('sign-in').addEventListener('submit', (e) => {
    e.preventDefault();
    const saved = { name: $('sign-in-name').value.trim(), token: $('sign-in-token').value.trim() };
    localStorage.setItem(ACCOUNT, JSON.stringify(saved));
    hello();
    render();
  });
  $('sign-out').addEventListener('click', () => {
    localStorage.removeItem(ACCOUNT);
    state.account = null;
    $('name').value = guestName();
    hello();
    render();
  });
  $('board-pick').addEventListener('submit', (e) => {
    e.preventDefault();
    route();
  });
  window.addEventListener('hashchange', route);
  $('start').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ type: 'quick_match', ...rules() });
  });
  $('create').addEventListener('click', () => send({ type: 'create_room', ...rules() }));
  $('house').addEventListener('click', () => send({ type: 'play_house', ...rules(), level: $('level').value }));
  const typedRoom = () => $('room-code').value.trim().toUpperCase();
  const joinTyped = () => {
    const room = typedRoom();
    if (!room) return;
    invite = room; // a full room is watched instead
    send({ type: 'join_room', room });
  };
  $('join').addEventListener('click', joinTyped);
  // Enter in the room code box joins that room (not the form's quick match).
  $('room-code').addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    joinTyped();
  });
  $('watch').addEventListener('click', () => {
    const room = typedRoom();
    if (room) send({ type: 'spectate', room });
  });
  $('take-seat').addEventListener('click', () => send({ type: 'join_room', room: state.room }));
  $('room-back').addEventListener('click', () => {
    send({ type: 'leave' });
    home();
  });
  $('who-refresh').addEventListener('click', () => send({ type: 'who' }));
  $('offer-accept').addEventListener('click', () => state.offer && send({ type: 'accept', challenge: state.offer.id }));
  $('offer-decline').addEventListener('click', () => {
    if (!state.offer) return;
    send({ type: 'decline', challenge: state.offer.id });
    state.offer = null;
    render();
  });
  $('cancel').addEventListener('click', () => {
    send({ type: 'leave' });
    state.screen = 'home';
    render();
  });
  $('rematch').addEventListener('click', () => {
    if (send({ type: 'rematch' })) state.note = 'Rematch asked; waiting for your opponent.';
    render();
  });
  $('resign').addEventListener('click', () => {
    if (resignArmed) {
      clearTimeout(resignArmed);
      resignArmed = null;
      send({ type: 'resign' });
      return;
    }
    $('resign').textContent = 'Really resign? Click again';
    resignArmed = setTimeout(() => {
      resignArmed = null;
      render();
    }, 3000);
  });
  $('leave').addEventListener('click', () => {
    send({ type: 'leave' });
    home();
  });
  // A new game on the board just played: the house again after the house,
  // else a quick match (as the terminal's `n`); the finished room is left.
  $('new-game').addEventListener('click', () => {
    const { size, win } = state;
    const house = result.againstHouse(state);
    home();
    send(house ? { type: 'play_house', size, win, level: $('level').value } : { type: 'quick_match', size, win });
  });
  $('gone-new').addEventListener('click', () => send({ type: 'quick_match', ...rules() }));
  $('board').addEventListener('click', (e) => {
    const b = e.target.closest('button.cell');
    if (b) playAt(Number(b.dataset.row), Number(b.dataset.col));
  });
  $('board').addEventListener('keydown', (e) => {
    if (!e.key.startsWith('Arrow')) return;
    e.preventDefault();
    focus = step(focus, e.key, state.size);
    renderBoard();
    cellButton(...focus)?.focus();
  });
  setInterval(renderClock, 200);
  window.addEventListener('resize', () => {
    if (view().what === 'play' && state.screen === 'game') renderBoard();
  });
  // Who is online changes by itself: while the home screen is in sight it
  // asks again every 2 s, so that the list is never more than that behind.
  setInterval(() => {
    const looking = view().what === 'play' && state.screen === 'home' && document.visibilityState === 'visible';
    if (looking && ws?.readyState === WebSocket.OPEN) send({ type: 'who' });
  }, 2000);
}

wire();
connect();
route();
