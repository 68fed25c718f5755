// The page: one WebSocket to the server that served it, speaking the same
// protocol as bots and the terminal client. State lives in state.js; this
// module wires it to the DOM (text only: names are never markup) and to
// the socket (reconnecting, and resuming the tab's seat after a reload).
import * as board from './board.js';
import * as records from './records.js';
import {
  apply, boardName, clockText, connectionDown, initial, moveRows, myTurn, roomFromPath, shown, sizes, statusText, step,
} from './state.js';

const $ = (id) => document.getElementById(id);
const SEAT = 'ttt.seat'; // sessionStorage: this tab's seat, taken back after a reload
const NAME = 'ttt.name'; // localStorage: the name last used
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
      const seat = sessionStorage.getItem(SEAT);
      if (seat) send({ type: 'resume', token: seat });
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
      sessionStorage.setItem(SEAT, msg.resume_token);
      focus = [Math.floor(msg.size / 2), Math.floor(msg.size / 2)];
      buildBoard();
      break;
    case 'state':
      buildBoard();
      break;
    case 'room_created': {
      if (view().what !== 'play') location.hash = '#/';
      const link = `${location.origin}/r/${msg.room}`;
      $('invite-link').textContent = link;
      $('invite-link').href = link;
      break;
    }
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
        // The seat is gone (its game ended while we were away): start over.
        sessionStorage.removeItem(SEAT);
        if (invite) peek(invite);
      } else if (msg.code === 'room_full' && invite) {
        // Someone took the seat first: watch their game instead.
        send({ type: 'spectate', room: invite });
      } else if (msg.code === 'room_not_found' && invite) {
        state.note = `No room has the code ${invite} any more: it may have closed.`;
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
  if (now() > down.until && !sessionStorage.getItem(SEAT)) backoff = 5000; // idle: keep trying, slowly
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
  fitBoard();
  board.paint($('board'), state, focus);
}

/**
 * Sizes the cells so that the whole board is on screen: from the room the
 * board has across (the game's width, less the side panel when it stands
 * beside the board) and down (the window's height below the board's top).
 * Boards too big even at the smallest cells scroll inside their frame.
 */
function fitBoard() {
  const game = $('game');
  if (game.hidden) return;
  const wrap = game.querySelector('.board-wrap');
  const wide = window.matchMedia('(min-width: 52rem)').matches;
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
  const frame = 12; // the frame's padding on both sides, and a little air
  const width = game.clientWidth - (wide ? 17.5 * rem : 0) - frame;
  const top = (wide ? game : wrap).getBoundingClientRect().top + window.scrollY;
  const height = window.innerHeight - top - frame - 4;
  board.fit($('board'), state.size, width, height);
  wrap.style.maxHeight = `${Math.max(height + frame, 12 * rem)}px`;
}

function renderClock() {
  const shown = clockText(state, now());
  const clock = $('clock');
  clock.textContent = shown ? shown.text : '';
  clock.classList.toggle('low', !!shown?.low);
  clock.classList.toggle('paused', !!shown?.paused);
}

function renderMoves() {
  const items = moveRows(state.moves).map(({ x, o }) => {
    const li = document.createElement('li');
    const [a, b] = [document.createElement('span'), document.createElement('span')];
    a.textContent = x;
    b.textContent = o;
    li.append(a, b);
    return li;
  });
  const list = $('moves');
  list.replaceChildren(...items);
  list.scrollTop = list.scrollHeight;
}

/** The players' line: each name in its mark's colour, as text. */
function renderPlayers() {
  const parts = state.players.flatMap((p, i) => {
    const span = document.createElement('span');
    span.className = 'xo'[i];
    span.textContent = `${'XO'[i]} ${shown(p)}`;
    return i ? [' — ', span] : [span];
  });
  const tail = state.you ? ` (you are ${'XO'[state.you - 1]})` : ' (watching)';
  $('players').replaceChildren(...parts, tail);
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
  const game = play && state.screen === 'game';
  $('home').hidden = !play || state.screen !== 'home';
  $('room-view').hidden = !play || state.screen !== 'room';
  $('waiting').hidden = !play || state.screen !== 'waiting';
  $('game').hidden = !game;
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
  for (const id of ['home-note', 'note', 'account-note']) $(id).classList.toggle('error', state.noteKind === 'error');
  if (state.screen === 'room') {
    const host = state.players[0] ? shown(state.players[0]) : 'Nobody';
    $('room-text').textContent = `${host} is waiting in room ${state.room} for an opponent on ${boardName(state.size, state.win)}.`
      + (account() ? ` You are signed in as ${account().name}.` : '');
  }
  $('invite').hidden = !(state.screen === 'waiting' && state.room);
  renderWho();
  if (game) {
    renderPlayers();
    $('status').textContent = statusText(state);
    $('status').classList.toggle('turn', myTurn(state));
    $('note').textContent = state.note;
    renderBoard();
    renderMoves();
    const seated = state.you !== null;
    $('rematch').hidden = !seated;
    $('rematch').disabled = !state.over || state.closed;
    $('resign').hidden = !seated;
    $('resign').disabled = !!state.over;
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

function wire() {
  $('name').value = localStorage.getItem(NAME) ?? `guest-${Math.floor(1000 + Math.random() * 9000)}`;
  $('name').addEventListener('change', () => {
    const name = $('name').value.trim();
    if (!name) return;
    localStorage.setItem(NAME, name);
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
    $('name').value = `guest-${Math.floor(1000 + Math.random() * 9000)}`;
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
    invite = null;
    history.replaceState(null, '', '/');
    state = { ...initial(), limits: state.limits, online: state.online };
    send({ type: 'who' });
    render();
  });
  $('who-refresh').addEventListener('click', () => send({ type: 'who' }));
  $('offer-accept').addEventListener('click', () => state.offer && send({ type: 'accept', challenge: state.offer.id }));
  $('offer-decline').addEventListener('click', () => {
    if (!state.offer) return;
    send({ type: 'decline', challenge: state.offer.id });
    state.offer = null;
    render();
  });
  $('copy').addEventListener('click', () => navigator.clipboard?.writeText($('invite-link').href));
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
    sessionStorage.removeItem(SEAT);
    invite = null;
    history.replaceState(null, '', '/');
    state = { ...initial(), limits: state.limits, online: state.online };
    send({ type: 'who' });
    render();
  });
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
