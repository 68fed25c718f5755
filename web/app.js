// The page: one WebSocket to the server that served it, speaking the same
// protocol as bots and the terminal client. State lives in state.js; this
// module wires it to the DOM (text only: names are never markup) and to
// the socket (reconnecting, and resuming the tab's seat after a reload).
import {
  apply, boardName, cellLabel, clockLeft, columnName, initial, myTurn, roomFromPath, shown, statusText, step,
} from './state.js';

const $ = (id) => document.getElementById(id);
const SEAT = 'ttt.seat'; // sessionStorage: this tab's seat, taken back after a reload
const NAME = 'ttt.name'; // localStorage: the name last used
const RESTART_WAIT = 60000; // a restarting server (close 1012) is given this long

let state = initial();
let ws = null;
let invite = roomFromPath(location.pathname); // a room to take a seat in (or watch)
let pending = null; // what to ask for once connected
let down = null; // while reconnecting: { until, restart }
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
  return $('name').value.trim();
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
      down = null;
      backoff = 200;
      fillSizes();
      send({ type: 'hello', name: myName() });
      const seat = sessionStorage.getItem(SEAT);
      if (seat) send({ type: 'resume', token: seat });
      else if (invite) send({ type: 'join_room', room: invite });
      else if (pending) send(pending);
      pending = null;
      send({ type: 'who' });
      break;
    }
    case 'game_started':
      sessionStorage.setItem(SEAT, msg.resume_token);
      focus = [Math.floor(msg.size / 2), Math.floor(msg.size / 2)];
      buildBoard();
      break;
    case 'state':
      buildBoard();
      break;
    case 'room_created': {
      const link = `${location.origin}/r/${msg.room}`;
      $('invite-link').textContent = link;
      $('invite-link').href = link;
      break;
    }
    case 'game_over':
      sessionStorage.removeItem(SEAT);
      break;
    case 'error':
      if (msg.code === 'invalid_token') {
        // The seat is gone (its game ended while we were away): start over.
        sessionStorage.removeItem(SEAT);
        if (invite) send({ type: 'join_room', room: invite });
      } else if (msg.code === 'room_full' && invite) {
        send({ type: 'spectate', room: invite });
        invite = null;
      } else if (msg.code === 'room_not_found' && invite) {
        invite = null;
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

function onClose(code) {
  const restart = code === 1012;
  const grace = state.limits?.reconnect_grace_ms ?? 30000;
  if (!down) down = { until: now() + (restart ? Math.max(grace, RESTART_WAIT) : grace), restart };
  down.restart ||= restart;
  render();
  if (now() > down.until && !sessionStorage.getItem(SEAT)) backoff = 5000; // idle: keep trying, slowly
  setTimeout(connect, backoff * (0.5 + Math.random() / 2));
  backoff = Math.min(backoff * 2, 5000);
}

function fillSizes() {
  const { min_size: min = 2, max_size: max = 100 } = state.limits ?? {};
  const size = $('size');
  if (size.options.length) return;
  for (let n = Math.max(min, 3); n <= max; n++) size.add(new Option(`${n}×${n}`, String(n)));
  size.value = '3';
  fillWins();
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
  const n = state.size;
  const board = $('board');
  board.style.setProperty('--n', String(n));
  const cells = [document.createElement('span')];
  for (let c = 0; c < n; c++) {
    const head = document.createElement('span');
    head.className = 'label';
    head.textContent = columnName(c);
    cells.push(head);
  }
  for (let r = 0; r < n; r++) {
    const label = document.createElement('span');
    label.className = 'label';
    label.textContent = String(r + 1);
    cells.push(label);
    for (let c = 0; c < n; c++) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'cell';
      b.dataset.row = String(r);
      b.dataset.col = String(c);
      cells.push(b);
    }
  }
  board.replaceChildren(...cells);
}

function cellButton(r, c) {
  return $('board').querySelector(`button[data-row="${r}"][data-col="${c}"]`);
}

function renderBoard() {
  const n = state.size;
  if ($('board').querySelectorAll('button.cell').length !== n * n) buildBoard();
  const win = new Set((state.line ?? []).map(([r, c]) => `${r},${c}`));
  for (const b of $('board').querySelectorAll('button.cell')) {
    const r = Number(b.dataset.row);
    const c = Number(b.dataset.col);
    const mark = state.board[r]?.[c] ?? 0;
    b.textContent = mark ? 'XO'[mark - 1] : '';
    b.setAttribute('aria-label', cellLabel(state, r, c));
    b.classList.toggle('x', mark === 1);
    b.classList.toggle('o', mark === 2);
    b.classList.toggle('last', !!state.last && state.last[0] === r && state.last[1] === c);
    b.classList.toggle('win', win.has(`${r},${c}`));
    b.tabIndex = r === focus[0] && c === focus[1] ? 0 : -1;
  }
}

function renderClock() {
  const left = clockLeft(state, now());
  const clock = $('clock');
  if (left === null || state.screen !== 'game' || state.over) {
    clock.textContent = '';
    return;
  }
  const secs = Math.ceil(left / 1000);
  clock.textContent = `${state.paused ? 'Clock paused' : 'Time to move'}: ${secs} s`;
  clock.classList.toggle('low', !state.paused && left < 5000);
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
  const game = state.screen === 'game';
  $('home').hidden = state.screen !== 'home';
  $('waiting').hidden = state.screen !== 'waiting';
  $('game').hidden = !game;
  const conn = $('conn');
  conn.hidden = !down;
  if (down) conn.textContent = down.restart ? 'Server restarting, reconnecting…' : 'Connection lost, reconnecting…';
  const offer = state.offer;
  $('offer').hidden = !offer;
  if (offer) $('offer-text').textContent = `${offer.from} challenges you to ${boardName(offer.size, offer.win)}.`;
  $('waiting-text').textContent = state.note;
  $('invite').hidden = !(state.screen === 'waiting' && state.room);
  renderWho();
  if (game) {
    const names = state.players.map((p, i) => `${'XO'[i]} ${shown(p)}`);
    $('players').textContent = names.join(' — ') + (state.you ? ` (you are ${'XO'[state.you - 1]})` : ' (watching)');
    $('status').textContent = statusText(state);
    $('note').textContent = state.note;
    renderBoard();
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
  if (!myTurn(state)) {
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
  $('start').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ type: 'quick_match', ...rules() });
  });
  $('create').addEventListener('click', () => send({ type: 'create_room', ...rules() }));
  $('house').addEventListener('click', () => send({ type: 'play_house', ...rules(), level: $('level').value }));
  $('watch').addEventListener('click', () => {
    const room = $('room-code').value.trim();
    if (room) send({ type: 'spectate', room });
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
  const board = $('board');
  board.addEventListener('click', (e) => {
    const b = e.target.closest('button.cell');
    if (b) playAt(Number(b.dataset.row), Number(b.dataset.col));
  });
  board.addEventListener('keydown', (e) => {
    if (!e.key.startsWith('Arrow')) return;
    e.preventDefault();
    focus = step(focus, e.key, state.size);
    renderBoard();
    cellButton(...focus)?.focus();
  });
  setInterval(renderClock, 200);
}

wire();
connect();
render();
