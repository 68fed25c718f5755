// The records views, from the server's HTTP API: a leaderboard per board,
// a player's profile and recent games, and a step-by-step replay of any
// game (with each side's time after each move, for a game on a Fischer
// clock). Everything shown is text; names link to profiles.
import * as board from './board.js';
import * as fischer from './fischer.js';
import { apply, initial } from './state.js';
import {
  boardName, cellName, count, ending, shown,
} from './words.js';

async function api(path) {
  const resp = await fetch(path);
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(body.error ?? `the server answered ${resp.status}`);
  return body;
}

/** A new element `tag` with `text` (as text) and `props`. */
export function el(tag, text, props = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return Object.assign(node, props);
}

/** A link to `name`'s profile. */
export function playerLink(name, label = name) {
  return el('a', label, { href: `#/players/${encodeURIComponent(name)}` });
}

/** A table with the column headings `head` and `rows` of cells (text, numbers or elements). */
export function table(head, rows) {
  const t = el('table');
  const tr = el('tr');
  for (const h of head) tr.append(el('th', h, { scope: 'col' }));
  t.append(el('thead'), el('tbody'));
  t.tHead.append(tr);
  for (const cells of rows) {
    const row = el('tr');
    for (const c of cells) {
      const td = el('td');
      td.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
      row.append(td);
    }
    t.tBodies[0].append(row);
  }
  return t;
}

/** The leaderboard of the `size`/`win` pool into `out`. */
export async function leaderboard(out, size, win) {
  try {
    const b = await api(`/api/leaderboard?size=${size}&win=${win}&limit=50`);
    const rows = b.players.map((p, i) => [i + 1, playerLink(p.name, p.name + (p.bot ? ' (bot)' : '')), p.rating, p.games]);
    out.replaceChildren(
      el('h3', `Best on ${boardName(b.size, b.win)}`),
      rows.length ? table(['#', 'player', 'rating', 'games'], rows) : el('p', 'No rated games on this board yet.'),
    );
  } catch (e) {
    out.replaceChildren(el('p', e.message));
  }
}

/** A time from the records (RFC 3339, UTC) in the reader's own time zone. */
export function localTime(when) {
  const t = new Date(when);
  return Number.isNaN(t.getTime()) ? String(when ?? '') : t.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

/** A game's line in a list: who played whom, how it ended, when, and a replay link. */
function gameRow(g) {
  const [x, o] = g.players;
  return [
    `${x.name} – ${o.name}`,
    boardName(g.size, g.win),
    ending(g),
    localTime(g.ended_at),
    g.rated ? 'rated' : '',
    el('a', 'replay', { href: `#/games/${encodeURIComponent(g.id)}` }),
  ];
}

/** A player's profile and recent games into `out`. */
export async function profile(out, name) {
  try {
    const p = await api(`/api/players/${encodeURIComponent(name)}`);
    const { games } = await api(`/api/players/${encodeURIComponent(name)}/games?limit=20`);
    const pools = Object.entries(p.ratings).map(([pool, r]) => [pool, r.rating, r.games]);
    const { wins, draws, losses } = p.results;
    out.replaceChildren(
      el('h3', p.name + (p.bot ? ' (bot)' : '')),
      el('p', `${count(wins, 'win', 'wins')}, ${count(draws, 'draw', 'draws')}, ${count(losses, 'loss', 'losses')}`),
      el('p', `Registered ${localTime(p.created_at)}.`, { className: 'hint' }),
      pools.length ? table(['board', 'rating', 'games'], pools) : el('p', 'No rated games yet.'),
      el('h4', 'Recent games'),
      games.length ? table(['players', 'board', 'result', 'ended', '', ''], games.map(gameRow)) : el('p', 'No games yet.'),
    );
  } catch (e) {
    out.replaceChildren(el('p', e.message));
  }
}

/** The replay on screen, for the arrow keys: its output element and how to move through it. */
let current = null;

// ← and → step through the replay on screen, Home and End go to its start and end.
document.addEventListener('keydown', (e) => {
  if (!current || !current.out.isConnected || current.out.closest('[hidden]')) return;
  if (e.target instanceof Element && e.target.closest('input, select, textarea')) return;
  const to = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  current.go(to);
});

/** A recorded game, step by step from its first move, into `out`, with its move list beside the board. */
export async function replay(out, id) {
  let game;
  try {
    game = await api(`/api/games/${encodeURIComponent(id)}`);
  } catch (e) {
    out.replaceChildren(el('p', e.message));
    return;
  }
  const total = game.moves.length;
  const grid = el('div', undefined, { className: 'board' });
  const wrap = el('div', undefined, { className: 'board-wrap' });
  wrap.append(grid);
  const where = el('p', '', { role: 'status' });
  const times = el('p', '', { className: 'replay-clocks' });
  times.hidden = !game.clock;
  const buttons = ['First', 'Back', 'Forward', 'Last'].map((t) => el('button', t, { type: 'button' }));
  // Each move in the list jumps to the position after it.
  const list = el('ol', undefined, { className: 'moves' });
  list.setAttribute('aria-label', 'Moves');
  const jumps = game.moves.map(([r, c], i) => el('button', cellName(r, c), { type: 'button', onclick: () => go(i + 1 - at) }));
  for (let i = 0; i < jumps.length; i += 2) {
    const li = el('li');
    li.append(jumps[i], ...(jumps[i + 1] ? [jumps[i + 1]] : []));
    list.append(li);
  }
  let at = 0;
  const show = () => {
    let s = apply(initial(), {
      type: 'state', room: game.room, size: game.size, win: game.win, board: [], moves: game.moves.slice(0, at),
      turn: null, players: game.players, you: null, clock_ms: null,
    });
    if (at === total && game.line) s = { ...s, line: game.line.cells };
    // The move list stands beside the board on wide screens, under it on narrow ones.
    const room = out.getBoundingClientRect();
    const wide = window.matchMedia('(min-width: 52rem)').matches;
    board.fit(grid, game.size, room.width - (wide ? 20 * 16 : 16), window.innerHeight - room.top - 140);
    board.paint(grid, s);
    where.textContent = at === total ? `Move ${at} of ${total}: ${ending(game)}.` : `Move ${at} of ${total}.`;
    if (game.clock) {
      const [x, o] = fischer.recorded(game, at).map(fischer.face);
      times.textContent = `Time left: X ${x}, O ${o}`;
    }
    jumps.forEach((b, i) => (i + 1 === at ? b.setAttribute('aria-current', 'step') : b.removeAttribute('aria-current')));
  };
  function go(delta) {
    at = Math.max(0, Math.min(total, at + delta));
    show();
  }
  const [first, back, forward, last] = buttons;
  first.onclick = () => go(-Infinity);
  back.onclick = () => go(-1);
  forward.onclick = () => go(1);
  last.onclick = () => go(Infinity);
  const actions = el('div', undefined, { className: 'actions' });
  actions.append(...buttons, el('span', '← → step through the moves', { className: 'hint' }));
  const side = el('div');
  side.append(where, times, actions, list);
  const layout = el('div', undefined, { className: 'replay-grid' });
  layout.append(wrap, side);
  const clock = game.clock ? `, ${fischer.label(game.clock)}` : '';
  out.replaceChildren(
    el('h3', `${shown(game.players[0])} (X) – ${shown(game.players[1])} (O), ${boardName(game.size, game.win)}${clock}`),
    layout,
  );
  current = { out, go };
  show();
}
