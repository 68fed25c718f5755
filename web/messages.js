// What the page does on each server message besides folding it into its
// state (state.js): says hello once welcomed and takes the tab's seat back,
// keeps the seat and the account in the browser, looks at a room opened
// through its link, looks up how a game that ended while we were away
// ended, and follows the tournaments (their pages, and our tournament
// games opening by themselves and going back to the tournament after).
import { $, now, page } from './page.js';
import {
  buildBoard, fillSizes, me, myName, render, view,
} from './render.js';
import { account, forgetAccount, forgetSeat, keepAccount, keepSeat, savedSeat } from './saved.js';
import { send, sendEarly, url, welcomed } from './socket.js';
import { apply } from './state.js';
import { applyTour, lastGame } from './tournament.js';
import { backToTournament, rejoin, remember } from './tournament-controls.js';
import { outcome } from './words.js';

/** `hello` as the account signed in, or as a guest with the name typed. */
export function hello() {
  const saved = account();
  send(saved ? { type: 'hello', name: saved.name, token: saved.token } : { type: 'hello', name: myName() });
}

/** Takes in one message from the server, and draws the page again. */
export function handle(msg) {
  page.state = apply(page.state, msg, now());
  page.tour = applyTour(page.tour, msg, me());
  switch (msg.type) {
    case 'welcome': {
      welcomed();
      fillSizes();
      hello();
      const seat = savedSeat();
      if (seat) send({ type: 'resume', token: seat.token });
      else if (page.invite) peek(page.invite);
      send({ type: 'who' });
      rejoin();
      sendEarly();
      break;
    }
    case 'registered':
      keepAccount({ name: msg.name, token: msg.token });
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
      keepSeat(msg.resume_token, msg.you);
      page.focus = [Math.floor(msg.size / 2), Math.floor(msg.size / 2)];
      buildBoard();
      break;
    case 'state':
      buildBoard();
      break;
    case 'room_created':
      if (view().what !== 'play') location.hash = '#/';
      break;
    case 'game_over':
      forgetSeat();
      if (page.state.tournament) page.tour.last = lastGame(page.state, outcome(page.state), msg.game_id);
      break;
    case 'error':
      refused(msg);
      remember();
      break;
    case 'room_closed':
      page.invite = null;
      // A tournament game's room closes after its one game: back to the tournament, for the next pairing.
      if (page.state.tournament && page.state.you !== null && msg.room === page.state.room) backToTournament();
      break;
    case 'tournament':
      if (page.tour.created === msg.id) location.hash = `#/tournaments/${encodeURIComponent(msg.id)}`;
      break;
    case 'tournament_update':
      remember();
      break;
    default:
  }
  render();
}

/** What a refusal changes besides the note it leaves. */
function refused(msg) {
  if (view().what === 'account') $('account-note').textContent = msg.message;
  if (msg.code === 'auth_failed' && account()) {
    // The saved account is not this server's (or no longer): a guest again.
    forgetAccount();
    page.state.account = null;
  } else if (msg.code === 'invalid_token') {
    // The seat is gone (its game ended while we were away): say how it
    // ended when the server names the game, else start over.
    const you = savedSeat()?.you;
    forgetSeat();
    if (page.state.ended) lookUp(page.state.ended, you);
    else if (page.invite) peek(page.invite);
  } else if (msg.code === 'room_full' && page.invite) {
    // Someone took the seat first: watch their game instead.
    send({ type: 'spectate', room: page.invite });
  } else if (msg.code === 'room_not_found' && page.invite) {
    page.state.gone = page.invite;
    page.state.note = '';
    page.invite = null;
    history.replaceState(null, '', '/');
    page.state.screen = 'home';
  }
}

/** Shows our game `id` (we had seat `you`) as its record tells it: it ended while we were away. */
async function lookUp(id, you) {
  try {
    const resp = await fetch(`/api/games/${encodeURIComponent(id)}`);
    if (!resp.ok) throw new Error(String(resp.status));
    page.state = apply(page.state, { type: 'record', game: await resp.json(), you }, now());
    buildBoard();
  } catch {
    page.state.ended = null;
    page.state.note = 'Your last game ended while you were away.';
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
    else handle(msg);
  });
}
