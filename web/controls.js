// What the user does on the page: the forms, buttons and keys of every
// screen, each turned into a request to the server or a change of view.
import * as result from './result.js';
import { hello } from './messages.js';
import { $, page } from './page.js';
import { start, wirePicker } from './picker.js';
import {
  cellButton, fillWins, render, renderBoard, route, rules, view,
} from './render.js';
import {
  forgetAccount, forgetSeat, guestName, keepAccount, keepName,
} from './saved.js';
import { open, send } from './socket.js';
import { initial, myTurn, step } from './state.js';
import { wireTournaments } from './tournament-controls.js';

/** A click on cell (`r`, `c`): our move, or a word on why it is not one. */
function playAt(r, c) {
  const { state } = page;
  page.focus = [r, c];
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

/** Back to the home screen, out of any room and its link. */
function home() {
  forgetSeat();
  page.invite = null;
  history.replaceState(null, '', '/');
  page.state = { ...initial(), limits: page.state.limits, online: page.state.online, account: page.state.account };
  send({ type: 'who' });
  render();
}

/** The name box and the account view: a guest's name, registering, signing in and out. */
function wireAccount() {
  $('name').value = guestName();
  $('name').addEventListener('change', () => {
    const name = $('name').value.trim();
    if (!name) return;
    keepName(name);
    send({ type: 'hello', name });
  });
  $('register').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ type: 'register', name: $('register-name').value.trim() });
  });
  $('sign-in').addEventListener('submit', (e) => {
    e.preventDefault();
    keepAccount({ name: $('sign-in-name').value.trim(), token: $('sign-in-token').value.trim() });
    hello();
    render();
  });
  $('sign-out').addEventListener('click', () => {
    forgetAccount();
    page.state.account = null;
    $('name').value = guestName();
    hello();
    render();
  });
}

/** The home screen: a quick match, a room, the house (each on the clock picked), a room code, who is online and a challenge. */
function wireHome() {
  $('size').addEventListener('change', () => fillWins());
  wirePicker();
  $('start').addEventListener('submit', (e) => {
    e.preventDefault();
    start({ type: 'quick_match', ...rules() });
  });
  $('create').addEventListener('click', () => start({ type: 'create_room', ...rules() }));
  $('house').addEventListener('click', () => start({ type: 'play_house', ...rules(), level: $('level').value }));
  const typedRoom = () => $('room-code').value.trim().toUpperCase();
  const joinTyped = () => {
    const room = typedRoom();
    if (!room) return;
    page.invite = room; // a full room is watched instead
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
  $('take-seat').addEventListener('click', () => send({ type: 'join_room', room: page.state.room }));
  $('room-back').addEventListener('click', () => {
    send({ type: 'leave' });
    home();
  });
  $('who-refresh').addEventListener('click', () => send({ type: 'who' }));
  $('who').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-challenge]');
    if (!b) return;
    const { size, win } = rules();
    start({ type: 'challenge', name: b.dataset.challenge, size, win });
  });
  $('offer-accept').addEventListener('click', () => page.state.offer && send({ type: 'accept', challenge: page.state.offer.id }));
  $('offer-decline').addEventListener('click', () => {
    if (!page.state.offer) return;
    send({ type: 'decline', challenge: page.state.offer.id });
    page.state.offer = null;
    render();
  });
  $('cancel').addEventListener('click', () => {
    send({ type: 'leave' });
    page.state.screen = 'home';
    render();
  });
  $('gone-new').addEventListener('click', () => start({ type: 'quick_match', ...rules() }));
}

/** The game screen: rematch, resign (asked twice), leave, a new game, and the board by mouse or keys. */
function wireGame() {
  $('rematch').addEventListener('click', () => {
    if (send({ type: 'rematch' })) page.state.note = 'Rematch asked; waiting for your opponent.';
    render();
  });
  $('resign').addEventListener('click', () => {
    if (page.resignArmed) {
      clearTimeout(page.resignArmed);
      page.resignArmed = null;
      send({ type: 'resign' });
      return;
    }
    $('resign').textContent = 'Really resign? Click again';
    page.resignArmed = setTimeout(() => {
      page.resignArmed = null;
      render();
    }, 3000);
  });
  $('leave').addEventListener('click', () => {
    send({ type: 'leave' });
    home();
  });
  // A new game on the board and clock just played: the house again after
  // the house, else a quick match (as the terminal's `n`); the finished
  // room is left.
  $('new-game').addEventListener('click', () => {
    const { size, win, clock } = page.state;
    const house = result.againstHouse(page.state);
    home();
    const msg = house ? { type: 'play_house', size, win, level: $('level').value } : { type: 'quick_match', size, win };
    send(clock ? { ...msg, clock } : msg);
  });
  $('board').addEventListener('click', (e) => {
    const b = e.target.closest('button.cell');
    if (b) playAt(Number(b.dataset.row), Number(b.dataset.col));
  });
  $('board').addEventListener('keydown', (e) => {
    if (!e.key.startsWith('Arrow')) return;
    e.preventDefault();
    page.focus = step(page.focus, e.key, page.state.size);
    renderBoard();
    cellButton(...page.focus)?.focus();
  });
}

/** Wires every control of the page, and the timers that keep it current. */
export function wire() {
  wireAccount();
  wireHome();
  wireGame();
  wireTournaments();
  $('board-pick').addEventListener('submit', (e) => {
    e.preventDefault();
    route();
  });
  window.addEventListener('hashchange', route);
  window.addEventListener('resize', () => {
    if (view().what === 'play' && page.state.screen === 'game') renderBoard();
  });
  // Who is online changes by itself: while the home screen is in sight it
  // asks again every 2 s, so that the list is never more than that behind.
  setInterval(() => {
    const looking = view().what === 'play' && page.state.screen === 'home' && document.visibilityState === 'visible';
    if (looking && open()) send({ type: 'who' });
  }, 2000);
}
