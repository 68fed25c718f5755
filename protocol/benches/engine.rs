//! Time per move of the engine against slower approaches, which live here
//! only as baselines. `move`: the classic rule (a whole line) against scanning
//! the touched lines (O(n)) and the whole board (O(n²)) on an empty board.
//! `connect_k`: every (size, win) pair against scanning from the move in the
//! four directions (O(win)), on a board whose runs through the move are as
//! long as the rule allows, so that the scan has to walk them. Each iteration plays one move and takes
//! it back, on a rotating set of cells.
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

/// The (size, win) pairs of the connect-k bench.
const RULES: [(usize, usize); 6] = [(3, 3), (15, 5), (100, 5), (100, 100), (1000, 5), (1000, 1000)];

/// The board each (size, win) pair is measured on, and the empty cells
/// where `X`, to move, plays. The scan's work grows with the runs through the
/// move, so the runs are as long as the rule allows:
/// - a whole line wins (`win` = `size` ≥ 5): one empty cell on the main
///   diagonal, with `X` on the rest of its row, its column, the main diagonal
///   and the other diagonal through it but for each line's first cell (an
///   `O`: no line is whole), and as many `O`s scattered apart (every third
///   cell of every third row) elsewhere;
/// - a shorter `win`: rows of one player's marks broken every `win`th cell
///   (even rows `X`'s, odd rows the same with the marks swapped, a last odd
///   row empty), the move joining two runs mid-row; the cell below each move
///   stays empty too, to keep the counts equal;
/// - a 3×3 board stays empty.
fn rules_board(n: usize, win: usize) -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut marks = vec![0u8; n * n];
    if n < 5 {
        return (marks, vec![(1, 1)]);
    }
    if win == n {
        let h = n / 2;
        let star = |r: usize, c: usize| r == h || c == h || r == c || r + c == 2 * h;
        // Each line's first cell is an `O`, so that no line is whole and the
        // scan walks all four.
        let firsts = [(h, 0), (0, h), (0, 0), (2 * h - (n - 1), n - 1)];
        let mut xs = 0;
        let mut os = 0;
        for r in 0..n {
            for c in 0..n {
                if firsts.contains(&(r, c)) {
                    marks[r * n + c] = 2;
                    os += 1;
                } else if star(r, c) && (r, c) != (h, h) {
                    marks[r * n + c] = 1;
                    xs += 1;
                }
            }
        }
        let spots = (0..n * n).filter(|&i| i / n % 3 == 1 && i % n % 3 == 1 && !star(i / n, i % n));
        for i in spots.take(xs - os) {
            marks[i] = 2;
        }
        return (marks, vec![(h, h)]);
    }
    let pairs = n / 2;
    let mut holes = Vec::new();
    let runs_per_row = n.div_ceil(win);
    for k in 0..128usize {
        let r = 2 * ((k * 7) % pairs);
        let c = ((k * 13) % runs_per_row) * win + win / 2;
        if c < n && c % win != win - 1 && !holes.contains(&(r, c)) {
            holes.push((r, c));
        }
    }
    for r in 0..2 * pairs {
        for c in 0..n {
            let x_row = r % 2 == 0;
            let brk = c % win == win - 1;
            marks[r * n + c] = if x_row != brk { 1 } else { 2 };
        }
    }
    for &(r, c) in &holes {
        marks[r * n + c] = 0;
        marks[(r + 1) * n + c] = 0;
    }
    (marks, holes)
}

/// The engine with `marks` played (alternately, `X` first); `X` is to move.
fn filled_game(n: usize, win: usize, marks: &[u8]) -> Game {
    let mut game = Game::with_win(n, win).expect("valid rules");
    let xs = (0..n * n).filter(|&i| marks[i] == 1);
    let os = (0..n * n).filter(|&i| marks[i] == 2);
    for (x, o) in xs.zip(os) {
        game.play(x / n, x % n).expect("a legal move");
        game.play(o / n, o % n).expect("a legal move");
    }
    assert!(game.turn() == Some(tictactoe_protocol::Player::X), "the filling wins nothing");
    game
}

/// The O(win) baseline: walk from the move along each direction over the
/// mover's marks, at most `win - 1` cells each way.
fn scan_win(marks: &[u8], n: usize, win: usize, r: usize, c: usize, m: u8) -> bool {
    let holds = |r: isize, c: isize| {
        r >= 0 && c >= 0 && (r as usize) < n && (c as usize) < n && marks[r as usize * n + c as usize] == m
    };
    [(0isize, 1isize), (1, 0), (1, 1), (1, -1)].into_iter().any(|(dr, dc)| {
        let count = |sign: isize| {
            (1..win as isize)
                .take_while(|&i| holds(r as isize + sign * i * dr, c as isize + sign * i * dc))
                .count()
        };
        count(-1) + 1 + count(1) >= win
    })
}

fn connect_k(c: &mut Criterion) {
    let mut group = c.benchmark_group("connect_k");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for (n, win) in RULES {
        let (marks, holes) = rules_board(n, win);
        let label = format!("{n}/{win}");
        group.bench_with_input(BenchmarkId::new("engine", &label), &holes, |b, holes| {
            let mut game = filled_game(n, win, &marks);
            let mut i = 0;
            b.iter(|| {
                let (r, c) = holes[i];
                i = (i + 1) % holes.len();
                let _ = black_box(game.play(black_box(r), black_box(c)));
                game.undo();
            });
        });
        group.bench_with_input(BenchmarkId::new("directional_scan", &label), &holes, |b, holes| {
            let mut marks = marks.clone();
            let mut i = 0;
            b.iter(|| {
                let (r, c) = holes[i];
                i = (i + 1) % holes.len();
                marks[r * n + c] = 1;
                black_box(scan_win(&marks, n, black_box(win), r, c, 1));
                marks[r * n + c] = 0;
            });
        });
    }
    group.finish();
}

criterion_group!(benches, per_move, connect_k);
criterion_main!(benches);
