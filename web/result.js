// The end of a game as a banner over the board's side: the score with X
// first, who won and how (words.js's `outcome`), the rating change, and the
// way on (rematch, new game; a tournament game has none: the tournament
// page comes back by itself). Spectators see it too, in neutral words.
import { boardName, outcome } from './words.js';

const $ = (id) => document.getElementById(id);

/** Shows `state`'s result in the banner, or hides it while the game is on. */
export function paint(state) {
  const told = outcome(state);
  const banner = $('result');
  banner.hidden = !told;
  // The live region keeps saying the result for screen readers; on screen the banner says it.
  $('status').classList.toggle('told', !!told);
  // Notes after the end (the rating, a rematch offered) belong with the banner.
  $('note').hidden = !!told;
  if (!told) return;
  $('result-note').textContent = state.note;
  $('result-note').classList.toggle('error', state.noteKind === 'error');
  banner.className = `result ${told.tone}`;
  $('score').textContent = told.score;
  $('score').hidden = !told.score;
  $('headline').textContent = told.headline;
  $('how').textContent = told.how ? told.how[0].toUpperCase() + told.how.slice(1) : '';
  const seated = state.you !== null;
  // A tournament's room closes after its one game: the page goes back to the tournament.
  $('rematch').hidden = !seated || state.closed || !!state.tournament;
  $('new-game').hidden = !!state.tournament;
  $('new-game').title = `A new game on ${boardName(state.size, state.win)} against ${againstHouse(state) ? 'the house bot' : 'the next player waiting'}`;
}

/** Whether `state`'s game was against the house bot (so that a new game is one too). */
export function againstHouse(state) {
  return state.you !== null && state.players.some((p) => p.bot && p.name === 'house');
}
