// What the user does on the tournaments' screens and what the page asks the
// server for them: the list (asked again every 5 s while in sight), a
// tournament's page (watched, so its standings come live), the create form
// with its clock picker, Join / Pause, Berserk in a tournament game, and
// the way back to the tournament once a tournament game's room closes.
import { $, page } from './page.js';
import { picked, wirePicker } from './picker.js';
import { fillWins, render, view } from './render.js';
import { forgetSeat, forgetTournament, keepTournament, savedTournament } from './saved.js';
import { open, send } from './socket.js';
import { initial } from './state.js';
import {
  canBerserk, joining, leaving, lookAt,
} from './tournament.js';

/** The tournament form's clock picker: its menu, custom boxes and their span. */
const PICKER = { pick: 't-clock', minutes: 't-clock-minutes', increment: 't-clock-increment', box: 't-custom-clock' };

/** How often the list is asked for again while in sight, in ms. */
const LIST_EVERY = 5000;

/**
 * Asks for what the view in sight shows: the list, or the tournament
 * looked at (watched; joining it already sends its standings).
 */
export function ask() {
  const v = view();
  if (v.what === 'tournament') page.tour = lookAt(page.tour, v.arg);
  if (!open()) return; // asked again once welcomed
  if (v.what === 'tournaments') send({ type: 'tournaments' });
  if (v.what === 'tournament' && page.tour.joined !== v.arg && page.tour.joining !== v.arg) {
    send({ type: 'tournament_watch', id: v.arg });
  }
}

/** Joins tournament `id` (its answer, an update or a refusal, says whether we are in). */
function join(id) {
  page.tour = joining(page.tour, id);
  send({ type: 'tournament_join', id });
}

/**
 * The connection is (again) welcomed and said hello: the tournament this
 * tab plays in is joined again (the server pauses a player whose
 * connection went), and the view in sight is asked for.
 */
export function rejoin() {
  const id = savedTournament();
  if (id) join(id);
  ask();
}

/** Keeps in the tab whether it plays in a tournament, after the server said so. */
export function remember() {
  if (page.tour.joined) keepTournament(page.tour.joined);
  else if (!page.tour.joining) forgetTournament();
}

/**
 * Our tournament game's room closed after its one game: back to the
 * tournament's page (it says how the game went), to wait for the next pairing.
 */
export function backToTournament() {
  const id = page.state.tournament;
  forgetSeat();
  page.state = { ...initial(), limits: page.state.limits, online: page.state.online, account: page.state.account };
  location.hash = `#/tournaments/${encodeURIComponent(id)}`;
}

/** The create form: the terms typed, the clock picked; a clock out of range is said, and nothing sent. */
function create(e) {
  e.preventDefault();
  const p = picked(PICKER);
  if (p.error) {
    page.tour.note = p.error;
    page.tour.noteKind = 'error';
    render();
    return;
  }
  const ms = (id) => Math.round(Number($(id).value) * 60000);
  send({
    type: 'tournament_create',
    name: $('t-name').value.trim(),
    size: Number($('t-size').value),
    win: Number($('t-win').value),
    clock: p.clock,
    duration_ms: ms('t-duration'),
    starts_in_ms: ms('t-starts'),
  });
}

/** Wires the tournaments' screens, Berserk, and the timers that keep their times and list current. */
export function wireTournaments() {
  $('t-size').addEventListener('change', () => fillWins('t-size', 't-win'));
  // The game picker's clocks, but for the per-move timer: a tournament plays on a Fischer clock.
  for (const o of $('time-control').options) if (o.value !== 'per-move') $('t-clock').add(new Option(o.text, o.value));
  wirePicker(PICKER);
  $('t-create').addEventListener('submit', create);
  $('t-join').addEventListener('click', () => {
    const { id, joined } = page.tour;
    if (!id) return;
    if (joined === id) {
      send({ type: 'tournament_leave', id });
      page.tour = leaving(page.tour, id);
      forgetTournament();
    } else {
      join(id);
    }
    render();
  });
  $('berserk').addEventListener('click', () => {
    if (canBerserk(page.state)) send({ type: 'berserk' });
  });
  window.addEventListener('hashchange', ask);
  // The time to a tournament's start or end counts down each second; the
  // list (other people's tournaments come and go) is asked for every 5 s.
  let ticks = 0;
  setInterval(() => {
    const v = view().what;
    if (v !== 'tournaments' && v !== 'tournament') return;
    ticks += 1;
    if (v === 'tournaments' && ticks % (LIST_EVERY / 1000) === 0 && open()) send({ type: 'tournaments' });
    render();
  }, 1000);
}
