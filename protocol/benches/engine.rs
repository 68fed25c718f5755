//! Time per move of the counter engine against the two slower approaches
//! (scan the touched lines: O(n); scan the whole board: O(n²)), which live
//! here only as baselines. Each iteration plays one move and takes it back, on
//! a rotating set of cells spread over the board.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use tictactoe_protocol::Game;

const SIZES: [usize; 4] = [3, 9, 100, 1000];

/// Up to 256 distinct cells spread over an n×n board, deterministically.
fn cells(n: usize) -> Vec<(usize, usize)> {
    let total = n * n;
    let count = total.min(256);
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

/// A plain board of marks; the baselines decide wins by scanning it.
struct ScanBoard {
    n: usize,
    cells: Vec<u8>,
    whole_board: bool,
}

impl ScanBoard {
    fn new(n: usize, whole_board: bool) -> Self {
        ScanBoard { n, cells: vec![0; n * n], whole_board }
    }

    fn play(&mut self, r: usize, c: usize, mark: u8) -> Option<u8> {
        let n = self.n;
        if r >= n || c >= n || self.cells[r * n + c] != 0 {
            return None;
        }
        self.cells[r * n + c] = mark;
        let won = if self.whole_board { self.scan_all(mark) } else { self.scan_through(r, c, mark) };
        Some(if won { mark } else { 0 })
    }

    fn undo(&mut self, r: usize, c: usize) {
        self.cells[r * self.n + c] = 0;
    }

    /// Whether every cell of the line holds `mark`, counted cell by cell as
    /// the plain algorithms do.
    fn line(&self, mark: u8, cells: impl Iterator<Item = usize>) -> bool {
        cells.filter(|&i| self.cells[i] == mark).count() == self.n
    }

    /// O(n): the row, column and diagonals through the move.
    fn scan_through(&self, r: usize, c: usize, m: u8) -> bool {
        let n = self.n;
        self.line(m, (0..n).map(|j| r * n + j))
            || self.line(m, (0..n).map(|i| i * n + c))
            || (r == c && self.line(m, (0..n).map(|i| i * n + i)))
            || (r + c == n - 1 && self.line(m, (0..n).map(|i| i * n + n - 1 - i)))
    }

    /// O(n²): every row, column and both diagonals.
    fn scan_all(&self, m: u8) -> bool {
        let n = self.n;
        (0..n).any(|r| self.line(m, (0..n).map(|j| r * n + j)))
            || (0..n).any(|c| self.line(m, (0..n).map(|i| i * n + c)))
            || self.line(m, (0..n).map(|i| i * n + i))
            || self.line(m, (0..n).map(|i| i * n + n - 1 - i))
    }
}

fn per_move(c: &mut Criterion) {
    let mut group = c.benchmark_group("move");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for n in SIZES {
        let cells = cells(n);
        group.bench_with_input(BenchmarkId::new("counter", n), &cells, |b, cells| {
            let mut game = Game::new(n).expect("valid size");
            let mut i = 0;
            b.iter(|| {
                let (r, c) = cells[i];
                i = (i + 1) % cells.len();
                let _ = black_box(game.play(black_box(r), black_box(c)));
                game.undo();
            });
        });
        for (name, whole) in [("line_scan", false), ("board_scan", true)] {
            group.bench_with_input(BenchmarkId::new(name, n), &cells, |b, cells| {
                let mut board = ScanBoard::new(n, whole);
                let mut i = 0;
                b.iter(|| {
                    let (r, c) = cells[i];
                    i = (i + 1) % cells.len();
                    black_box(board.play(black_box(r), black_box(c), 1));
                    board.undo(r, c);
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, per_move);
criterion_main!(benches);
