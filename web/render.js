// Draws the page from its state (page.js): the view the address asks for,
// the home, room, waiting and game screens, who is online, the account and
// the connection's banner. Text only: names are never markup.
import * as board from './board.js';
import * as fischer from './fischer.js';
import * as game from './game.js';
import * as invites from './invite.js';
import * as records from './records.js';
import * as result from './result.js';
import * as tournaments from './tournament-view.js';
import { $, now, page } from './page.js';
import { account } from './saved.js';
import { clockLeft, myTurn, sizes } from './state.js';
import { canBerserk } from './tournament.js';
import { boardName, shown, statusText } from './words.js';

/** The name this tab plays as: the account's, else the one typed. */
export function myName() {
  return account()?.name ?? $('name').value.trim();
}

/** The account's name signed in on this connection, or null for a guest. */
export function me() {
  return page.state.account?.name ?? null;
}

/**
 * The view the address asks for: play (default), account, leaderboard, a
 * profile, a replay, the tournaments or one tournament.
 */
export function view() {
  const [, what, arg] = location.hash.split('/');
  if (what === 'account' || what === 'leaderboard') return { what };
  if (what === 'tournaments') return arg ? { what: 'tournament', arg: decodeURIComponent(arg) } : { what };
  if ((what === 'players' || what === 'games') && arg) return { what, arg: decodeURIComponent(arg) };
  return { what: 'play' };
}

/** Shows the view the address asks for, fetching the records it shows. */
export function route() {
  const v = view();
  if (v.what === 'leaderboard') records.leaderboard($('leaderboard-out'), Number($('lb-size').value), Number($('lb-win').value));
  if (v.what === 'players') records.profile($('profile-out'), v.arg);
  if (v.what === 'games') records.replay($('replay-out'), v.arg);
  render();
}

/** The size menus (a game's and a tournament's) offer every board the server plays (its `welcome` limits). */
export function fillSizes() {
  const size = $('size');
  if (size.options.length) return;
  const all = sizes(page.state.limits);
  for (const [sizeId, winId] of [['size', 'win'], ['t-size', 't-win']]) {
    for (const n of all) $(sizeId).add(new Option(`${n}×${n}`, String(n)));
    $(sizeId).value = all.includes(3) ? '3' : String(all[0]);
    fillWins(sizeId, winId);
  }
  $('smallest').textContent = size.options[0].text;
  $('largest').textContent = size.options[size.options.length - 1].text;
  for (const id of ['lb-size', 'lb-win']) {
    $(id).min = String(all[0]);
    $(id).max = String(all[all.length - 1]);
  }
}

/** The win lengths the board chosen in menu `sizeId` allows, into menu `winId`, a whole line chosen. */
export function fillWins(sizeId = 'size', winId = 'win') {
  const n = Number($(sizeId).value);
  const win = $(winId);
  win.replaceChildren();
  for (let k = Math.min(3, n); k <= n; k++) win.add(new Option(k === n ? `${k} (a whole line)` : String(k), String(k)));
  win.value = String(n);
}

/** The board chosen in the home screen's menus: `{ size, win }`. */
export function rules() {
  return { size: Number($('size').value), win: Number($('win').value) };
}

/** Lays the board out afresh for the game's size. */
export function buildBoard() {
  board.build($('board'), page.state.size);
}

/** The board's button for cell (`r`, `c`). */
export function cellButton(r, c) {
  return $('board').querySelector(`button[data-row="${r}"][data-col="${c}"]`);
}

/** Sizes and paints the board. */
export function renderBoard() {
  game.fit(page.state);
  board.paint($('board'), page.state, page.focus);
}

/** Redraws the clocks while one runs (every 100 ms, for tenths); null while none does. */
let ticker = null;

/** Whether a clock on screen runs: a Fischer clock, or the per-move timer while not paused. */
function running(state) {
  const perMove = state.screen === 'game' && !state.over && !state.paused && clockLeft(state, now()) !== null;
  return fischer.ticks(state) || perMove;
}

/** The clocks as they stand now: the per-move timer and both Fischer clocks; kept ticking while one runs. */
export function renderClock() {
  game.clock(page.state, now());
  game.faces(page.state, now());
  const runs = running(page.state);
  if (runs && !ticker) ticker = setInterval(renderClock, 100);
  if (!runs && ticker) {
    clearInterval(ticker);
    ticker = null;
  }
}

/** Who is online, each with a Play or Challenge button (its `data-challenge` names whom) unless it is us or busy. */
function renderWho() {
  const list = $('who');
  const items = page.state.online.map((p) => {
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
      b.dataset.challenge = p.name;
      li.append(b);
    }
    return li;
  });
  list.replaceChildren(...items);
}

/** Draws the whole page from its state. */
export function render() {
  const { state, down, back } = page;
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
  $('tournaments').hidden = v !== 'tournaments';
  $('tournament').hidden = v !== 'tournament';
  if (v === 'tournaments') tournaments.paintList(page.tour, !!me(), Date.now());
  if (v === 'tournament') tournaments.paintPage(page.tour, me(), Date.now());
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
  if (offer) {
    const clock = offer.clock ? `, ${fischer.label(offer.clock)}` : '';
    $('offer-text').textContent = `${offer.from} challenges you to ${boardName(offer.size, offer.win)}${clock}.`;
  }
  $('waiting-text').textContent = state.note;
  $('home-note').textContent = state.screen === 'home' ? state.note : '';
  $('gone').hidden = !(play && state.screen === 'home' && state.gone);
  if (state.gone) $('gone-text').textContent = `No room has the code ${state.gone}. It may have closed, or the code may be mistyped.`;
  for (const id of ['home-note', 'note', 'account-note']) $(id).classList.toggle('error', state.noteKind === 'error');
  if (state.screen === 'room') {
    const waiting = state.players[0] ? shown(state.players[0]) : 'Nobody';
    const seats = state.reserved ? ` Its seats are kept for ${state.reserved[0]} (X) and ${state.reserved[1]} (O).` : '';
    $('room-text').textContent = (state.host
      ? `${state.host} organises room ${state.room} on ${boardName(state.size, state.win)}.${seats}`
      : `${waiting} is waiting in room ${state.room} for an opponent on ${boardName(state.size, state.win)}.`)
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
    $('berserk').hidden = !seated || !state.tournament || !!state.over;
    $('berserk').disabled = !canBerserk(state);
    if (!page.resignArmed) $('resign').textContent = 'Resign';
  }
  renderClock();
}
