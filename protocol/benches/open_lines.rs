//! Time for one `OpenLines::play`: flat against the board's size when a whole
//! line wins (a cell lies on at most four lines) and O(win) for connect-k.
//! Each timed round plays up to 256 distinct cells, spread over the board,
//! once each on an empty board (on as many copies as it takes to reach 256
//! plays on a small board); the copies are reset outside the clock, in
//! place, so the clock sees no allocation and no more memory than a game
//! holds.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tictactoe_protocol::{OpenLines, Player};

/// The (size, win) pairs measured.
const RULES: [(usize, usize); 6] = [(3, 3), (100, 100), (1000, 1000), (15, 5), (100, 5), (1000, 5)];

/// Plays per timed round, at least: enough to make the timer's cost
/// negligible.
const ROUND: usize = 256;

/// Up to [`ROUND`] distinct cells spread over an n×n board, deterministically.
fn cells(n: usize) -> Vec<(usize, usize)> {
    let total = n * n;
    let count = total.min(ROUND);
    // A stride coprime with n² visits distinct cells.
    let mut stride = total / count + 1;
    while gcd(stride, total) != 1 {
        stride += 1;
    }
    (0..count).map(|i| ((i * stride) % total / n, (i * stride) % total % n)).collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn play(c: &mut Criterion) {
    let mut group = c.benchmark_group("open_lines");
    for (n, win) in RULES {
        let empty = OpenLines::new(n, win).expect("valid rules");
        let cells = cells(n);
        let mut boards = vec![empty.clone(); ROUND.div_ceil(cells.len())];
        let per_round = (boards.len() * cells.len()) as u64;
        group.bench_function(BenchmarkId::new("play", format!("{n}/{win}")), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters.div_ceil(per_round) {
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
                // Rounds are whole, so a round's plays may exceed `iters`:
                // scale the time to `iters` of them.
                timed.mul_f64(iters as f64 / (iters.div_ceil(per_round) * per_round) as f64)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, play);
criterion_main!(benches);
