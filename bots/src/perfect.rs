//! Exact play by negamax with alpha-beta and a transposition table; when the
//! whole tree does not fit the time budget, the heuristic decides instead.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::Rng;
use tictactoe_protocol::{Game, Status};

use crate::{CANCELLED, Stop, Strategy, empty_cells, heuristic};

#[derive(Debug, Clone, Copy)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

/// Never loses a game that can be saved, on any board the search finishes.
#[derive(Debug, Default)]
pub struct Perfect {
    /// The board size and win length the table holds values for.
    rule: (usize, usize),
    keys: Vec<[u64; 2]>,
    table: HashMap<u64, (i8, Bound)>,
    /// When the search under way must end.
    stop: Option<Stop>,
}

/// The search ran out of time, or was cancelled.
struct OutOfTime;

impl Perfect {
    fn prepare(&mut self, n: usize, win: usize) {
        if self.rule != (n, win) {
            self.rule = (n, win);
            let mut rng = rand::rng();
            self.keys = (0..n * n).map(|_| [rng.random(), rng.random()]).collect();
            self.table.clear();
        }
    }

    fn key(&self, game: &Game) -> u64 {
        let n = game.size();
        game.moves()
            .iter()
            .enumerate()
            .fold(0, |h, (i, m)| h ^ self.keys[usize::from(m[0]) * n + usize::from(m[1])][i % 2])
    }

    /// The game's value for the player to move: 1 win, 0 draw, -1 loss.
    fn negamax(&mut self, game: &mut Game, hash: u64, mut alpha: i8, mut beta: i8) -> Result<i8, OutOfTime> {
        // Every node looks at the clock: a node costs a sort of the empty
        // cells, so on a big board even a few nodes past the deadline would
        // be milliseconds late, and the clock is cheap beside the sort.
        if self.stop.as_ref().is_some_and(Stop::reached) {
            return Err(OutOfTime);
        }
        let original_alpha = alpha;
        if let Some(&(value, bound)) = self.table.get(&hash) {
            match bound {
                Bound::Exact => return Ok(value),
                Bound::Lower => alpha = alpha.max(value),
                Bound::Upper => beta = beta.min(value),
            }
            if alpha >= beta {
                return Ok(value);
            }
        }
        let n = game.size();
        let ply = game.moves().len() % 2;
        let mut best = -1;
        for (r, c) in ordered(game) {
            let child = hash ^ self.keys[r * n + c][ply];
            let value = match game.play(r, c) {
                Ok(Status::Won { .. }) => 1,
                Ok(Status::Draw) => 0,
                Ok(Status::InProgress { .. }) => -self.negamax(game, child, -beta, -alpha)?,
                Err(_) => continue,
            };
            game.undo();
            best = best.max(value);
            alpha = alpha.max(value);
            if alpha >= beta {
                break;
            }
        }
        let bound = if best <= original_alpha {
            Bound::Upper
        } else if best >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.table.insert(hash, (best, bound));
        Ok(best)
    }

    /// The best move by exhaustive search, or `None` if time ran out.
    fn search(&mut self, game: &Game) -> Option<(usize, usize)> {
        let mut game = game.clone();
        let n = game.size();
        let hash = self.key(&game);
        let ply = game.moves().len() % 2;
        let mut best: Option<((usize, usize), i8)> = None;
        for (r, c) in ordered(&game) {
            let value = match game.play(r, c) {
                Ok(Status::Won { .. }) => 1,
                Ok(Status::Draw) => 0,
                // Out of time: the clone is dropped, so no need to undo.
                Ok(Status::InProgress { .. }) => {
                    -self.negamax(&mut game, hash ^ self.keys[r * n + c][ply], -1, 1).ok()?
                }
                Err(_) => continue,
            };
            game.undo();
            if best.is_none_or(|(_, b)| value > b) {
                best = Some(((r, c), value));
            }
            if value == 1 {
                break;
            }
        }
        best.map(|(cell, _)| cell)
    }
}

