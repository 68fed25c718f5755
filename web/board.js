// The board as DOM: a grid of <button>s named by coordinate (and mark once
// taken), with column letters and row numbers around it. Used by the game
// and by replays.
import { cellSize } from './state.js';
import { cellLabel, columnName } from './words.js';

/** Lays out an empty n×n board in `el` (a grid element). */
export function build(el, n) {
  el.style.setProperty('--n', String(n));
  const cells = [document.createElement('span')];
  for (let c = 0; c < n; c++) {
    const head = document.createElement('span');
    head.className = 'label';
    head.textContent = columnName(c);
    cells.push(head);
  }
  for (let r = 0; r < n; r++) {
    const label = document.createElement('span');
    label.className = 'label';
    label.textContent = String(r + 1);
    cells.push(label);
    for (let c = 0; c < n; c++) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'cell';
      b.dataset.row = String(r);
      b.dataset.col = String(c);
      cells.push(b);
    }
  }
  el.replaceChildren(...cells);
}

/** Paints `state`'s board into `el`: marks, names, the last move, the winning run; `focus` gets the tab stop. */
export function paint(el, state, focus = [0, 0]) {
  const n = state.size;
  if (el.querySelectorAll('button.cell').length !== n * n) build(el, n);
  const win = new Set((state.line ?? []).map(([r, c]) => `${r},${c}`));
  for (const b of el.querySelectorAll('button.cell')) {
    const r = Number(b.dataset.row);
    const c = Number(b.dataset.col);
    const mark = state.board[r]?.[c] ?? 0;
    b.textContent = mark ? 'XO'[mark - 1] : '';
    b.setAttribute('aria-label', cellLabel(state, r, c));
    b.classList.toggle('x', mark === 1);
    b.classList.toggle('o', mark === 2);
    b.classList.toggle('last', !!state.last && state.last[0] === r && state.last[1] === c);
    b.classList.toggle('win', win.has(`${r},${c}`));
    b.tabIndex = r === focus[0] && c === focus[1] ? 0 : -1;
  }
}

/** Sizes `el`'s cells (an n×n board) so that the whole board fits `width` × `height` px. */
export function fit(el, n, width, height) {
  const px = `${cellSize(n, width, height)}px`;
  if (el.style.getPropertyValue('--size') !== px) el.style.setProperty('--size', px);
}
