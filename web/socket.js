// The one WebSocket to the server that served the page: sending on it, and
// reconnecting when it drops (backing off; a restarting server, close 1012,
// is given longer), with the banner that says so.
import { now, page } from './page.js';
import { render } from './render.js';
import { savedSeat } from './saved.js';
import { connectionDown } from './state.js';

const RESTART_WAIT = 60000; // a restarting server (close 1012) is given this long

/** The WebSocket address of the server that served the page. */
export const url = () => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`;

/** Whether the connection is open now. */
export const open = () => page.ws?.readyState === WebSocket.OPEN;

/**
 * Sends `msg`. Before the first `welcome` it is held and sent right after
 * the page's hello (a click made while the page is still connecting counts);
 * while reconnecting, says that nothing was sent and returns false.
 */
export function send(msg) {
  if (!page.greeted && !page.down) {
    page.early.push(msg);
    return true;
  }
  if (open()) {
    page.ws.send(JSON.stringify(msg));
    return true;
  }
  page.state.note = 'Not connected: nothing was sent. Reconnecting…';
  render();
  return false;
}

/** Connects, and again whenever the connection drops; each message the server sends goes to `handle`. */
export function connect(handle) {
  page.ws = new WebSocket(url());
  page.ws.addEventListener('message', (e) => handle(JSON.parse(e.data)));
  page.ws.addEventListener('close', (e) => dropped(e.code, handle));
}

/** Sends what was asked before the first welcome, in order (after the hello and the seat taken back). */
export function sendEarly() {
  for (const msg of page.early.splice(0)) send(msg);
}

/** The server welcomed us: after a drop, "you are back" is said for 5 s, and backing off starts afresh. */
export function welcomed() {
  page.greeted = true;
  if (page.down) {
    clearTimeout(page.back?.timer);
    page.back = { restart: page.down.restart, timer: setTimeout(() => { page.back = null; render(); }, 5000) };
  }
  page.down = null;
  page.backoff = 200;
}

/** The connection closed with `code`: the clock shown stands still, and a new one is tried after a while. */
function dropped(code, handle) {
  const restart = code === 1012;
  if (page.early.length) page.state.note = 'Not connected: nothing was sent. Reconnecting…';
  page.early = [];
  const grace = page.state.limits?.reconnect_grace_ms ?? 30000;
  if (!page.down) page.down = { until: now() + (restart ? Math.max(grace, RESTART_WAIT) : grace), restart };
  page.down.restart ||= restart;
  page.state = connectionDown(page.state, now(), page.down.restart);
  render();
  if (now() > page.down.until && !savedSeat()) page.backoff = 5000; // idle: keep trying, slowly
  setTimeout(() => connect(handle), page.backoff * (0.5 + Math.random() / 2));
  page.backoff = Math.min(page.backoff * 2, 5000);
}
