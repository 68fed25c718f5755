// Fischer clocks, as the page chooses, folds and shows them: the picker's
// presets and its custom clock checked against the server's ranges, a clock
// in Lichess's words (3+2), each side's time left ticking down between
// server messages, and a time as a clock face writes it (m:ss, tenths below
// 10 s). Pure functions, no DOM: `node --test` checks them.

/** What the server accepts (compete.md "Time controls"): 1 s..180 min, and 0..180 s a move. */
export const LIMITS = { initialMs: [1000, 10800000], incrementMs: [0, 180000] };

/** Each side's time for its first move, before its clock starts. */
export const FIRST_MOVE_MS = 30000;

/** Below this, a running clock shows tenths and is in the warning colour. */
export const LOW_MS = 10000;

/** The picker's presets, minutes+seconds, Lichess style; `per-move` (the default) is today's per-move timer. */
export const PRESETS = ['1+0', '3+2', '5+3', '10+5'];

/** The clock of a preset `M+S` (minutes, seconds): `{ initial_ms, increment_ms }`. */
export function preset(name) {
  const [minutes, seconds] = name.split('+').map(Number);
  return { initial_ms: Math.round(minutes * 60000), increment_ms: Math.round(seconds * 1000) };
}

/**
 * The clock of a custom choice, `minutes` and `increment` seconds as typed
 * (strings or numbers): `{ clock }` when the server would accept it, else
 * `{ error, field }` saying which box is wrong and what it takes.
 */
export function custom(minutes, increment) {
  const m = Number(String(minutes).trim());
  const s = Number(String(increment).trim() || '0');
  const initial = Math.round(m * 60000);
  const inc = Math.round(s * 1000);
  const [lo, hi] = LIMITS.initialMs;
  if (String(minutes).trim() === '' || !Number.isFinite(m) || initial < lo || initial > hi) {
    return { field: 'minutes', error: 'Minutes: from 1 second to 180 minutes (decimals allowed: 0.5 is 30 s).' };
  }
  const [ilo, ihi] = LIMITS.incrementMs;
  if (!Number.isFinite(s) || inc < ilo || inc > ihi) {
    return { field: 'increment', error: 'Increment: from 0 to 180 seconds a move.' };
  }
  return { clock: { initial_ms: initial, increment_ms: inc } };
}

/**
 * The clock the picker's choice asks for: `{ clock }` (null for the
 * per-move timer) or `{ error, field }` for a custom clock out of range.
 * `choice` is `{ pick, minutes, increment }` as saved.js keeps it.
 */
export function chosen(choice) {
  const pick = choice?.pick ?? 'per-move';
  if (pick === 'custom') return custom(choice.minutes ?? '', choice.increment ?? '');
  if (PRESETS.includes(pick)) return { clock: preset(pick) };
  return { clock: null };
}

/** A number without trailing zeros: 3, 0.5, 0.1. */
function plain(n) {
  return String(Number(n.toFixed(3)));
}

/** A clock in Lichess's words, minutes+seconds: `3+2`, `0.5+0`; `per move` without one. */
export function label(clock) {
  if (!clock) return 'per move';
  return `${plain(clock.initial_ms / 60000)}+${plain(clock.increment_ms / 1000)}`;
}

/** A time left as a clock face shows it: `m:ss`, `h:mm:ss` from an hour, `0:09.3` below 10 s. */
export function face(ms) {
  const t = Math.max(0, ms);
  if (t < LOW_MS) return `0:0${(Math.floor(t / 100) / 10).toFixed(1)}`;
  const secs = Math.floor(t / 1000);
  const [h, m, s] = [Math.floor(secs / 3600), Math.floor(secs / 60) % 60, secs % 60];
  const pad = (n) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/**
 * The Fischer clock a server message tells (`game_started`, `state`,
 * `moved`, `game_over`, or a record as `game_over`), folded into `state` in
 * place at `now`: the game's clock (kept when the message does not name
 * it), each side's time left and whose runs, counted from `now`.
 */
export function take(state, msg, now) {
  if ('clock' in msg) state.clock = msg.clock ?? null;
  state.clocks = Array.isArray(msg.clocks) ? [...msg.clocks] : null;
  state.running = msg.running ?? null;
  state.clocksAt = now;
  state.clocksHeld = false;
}

/** Each side's time left at `now`, `[ms_player_1, ms_player_2]`, or null without a Fischer clock. */
export function left(state, now) {
  if (!state.clock || !state.clocks) return null;
  const out = [...state.clocks];
  const r = state.running;
  if ((r === 1 || r === 2) && !state.clocksHeld && !state.over) {
    out[r - 1] = Math.max(0, out[r - 1] - (now - state.clocksAt));
  }
  return out;
}

/**
 * The two clock faces at `now`, X first: each `{ text, running, low }`
 * (low: a running clock below 10 s, or a flag fallen), or null without a
 * Fischer clock.
 */
export function faces(state, now) {
  const times = left(state, now);
  if (!times) return null;
  return times.map((ms, i) => {
    const running = !state.over && state.running === i + 1;
    return { text: face(ms), running, low: (running && ms < LOW_MS) || ms <= 0 };
  });
}

/** Whether some clock shown runs at `now`, so the page must redraw it often. */
export function ticks(state) {
  return !!state.clock && !!state.clocks && (state.running === 1 || state.running === 2)
    && !state.clocksHeld && !state.over && state.screen === 'game';
}

/**
 * Each side's time left after the first `at` moves of a record on a
 * Fischer clock (`clocks`: a pair per move), `[x, o]` in ms; at the end of
 * a game lost (or drawn) on time, the side whose flag fell (the one to
 * move) has none left.
 */
export function recorded(game, at) {
  const start = [game.clock.initial_ms, game.clock.initial_ms];
  const out = [...((at > 0 && game.clocks?.[at - 1]) || start)];
  if (game.reason === 'timeout' && at === game.moves.length) out[at % 2] = 0;
  return out;
}
