// The game screen's parts drawn from the state: the players' line, the
// board's cell size, the turn clock and the move list. Text only: names are
// never markup.
import * as board from './board.js';
import * as fischer from './fischer.js';
import { clockText } from './state.js';
import { moveRows, shown } from './words.js';

const $ = (id) => document.getElementById(id);

/** The mark by a player who went berserk (a tournament game). */
const BERSERK = '⚡berserk';

/**
 * Sizes the cells so that the whole board is on screen: from the room the
 * board has across (the game's width, less the side panel when it stands
 * beside the board) and down (the window's height below the board's top).
 * Boards too big even at the smallest cells scroll inside their frame.
 */
export function fit(state) {
  const game = $('game');
  if (game.hidden) return;
  const wrap = game.querySelector('.board-wrap');
  const wide = window.matchMedia('(min-width: 52rem)').matches;
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
  const frame = 12; // the frame's padding on both sides, and a little air
  const width = game.clientWidth - (wide ? 17.5 * rem : 0) - frame;
  const top = (wide ? game : wrap).getBoundingClientRect().top + window.scrollY;
  const height = window.innerHeight - top - frame - 4;
  board.fit($('board'), state.size, width, height);
  wrap.style.maxHeight = `${Math.max(height + frame, 12 * rem)}px`;
}

/** The turn clock at `now` (ms, the page's clock): its text, low or paused. */
export function clock(state, now) {
  const shown = clockText(state, now);
  const clock = $('clock');
  clock.textContent = shown ? shown.text : '';
  clock.classList.toggle('low', !!shown?.low);
  clock.classList.toggle('paused', !!shown?.paused);
}

/**
 * Both Fischer clocks at `now`, each with its player's mark and name: the
 * running one highlighted (and `aria-current`), low time in the warning
 * colour. Hidden for a game on the per-move timer.
 */
export function faces(state, now) {
  const shown = state.screen === 'game' ? fischer.faces(state, now) : null;
  $('clocks').hidden = !shown;
  if (!shown) return;
  shown.forEach((f, i) => {
    const el = $(`clock-${i + 1}`);
    el.querySelector('.who').textContent = `${'XO'[i]} ${state.players[i]?.name ?? ''}${state.berserk?.[i] ? ` ${BERSERK}` : ''}`;
    el.querySelector('.time').textContent = f.text;
    el.classList.toggle('running', f.running);
    el.classList.toggle('low', f.low);
    if (f.running) el.setAttribute('aria-current', 'true');
    else el.removeAttribute('aria-current');
  });
}

/**
 * The move list: one row per X move and the O move after it, scrolled to
 * the last; a room's opening moves are marked, and a line says where it ends.
 */
export function moves(state) {
  const opening = state.opening ?? 0;
  const items = moveRows(state.moves).flatMap(({ x, o }, row) => {
    const li = document.createElement('li');
    const [a, b] = [document.createElement('span'), document.createElement('span')];
    a.textContent = x;
    b.textContent = o;
    [a, b].forEach((span, side) => {
      if (2 * row + side < opening) {
        span.classList.add('opening');
        span.title = 'a move of the room\'s opening';
      }
    });
    li.append(a, b);
    if (opening === 0 || row !== Math.floor((opening - 1) / 2)) return [li];
    const end = document.createElement('li');
    end.className = 'opening-end';
    end.textContent = `opening: ${opening} move${opening === 1 ? '' : 's'}; play from here`;
    return [li, end];
  });
  const list = $('moves');
  list.replaceChildren(...items);
  list.scrollTop = list.scrollHeight;
}

/** The players' line: each name in its mark's colour, as text, and the mark of a player gone berserk. */
export function players(state) {
  const parts = state.players.flatMap((p, i) => {
    const span = document.createElement('span');
    span.className = 'xo'[i];
    span.textContent = `${'XO'[i]} ${shown(p)}`;
    if (state.berserk?.[i]) {
      const mark = document.createElement('span');
      mark.className = 'berserk-mark';
      mark.textContent = ` ${BERSERK}`;
      mark.title = 'went berserk: half the clock, no increment';
      span.append(mark);
    }
    return i ? [' — ', span] : [span];
  });
  const tail = state.you ? ` (you are ${'XO'[state.you - 1]})` : ' (watching)';
  $('players').replaceChildren(...parts, tail);
}
