// Arena tournaments as the page keeps and says them: the list, the one
// tournament looked at with its standings (folded from `tournaments`,
// `tournament` and every `tournament_update`), our last tournament game, and
// the words for all of it (terms, time left, the standings' rows, refusals,
// the Join / Pause button, berserk). Pure functions, no DOM and no socket:
// `node --test` checks them.
import * as fischer from './fischer.js';
import { boardName } from './words.js';

/** The refusals that belong to the tournament pages, not to a game. */
const CODES = ['account_required', 'tournament_not_found', 'tournament_finished', 'invalid_tournament'];

/** Nothing known of any tournament yet. */
export function initialTour() {
  return {
    list: [], // summaries (`tournaments`), newest first
    id: null, // the tournament looked at (#/tournaments/ID)
    view: null, // its TournamentView: terms, status, standings, games
    joining: null, // the tournament this tab asked to join, until the answer
    joined: null, // the tournament this tab plays in (joined, not paused), by id
    created: null, // the id of the tournament we just created: its page opens
    note: '',
    noteKind: '', // 'error' for a refusal
    last: null, // our last tournament game: { tournament, headline, how, note, game }
  };
}

/** The fields of a tournament's summary: a list's entry, or the head of an update. */
const SUMMARY = ['id', 'name', 'created_by', 'size', 'win', 'clock', 'duration_ms', 'starts_at', 'ends_at', 'status', 'players'];

/** A tournament's summary, the same whether a list or an update told it. */
function summary(msg) {
  return Object.fromEntries(SUMMARY.map((k) => [k, msg[k]]));
}

/** `list` with `s` in place of the summary of the same id (or first, when new). */
function upsert(list, s) {
  const at = list.findIndex((t) => t.id === s.id);
  if (at < 0) return [s, ...list];
  return list.map((t, i) => (i === at ? s : t));
}

/**
 * Folds one server message into the tournaments' state `prev` (a copy is
 * returned). `me` is the account's name signed in, or null for a guest:
 * our row of the standings says whether a join took and whether we are
 * paused (the server pauses a player whose connection is gone).
 */
export function applyTour(prev, msg, me = null) {
  const tour = structuredClone(prev);
  switch (msg.type) {
    case 'tournaments':
      tour.list = msg.tournaments.map(summary);
      break;
    case 'tournament':
      tour.list = upsert(tour.list, summary(msg));
      tour.created = msg.id;
      tour.note = '';
      break;
    case 'tournament_update': {
      tour.list = upsert(tour.list, summary(msg));
      if (![tour.id, tour.joining, tour.joined].includes(msg.id)) break;
      if (msg.id === tour.id) tour.view = { ...summary(msg), standings: msg.standings, games: msg.games };
      const row = me === null ? null : msg.standings.find((s) => s.name === me);
      const playing = !!row && !row.paused && msg.status !== 'finished';
      if (tour.joining === msg.id) {
        tour.joining = null;
        if (playing) tour.joined = msg.id;
      } else if (tour.joined === msg.id && !playing) {
        tour.joined = null;
      }
      break;
    }
    case 'error':
      // A refusal of our join (its `id` is the tournament's) is the page's whatever its code (`busy`: in another one).
      if (!CODES.includes(msg.code) && (msg.id === undefined || msg.id !== tour.joining)) break;
      tour.note = tourRefusal(msg);
      tour.noteKind = 'error';
      if (tour.joining === msg.id) tour.joining = null;
      if (msg.code === 'tournament_finished' && tour.joined === msg.id) tour.joined = null;
      break;
    default:
  }
  return tour;
}

/** Looks at tournament `id` (its page opened): its standings come with the next update. */
export function lookAt(prev, id) {
  const tour = structuredClone(prev);
  if (tour.id !== id) {
    tour.id = id;
    tour.view = null;
    tour.note = '';
    tour.noteKind = '';
  }
  return tour;
}

/** We ask to join tournament `id` (`tournament_join`): its answer says whether we are in. */
export function joining(prev, id) {
  return { ...structuredClone(prev), joining: id, note: '', noteKind: '' };
}

