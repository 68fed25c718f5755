// The page's mutable state, all of it in one object: the picture of the
// game and the lobby (folded from server messages by state.js), the
// tournaments' (folded by tournament.js) and what the
// page keeps beside it between events. Every other module reads and writes
// it here and keeps nothing of its own.
import { initial, roomFromPath } from './state.js';
import { initialTour } from './tournament.js';

/** The page's element with `id`. */
export const $ = (id) => document.getElementById(id);

/** The page's clock in ms: the turn clock and the reconnection's deadline count on it. */
export const now = () => performance.now();

/** The one state of the page. */
export const page = {
  state: initial(),
  tour: initialTour(), // the tournaments: the list, the one looked at, the one we play in (tournament.js)
  ws: null, // the WebSocket to the server, replaced on each reconnection
  // A room opened through its link (/r/CODE): shown with who waits in it, or
  // watched when its game is on. Its seat is taken only on an explicit click,
  // so that a link on another site cannot put a signed-in player in a game.
  invite: roomFromPath(location.pathname),
  greeted: false, // welcomed at least once: until then, what is sent waits in `early`
  early: [], // messages asked for before the first welcome, sent after the hello
  down: null, // while reconnecting: { until, restart }
  back: null, // just reconnected: { restart, timer } — said for a few seconds
  backoff: 200, // ms to the next attempt to reconnect, doubled up to 5 s
  focus: [0, 0], // the board's cell with the tab stop, moved by the arrow keys
  resignArmed: null, // the first Resign click arms a second one for 3 s: that timer
};
