// The clock picker of the home screen: a preset (1+0, 3+2, 5+3, 10+5), the
// per-move timer (the default) or a custom clock, kept in the browser for
// the next visit; and the requests that start a game, sent with the clock
// picked — or, for a custom clock out of range, not sent, with the reason
// said where refusals are.
import * as fischer from './fischer.js';
import { $, page } from './page.js';
import { render } from './render.js';
import { keepClock, savedClock } from './saved.js';
import { send } from './socket.js';

const FIELDS = { minutes: 'clock-minutes', increment: 'clock-increment' };

/** The picker's choice as shown: `{ pick, minutes, increment }`. */
function choice() {
  return { pick: $('time-control').value, minutes: $('clock-minutes').value, increment: $('clock-increment').value };
}

/** Shows the custom boxes only for a custom clock, none marked wrong. */
function showCustom() {
  $('custom-clock').hidden = $('time-control').value !== 'custom';
  for (const id of Object.values(FIELDS)) $(id).removeAttribute('aria-invalid');
}

/** Sets the picker to the choice kept in the browser, and keeps every change. */
export function wirePicker() {
  const saved = savedClock();
  const select = $('time-control');
  select.value = [...select.options].some((o) => o.value === saved.pick) ? saved.pick : 'per-move';
  $('clock-minutes').value = saved.minutes ?? '';
  $('clock-increment').value = saved.increment ?? '';
  showCustom();
  const changed = () => {
    keepClock(choice());
    showCustom();
  };
  select.addEventListener('change', changed);
  for (const id of Object.values(FIELDS)) $(id).addEventListener('input', changed);
}

/**
 * Sends `msg` (a request that starts a game) with the clock picked; a
 * custom clock out of range is said as a refusal, its box marked and
 * focused, and nothing is sent. Returns whether it was sent.
 */
export function start(msg) {
  const picked = fischer.chosen(choice());
  if (picked.error) {
    page.state.note = picked.error;
    page.state.noteKind = 'error';
    const box = $(FIELDS[picked.field]);
    box.setAttribute('aria-invalid', 'true');
    box.focus();
    render();
    return false;
  }
  return send(picked.clock ? { ...msg, clock: picked.clock } : msg);
}