/// Empty cells, centre first: better cuts, and a natural first move.
fn ordered(game: &Game) -> Vec<(usize, usize)> {
    let n = game.size() as i64;
    let mut cells = empty_cells(game);
    cells.sort_by_key(|&(r, c)| {
        let (dr, dc) = (2 * r as i64 - (n - 1), 2 * c as i64 - (n - 1));
        dr.abs() + dc.abs()
    });
    cells
}

impl Strategy for Perfect {
    fn choose(&mut self, game: &Game, think: Duration) -> Result<(usize, usize), String> {
        self.choose_until(game, &Stop::at(Instant::now() + think))
    }

    fn choose_until(&mut self, game: &Game, stop: &Stop) -> Result<(usize, usize), String> {
        self.prepare(game.size(), game.win());
        self.stop = Some(stop.clone());
        let found = self.search(game);
        self.stop = None;
        match found {
            Some(cell) => Ok(cell),
            // Nobody waits for the move: not even the heuristic is worth its time.
            None if stop.cancelled() => Err(CANCELLED.to_owned()),
            None => Ok(heuristic::choose(game)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(moves: &[(usize, usize)]) -> Game {
        let mut g = Game::new(3).unwrap();
        for &(r, c) in moves {
            g.play(r, c).unwrap();
        }
        g
    }

    #[test]
    fn takes_the_win_and_blocks_the_fork() {
        let mut p = Perfect::default();
        let think = Duration::from_secs(5);
        assert_eq!(p.choose(&game(&[(0, 0), (1, 0), (0, 1), (1, 1)]), think), Ok((0, 2)));
        // X in opposite corners: O must take an edge, not a corner.
        let (r, c) = p.choose(&game(&[(0, 0), (1, 1), (2, 2)]), think).unwrap();
        assert!((r + c) % 2 == 1, "edge expected, got {r},{c}");
    }

    /// Perfect never loses against every possible opponent, on either seat.
    #[test]
    fn never_loses_against_any_line_of_play() {
        fn explore(p: &mut Perfect, g: &mut Game, me: usize) {
            match g.status() {
                Status::Won { winner, .. } => {
                    assert_eq!(usize::from(winner.number() - 1), me, "lost: {:?}", g.moves())
                }
                Status::Draw => {}
                Status::InProgress { turn } => {
                    if usize::from(turn.number() - 1) == me {
                        let (r, c) = p.choose(g, Duration::from_secs(5)).unwrap();
                        g.play(r, c).unwrap();
                        explore(p, g, me);
                        g.undo();
                    } else {
                        for (r, c) in empty_cells(g) {
                            g.play(r, c).unwrap();
                            explore(p, g, me);
                            g.undo();
                        }
                    }
                }
            }
        }
        let mut p = Perfect::default();
        for me in 0..2 {
            explore(&mut p, &mut Game::new(3).unwrap(), me);
        }
    }

    /// A big board: no node may run far past the deadline, and a cancelled
    /// search gives up at once with nothing, while another thread watches.
    #[test]
    fn a_search_on_a_big_board_stops_at_its_deadline_and_when_cancelled() {
        let mut g = Game::new(60).unwrap();
        g.play(30, 30).unwrap();
        let mut p = Perfect::default();
        let begun = Instant::now();
        // A search that ignored its deadline would not end on 60×60: it ends
        // with the heuristic's move.
        let (r, c) = p.choose_until(&g, &Stop::at(begun + Duration::from_millis(50))).unwrap();
        assert!(!g.is_occupied(r, c));

        let stop = Stop::at(Instant::now() + Duration::from_secs(60));
        let canceller = stop.clone();
        let search = std::thread::spawn(move || Perfect::default().choose_until(&g, &stop));
        std::thread::sleep(Duration::from_millis(100));
        canceller.cancel();
        // Cancelled, not run to its minute's deadline (that gives a move).
        assert_eq!(search.join().unwrap(), Err(CANCELLED.to_owned()));
    }

    #[test]
    fn falls_back_to_the_heuristic_when_out_of_time() {
        let mut p = Perfect::default();
        let mut g = Game::new(7).unwrap();
        g.play(3, 3).unwrap();
        let (r, c) = p.choose(&g, Duration::from_millis(20)).unwrap();
        assert!(!g.is_occupied(r, c));
    }
}
