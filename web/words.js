// What the page says, as words: the names of cells, players and boards,
// how a game or a record ended, and a refusal in a player's words. Pure
// functions of the state (state.js) and of server messages, checked by
// `node --test` like it.

/** The name of column `col` (0-based) as the terminal client draws it: a…z, aa, ab, … */
export function columnName(col) {
  let n = col + 1;
  let name = '';
  while (n > 0) {
    n -= 1;
    name = String.fromCharCode(97 + (n % 26)) + name;
    n = Math.floor(n / 26);
  }
  return name;
}

/** A cell's name: column letter, then row number from 1 (`b2` is row 1, column 1). */
export function cellName(row, col) {
  return `${columnName(col)}${row + 1}`;
}

const MARKS = ['X', 'O'];

/** A player as shown: the name, the rating if any, "(bot)" for bots. Text, never markup. */
export function shown(player) {
  if (!player) return '';
  let text = player.name;
  if (player.rating !== null && player.rating !== undefined) text += ` ${player.rating}`;
  if (player.bot) text += ' (bot)';
  return text;
}

/** The board, as people say it: 3×3, or 15×15, 5 in a row. */
export function boardName(size, win) {
  return win === size ? `${size}×${size}` : `${size}×${size}, ${win} in a row`;
}

/** The moves so far as the move list shows them: one row per X move and the O move after it. */
export function moveRows(moves) {
  const rows = [];
  for (let i = 0; i < moves.length; i += 2) {
    const [x, o] = [moves[i], moves[i + 1]];
    rows.push({ n: i / 2 + 1, x: cellName(x[0], x[1]), o: o ? cellName(o[0], o[1]) : '' });
  }
  return rows;
}

/** A number of things, in the singular for one: `1 loss`, `2 losses`. */
export function count(n, one, many) {
  return n === 1 ? `1 ${one}` : `${n} ${many}`;
}

/** How a record ended, in words: `a draw`, `ann won`, `bob won on time`. */
export function ending(g) {
  if (g.winner === 0) return { draw: 'a draw', timeout: 'a draw on time', aborted: 'aborted' }[g.reason] ?? 'no result';
  const how = { resign: ' by resignation', timeout: ' on time', disconnect: ' by disconnection' }[g.reason] ?? '';
  return `${g.players[g.winner - 1].name} won${how}`;
}

/**
 * A refusal from the server as a person would say it: in our own words for
 * the refusals a player meets, the server's text (shown as text) for the rest.
 */
export function refusal(msg, limits) {
  const { min_size: min = 2, max_size: max = 100 } = limits ?? {};
  const words = {
    not_your_turn: "Not your turn yet: wait for your opponent's move.",
    cell_occupied: 'That cell is taken: choose an empty one.',
    out_of_bounds: 'That cell is off the board.',
    game_over: 'The game is over.',
    not_in_game: 'You are not in a game right now.',
    rate_limited: 'Too many clicks at once: wait a moment and try again.',
    invalid_size: `This server plays boards from ${min}×${min} to ${max}×${max}.`,
    invalid_win: 'That many in a row does not fit the board: choose from 3 up to its size.',
    player_not_found: 'Nobody by that name is online right now.',
    room_not_found: 'No room has that code: it may have closed.',
    invalid_token: 'Your last game is over (it ended while you were away): start a new one.',
    invalid_clock: 'This server does not play that clock: from 1 s to 180 min, plus 0 to 180 s a move.',
    cannot_berserk: 'Too late to go berserk: only in a tournament game, once, before your first move.',
  };
  return words[msg.code] ?? msg.message;
}

/** A cell's accessible name: its coordinate, and its mark once taken. */
export function cellLabel(state, row, col) {
  const mark = state.board[row]?.[col] ?? 0;
  return mark ? `${cellName(row, col)} ${MARKS[mark - 1]}` : cellName(row, col);
}

/**
 * How a finished game ended, as its banner tells it: the score with X
 * first (`1-0`, `½-½`, `0-1`; empty when there is no result), who won (from
 * our seat, or by marks and names when watching), how, and the tone
 * (`win`, `loss`, `draw` or `neutral`: a spectator's or a game with no
 * result). Null while the game is on.
 */
export function outcome(state) {
  if (!state.over) return null;
  const { winner, reason } = state.over;
  const name = (p) => state.players[p - 1]?.name;
  const called = (p) => (name(p) ? `${MARKS[p - 1]} (${name(p)})` : MARKS[p - 1]);
  if (!winner) {
    const none = {
      draw: ['Draw', 'the board is full'],
      // A flag fell, but the other side could no longer complete any line.
      timeout: ['Draw', 'time ran out, but no line was left to win it'],
      aborted: ['Aborted', 'the game ended before both players had moved'],
      shutdown: ['No winner', 'the server shut down'],
    }[reason] ?? ['No winner', ''];
    const drawn = reason === 'draw' || reason === 'timeout';
    return { score: drawn ? '½-½' : '', headline: none[0], how: none[1], tone: drawn ? 'draw' : 'neutral' };
  }
  const score = winner === 1 ? '1-0' : '0-1';
  const loser = 3 - winner;
  const watching = state.you === null;
  const won = state.you === winner;
  const headline = watching ? `${called(winner)} won` : won ? 'You won' : 'You lost';
  const them = watching ? called(loser) : won ? 'your opponent' : 'you';
  const how = {
    line: watching || won ? `${state.win} in a row` : `your opponent made ${state.win} in a row`,
    resign: `${them} resigned`,
    timeout: `${them} ran out of time`,
    disconnect: them === 'you' ? 'your connection was gone too long' : `${them} did not come back`,
  }[reason] ?? '';
  return { score, headline, how, tone: watching ? 'neutral' : won ? 'win' : 'loss' };
}

/** What the live region says: whose turn it is, or how the game ended. */
export function statusText(state) {
  if (state.screen !== 'game') return state.note;
  const name = (p) => shown(state.players[p - 1]) || MARKS[p - 1];
  if (state.over) {
    const { headline, how } = outcome(state);
    return how ? `${headline} — ${how}.` : `${headline}.`;
  }
  if (state.turn === null) return 'Waiting…';
  if (state.you === null) return `${MARKS[state.turn - 1]} (${name(state.turn)}) to move.`;
  return state.turn === state.you ? `Your turn (${MARKS[state.you - 1]}).` : `${name(state.turn)}'s turn.`;
}
