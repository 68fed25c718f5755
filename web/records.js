// The records views, from the server's HTTP API: a leaderboard per board,
// a player's profile and recent games, and a step-by-step replay of any
// game. Everything shown is text; names link to profiles.
import * as board from './board.js';
import { apply, boardName, initial, shown } from './state.js';

async function api(path) {
  const resp = await fetch(path);
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(body.error ?? `the server answered ${resp.status}`);
  return body;
}

function el(tag, text, props = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return Object.assign(node, props);
}

function playerLink(name, label = name) {
  return el('a', label, { href: `#/players/${encodeURIComponent(name)}` });
}

function table(head, rows) {
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

/** A game's line in a list: who played whom, how it ended, and a replay link. */
function gameRow(g) {
  const [x, o] = g.players;
  const result = g.winner === 0 ? 'draw' : `${g.players[g.winner - 1].name} won`;
  return [
    `${x.name} – ${o.name}`,
    boardName(g.size, g.win),
    `${result} (${g.reason})`,
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
      el('p', `${wins} wins, ${draws} draws, ${losses} losses`),
      pools.length ? table(['board', 'rating', 'games'], pools) : el('p', 'No rated games yet.'),
      el('h4', 'Recent games'),
      games.length ? table(['players', 'board', 'result', '', ''], games.map(gameRow)) : el('p', 'No games yet.'),
    );
  } catch (e) {
    out.replaceChildren(el('p', e.message));
  }
}

/** A recorded game, step by step, into `out`. */
export async function replay(out, id) {
  let game;
  try {
    game = await api(`/api/games/${encodeURIComponent(id)}`);
  } catch (e) {
    out.replaceChildren(el('p', e.message));
    return;
  }
  const grid = el('div', undefined, { className: 'board' });
  const wrap = el('div', undefined, { className: 'board-wrap' });
  wrap.append(grid);
  const where = el('p', '', { role: 'status' });
  const buttons = ['First', 'Back', 'Forward', 'Last'].map((t) => el('button', t, { type: 'button' }));
  let at = game.moves.length;
  const show = () => {
    let s = apply(initial(), {
      type: 'state', room: game.room, size: game.size, win: game.win, board: [], moves: game.moves.slice(0, at),
      turn: null, players: game.players, you: null, clock_ms: null,
    });
    if (at === game.moves.length && game.line) s = { ...s, line: game.line.cells };
    board.paint(grid, s);
    const end = game.winner === 0 ? 'a draw' : `${game.players[game.winner - 1].name} won (${game.reason})`;
    where.textContent = at === game.moves.length ? `Move ${at} of ${game.moves.length}: ${end}.` : `Move ${at} of ${game.moves.length}.`;
  };
  const [first, back, forward, last] = buttons;
  first.onclick = () => { at = 0; show(); };
  back.onclick = () => { at = Math.max(0, at - 1); show(); };
  forward.onclick = () => { at = Math.min(game.moves.length, at + 1); show(); };
  last.onclick = () => { at = game.moves.length; show(); };
  const actions = el('div', undefined, { className: 'actions' });
  actions.append(...buttons);
  out.replaceChildren(
    el('h3', `${shown(game.players[0])} (X) – ${shown(game.players[1])} (O), ${boardName(game.size, game.win)}`),
    wrap, where, actions,
  );
  show();
}
