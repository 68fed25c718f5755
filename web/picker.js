// The clock pickers: the home screen's — a preset (1+0, 3+2, 5+3, 10+5),
// the per-move timer (the default) or a custom clock, kept in the browser
// for the next visit — and the tournament form's, the same without the
// per-move timer; and the requests that start a game, sent with the clock
// picked — or, for a custom clock out of range, not sent, with the reason
// said where refusals are.
import * as fischer from './fischer.js';
import { $, page } from './page.js';
import { render } from './render.js';
import { keepClock, savedClock } from './saved.js';
import { send } from './socket.js';

/** The home screen's picker: its menu, its custom boxes and the span that holds them. */
const HOME = { pick: 'time-control', minutes: 'clock-minutes', increment: 'clock-increment', box: 'custom-clock' };

/** The choice picker `ids` shows: `{ pick, minutes, increment }`. */
function choice(ids) {
  return { pick: $(ids.pick).value, minutes: $(ids.minutes).value, increment: $(ids.increment).value };
}

/** Shows the custom boxes only for a custom clock, none marked wrong. */
function showCustom(ids) {
  $(ids.box).hidden = $(ids.pick).value !== 'custom';
  for (const id of [ids.minutes, ids.increment]) $(id).removeAttribute('aria-invalid');
}

/**
 * Wires picker `ids` (the home screen's by default, set to the choice kept
 * in the browser and keeping every change; another starts as its markup
 * says and keeps nothing).
 */
export function wirePicker(ids = HOME) {
  const keep = ids === HOME;
  const select = $(ids.pick);
  if (keep) {
    const saved = savedClock();
    select.value = [...select.options].some((o) => o.value === saved.pick) ? saved.pick : 'per-move';
    $(ids.minutes).value = saved.minutes ?? '';
    $(ids.increment).value = saved.increment ?? '';
  }
  showCustom(ids);
  const changed = () => {
    if (keep) keepClock(choice(ids));
    showCustom(ids);
  };
  select.addEventListener('change', changed);
  for (const id of [ids.minutes, ids.increment]) $(id).addEventListener('input', changed);
}

/**
 * The clock picker `ids` asks for: `{ clock }` (null for the per-move
 * timer), or `{ error }` for a custom clock out of range, its wrong box
 * marked and focused.
 */
export function picked(ids = HOME) {
  const p = fischer.chosen(choice(ids));
  if (p.error) {
    const box = $(ids[p.field]);
    box.setAttribute('aria-invalid', 'true');
    box.focus();
  }
  return p;
}

/**
 * Sends `msg` (a request that starts a game) with the clock picked; a
 * custom clock out of range is said as a refusal and nothing is sent.
 * Returns whether it was sent.
 */
export function start(msg) {
  const p = picked();
  if (p.error) {
    page.state.note = p.error;
    page.state.noteKind = 'error';
    render();
    return false;
  }
  return send(p.clock ? { ...msg, clock: p.clock } : msg);
}