/** We pause in tournament `id` (`tournament_leave`): not paired until we join again. */
export function leaving(prev, id) {
  const tour = structuredClone(prev);
  if (tour.joined === id) tour.joined = null;
  return tour;
}

/** A tournament refusal as a player would say it. */
export function tourRefusal(msg) {
  return {
    account_required: 'Sign in to play in tournaments: guests can watch, accounts play.',
    tournament_not_found: 'No tournament has that id: it may be mistyped.',
    tournament_finished: 'This tournament is over: it takes no more players.',
  }[msg.code] ?? msg.message;
}

/** A span of time as a countdown says it: `0:45`, `12:03`, `1:00:00`. */
export function span(ms) {
  const secs = Math.max(0, Math.ceil(ms / 1000));
  const [h, m, s] = [Math.floor(secs / 3600), Math.floor(secs / 60) % 60, secs % 60];
  const pad = (n) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** What every game plays and for how long: `3×3, 1+0, 5 min`. */
export function termsText(t) {
  const minutes = Number((t.duration_ms / 60000).toFixed(2));
  return `${boardName(t.size, t.win)}, ${fischer.label(t.clock)}, ${minutes} min`;
}

/**
 * Where tournament `t` is at `nowMs` (Unix ms, the browser's clock): its
 * status in a word and the time to its start or end, `{ word, left }`.
 */
export function timeText(t, nowMs) {
  if (t.status === 'starting') return { word: 'Starting', left: `starts in ${span(t.starts_at - nowMs)}` };
  if (t.status === 'running') return { word: 'Running', left: `ends in ${span(t.ends_at - nowMs)}` };
  return { word: 'Finished', left: 'no new games (those still being played count)' };
}

/**
 * The standings as the table shows them, one row per player: rank, name,
 * score, games, 🔥 when on a streak, each counted game's points, the
 * performance (– before a game), `paused`, and whether the row is `me`.
 */
export function standingRows(view, me = null) {
  return (view?.standings ?? []).map((s) => ({
    rank: String(s.rank),
    name: s.name,
    score: String(s.score),
    games: String(s.games),
    streak: s.streak ? '🔥' : '',
    results: s.results.join(' '),
    performance: s.performance === null || s.performance === undefined ? '–' : String(s.performance),
    paused: s.paused ? 'paused' : '',
    me: s.name === me,
  }));
}

/**
 * The Join / Pause button of tournament page `tour` for `me` (the
 * account's name, or null for a guest): `{ label, hint }`, or null when a
 * finished tournament takes no one.
 */
export function joinButton(tour, me) {
  const t = tour.view;
  if (!t || t.status === 'finished') return null;
  if (me === null) return { label: 'Join', hint: 'Sign in to play in tournaments.' };
  if (tour.joined === t.id) {
    return { label: 'Pause', hint: t.status === 'running' ? 'You are in: your next game opens by itself.' : 'You are in: your first game opens when it starts.' };
  }
  const row = t.standings.find((s) => s.name === me);
  return { label: 'Join', hint: row ? 'Paused: your score stays; join again to be paired.' : '' };
}

/** How many moves our side has made in `state`'s game (X moves first, so its moves are the even ones). */
function ownMoves(state) {
  return state.moves.filter((_, i) => i % 2 === state.you - 1).length;
}

/** Whether `state`'s game lets us go berserk now: a tournament game of ours, before our first move, not yet berserk. */
export function canBerserk(state) {
  return state.screen === 'game' && !!state.tournament && state.you !== null && !state.over
    && !state.berserk?.[state.you - 1] && ownMoves(state) === 0;
}

/**
 * Our tournament game just ended (`state` after its `game_over`, `outcome`
 * its words): what the tournament page says of it after, with the record's
 * id for a replay.
 */
export function lastGame(state, outcome, gameId) {
  return { tournament: state.tournament, headline: outcome?.headline ?? '', how: outcome?.how ?? '', note: state.note, game: gameId ?? null };
}
