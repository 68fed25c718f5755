//! Time for one `OpenLines::play`: flat against the board's size when a whole
//! line wins (a cell lies on at most four lines) and O(win) for connect-k.
//!
//! Each timed round plays 256 moves on empty boards, each cell once per
//! board; the boards are reset outside the clock, so the clock sees no
//! allocation. When a whole line wins, the round plays the two corners of
//! the main diagonal on each of 128 copies: three lines per move on every
//! size, and the same round on every size (moves on one board update the
//! same counter and diagonal bit in turn, and would wait on each other).
//! For connect-k, one board (the memory one game holds) takes 256 cells
//! spread along the main diagonal.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tictactoe_protocol::{OpenLines, Player};

/// The (size, win) pairs measured.
const RULES: [(usize, usize); 6] = [(3, 3), (100, 100), (1000, 1000), (15, 5), (100, 5), (1000, 5)];

/// Moves per timed round: enough to make the timer's cost negligible.
const ROUND: usize = 256;

/// The cells one board of a round takes.
fn cells(n: usize, win: usize) -> Vec<(usize, usize)> {
    if win == n {
        return vec![(0, 0), (n - 1, n - 1)];
    }
    (0..n).step_by((n / ROUND).max(1)).take(ROUND).map(|i| (i, i)).collect()
}

fn play(c: &mut Criterion) {
    let mut group = c.benchmark_group("open_lines");
    for (n, win) in RULES {
        let empty = OpenLines::new(n, win).expect("valid rules");
        let cells = cells(n, win);
        let mut boards = vec![empty.clone(); ROUND.div_ceil(cells.len())];
        let per_round = (boards.len() * cells.len()) as u64;
        group.bench_function(BenchmarkId::new("play", format!("{n}/{win}")), |b| {
            b.iter_custom(|iters| {
                let rounds = iters.div_ceil(per_round);
                let mut timed = Duration::ZERO;
                for _ in 0..rounds {
                    for board in &mut boards {
                        board.clone_from(&empty);
                    }
                    let start = Instant::now();
                    for board in &mut boards {
                        for (i, &(r, c)) in cells.iter().enumerate() {
                            board.play(Player::for_move(i), black_box(r), black_box(c));
                        }
                        black_box(board.open_to(Player::O));
                    }
                    timed += start.elapsed();
                }
                // Rounds are whole, so they may play more than `iters` moves:
                // scale the time to `iters` of them.
                timed.mul_f64(iters as f64 / (rounds * per_round) as f64)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, play);
criterion_main!(benches);
