// What this browser keeps between page loads: the tab's seat (a reload
// takes it back), the account signed in, the guest name, the clock
// chosen and the tournament the tab plays in.
const SEAT = 'ttt.seat'; // sessionStorage: this tab's seat { token, you }, taken back after a reload
const NAME = 'ttt.name'; // localStorage: the name last chosen
const GUEST = 'ttt.guest'; // sessionStorage: this tab's guest name, kept until the user changes it
const ACCOUNT = 'ttt.account'; // localStorage: { name, token } of the account signed in
const TOURNAMENT = 'ttt.tournament'; // sessionStorage: the id of the tournament this tab plays in, joined again on reconnecting
const CLOCK = 'ttt.clock'; // localStorage: the clock picker's choice { pick, minutes, increment }

/** The account signed in in this browser, `{ name, token }`, or null for a guest. */
export function account() {
  try {
    return JSON.parse(localStorage.getItem(ACCOUNT) ?? 'null');
  } catch {
    return null;
  }
}

/** Signs this browser in as `{ name, token }` (its next `hello` says so). */
export function keepAccount(saved) {
  localStorage.setItem(ACCOUNT, JSON.stringify(saved));
}

/** Signs this browser out: a guest again. */
export function forgetAccount() {
  localStorage.removeItem(ACCOUNT);
}

/** This tab's seat, if it has one: `{ token, you }` (a bare token, as pages before kept it, has no `you`). */
export function savedSeat() {
  const saved = sessionStorage.getItem(SEAT);
  try {
    return JSON.parse(saved ?? 'null');
  } catch {
    return { token: saved, you: null };
  }
}

/** Keeps the seat `you` of a game just started, with its resume `token`. */
export function keepSeat(token, you) {
  sessionStorage.setItem(SEAT, JSON.stringify({ token, you }));
}

/** Forgets this tab's seat: its game is over or left. */
export function forgetSeat() {
  sessionStorage.removeItem(SEAT);
}

/** This tab's guest name: the one it had, else the name last chosen, else a new one. */
export function guestName() {
  const name = sessionStorage.getItem(GUEST) ?? localStorage.getItem(NAME) ?? `guest-${Math.floor(1000 + Math.random() * 9000)}`;
  sessionStorage.setItem(GUEST, name);
  return name;
}

/** Keeps `name`, typed by the user, as this tab's guest name and the name last chosen. */
export function keepName(name) {
  localStorage.setItem(NAME, name);
  sessionStorage.setItem(GUEST, name);
}

/** The clock picker's last choice, `{ pick, minutes, increment }` (`pick`: `per-move`, a preset `3+2`, or `custom`). */
export function savedClock() {
  let saved = null;
  try {
    saved = JSON.parse(localStorage.getItem(CLOCK) ?? 'null');
  } catch {
    // kept by some other page: the default
  }
  return saved && typeof saved.pick === 'string' ? saved : { pick: 'per-move', minutes: '', increment: '' };
}

/** Keeps the clock picker's choice for the next visit. */
export function keepClock(choice) {
  localStorage.setItem(CLOCK, JSON.stringify(choice));
}

/** The tournament this tab plays in, by id, or null. */
export function savedTournament() {
  return sessionStorage.getItem(TOURNAMENT);
}

/** Keeps `id` as the tournament this tab plays in (joined again after a reload or a reconnection). */
export function keepTournament(id) {
  sessionStorage.setItem(TOURNAMENT, id);
}

/** This tab plays in no tournament (paused, or it is over). */
export function forgetTournament() {
  sessionStorage.removeItem(TOURNAMENT);
}
