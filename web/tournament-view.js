// The tournaments' screens drawn from the page's state (tournament.js folds
// it, tournament.js says it): the list with the create form, and one
// tournament's page — its terms, the time to its start or end, the Join /
// Pause button, our last game, the standings table (drawn again whenever
// they change) and its games. Text only: names are never markup.
import { $ } from './page.js';
import { el, playerLink, table } from './records.js';
import {
  joinButton, standingRows, termsText, timeText,
} from './tournament.js';

/** What the standings table was last drawn from, so that a tick of the clock does not draw it again. */
let drawn = '';

/** A tournament's name, linking to its page. */
function tournamentLink(t) {
  return el('a', t.name, { href: `#/tournaments/${encodeURIComponent(t.id)}` });
}

/** The list of tournaments and the create form (for an account) at `nowMs` (Unix ms). */
export function paintList(tour, signedIn, nowMs) {
  const rows = tour.list.map((t) => {
    const { word, left } = timeText(t, nowMs);
    return [tournamentLink(t), termsText(t), word, String(t.players), left, t.created_by];
  });
  $('t-list').replaceChildren(rows.length
    ? table(['tournament', 'terms', 'status', 'players', 'time', 'by'], rows)
    : el('p', 'No tournament is starting or running now: create one.'));
  $('t-guest').hidden = signedIn;
  $('t-create').hidden = !signedIn;
  $('t-create-note').textContent = tour.note;
  $('t-create-note').classList.toggle('error', tour.noteKind === 'error');
}

/** The standings table of `tour`'s tournament; our own row (`me`) is marked. */
function standingsTable(tour, me) {
  const rows = standingRows(tour.view, me);
  if (!rows.length) return el('p', 'Nobody has joined yet.');
  const t = table(
    ['#', 'player', 'score', 'games', 'streak', 'results', 'performance', ''],
    rows.map((r) => [r.rank, playerLink(r.name), r.score, r.games, r.streak, r.results, r.performance, r.paused]),
  );
  t.className = 'standings';
  t.setAttribute('aria-label', 'Standings');
  rows.forEach((r, i) => {
    const tr = t.tBodies[0].rows[i];
    tr.dataset.name = r.name;
    if (r.me) tr.classList.add('me');
    if (r.streak) tr.cells[4].title = 'on a streak: a win scores 4, a draw 2';
  });
  return t;
}

/** The tournament's games, newest first, each a link to its replay. */
function gameLinks(view) {
  if (!view.games.length) return [];
  const list = el('ol', undefined, { className: 'games', reversed: true });
  for (const [i, id] of view.games.entries()) {
    const li = el('li');
    li.append(el('a', `game ${i + 1}`, { href: `#/games/${encodeURIComponent(id)}` }));
    list.prepend(li);
  }
  return [el('h3', 'Games'), list];
}

/** Our last game of this tournament, in words, with its replay. */
function paintLast(tour) {
  const last = tour.last?.tournament === tour.id ? tour.last : null;
  $('t-last').hidden = !last;
  if (!last) return;
  const words = `Your last game: ${last.headline}${last.how ? ` — ${last.how}` : ''}.${last.note ? ` ${last.note}` : ''}`;
  const parts = [words];
  if (last.game) parts.push(' ', el('a', 'replay', { href: `#/games/${encodeURIComponent(last.game)}` }));
  $('t-last').replaceChildren(...parts);
}

/** The page of the tournament looked at, for `me` (the account's name, or null) at `nowMs` (Unix ms). */
export function paintPage(tour, me, nowMs) {
  const t = tour.view;
  $('t-title').textContent = t ? t.name : 'Tournament';
  $('t-terms').textContent = t ? `${termsText(t)}; created by ${t.created_by}` : '';
  const time = t ? timeText(t, nowMs) : null;
  const loading = tour.note ? '' : 'Loading…';
  $('t-time').textContent = time ? `${time.word}: ${time.left}. ${t.players} player${t.players === 1 ? '' : 's'}.` : loading;
  const button = joinButton(tour, me);
  $('t-join').hidden = !button;
  $('t-join').textContent = button?.label ?? 'Join';
  $('t-join').disabled = !!tour.joining;
  $('t-hint').textContent = button?.hint ?? '';
  $('t-note').textContent = tour.note;
  $('t-note').classList.toggle('error', tour.noteKind === 'error');
  paintLast(tour);
  const key = JSON.stringify([t, me]);
  if (key === drawn) return;
  drawn = key;
  $('t-standings').replaceChildren(...(t ? [standingsTable(tour, me)] : []));
  $('t-games').replaceChildren(...(t ? gameLinks(t) : []));
}
