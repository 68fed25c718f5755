//! The open-line counters against a full scan of every line after every move
//! of random games, and on hand-made positions where one player has marked
//! every line so that the other can no longer complete any.

use proptest::prelude::*;
use tictactoe_protocol::{Game, OpenLines, Player, Status};

/// The four directions a line runs in: row, column, diagonal, anti-diagonal.
const STEPS: [(isize, isize); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

/// A board of marks and the reference count: every run of `win` cells in
/// every direction (for `win` = `size` the rows, columns and two long
/// diagonals), scanned cell by cell.
struct Scan {
    n: usize,
    win: usize,
    marks: Vec<Option<Player>>,
}

impl Scan {
    fn new(n: usize, win: usize) -> Scan {
        Scan { n, win, marks: vec![None; n * n] }
    }

    fn mark(&mut self, player: Player, row: usize, col: usize) {
        self.marks[row * self.n + col] = Some(player);
    }

    /// The lines holding no mark of `player`'s opponent.
    fn open_to(&self, player: Player) -> usize {
        let n = self.n as isize;
        let inside = |r: isize, c: isize| (0..n).contains(&r) && (0..n).contains(&c);
        let mut open = 0;
        for (dr, dc) in STEPS {
            for r in 0..n {
                for c in 0..n {
                    let last = (r + dr * (self.win as isize - 1), c + dc * (self.win as isize - 1));
                    if !inside(last.0, last.1) {
                        continue;
                    }
                    let blocked = (0..self.win as isize).any(|i| {
                        self.marks[((r + dr * i) * n + c + dc * i) as usize] == Some(player.other())
                    });
                    open += usize::from(!blocked);
                }
            }
        }
        open
    }
}

/// Plays `moves` (alternately, `X` first) on the counters, the scan and the
/// engine, checking the counts against the scan after every move and that
/// the engine takes every move without the game ending. Returns the counters.
fn play_checked(n: usize, win: usize, moves: &[(usize, usize)]) -> OpenLines {
    let mut open = OpenLines::new(n, win).expect("valid rules");
    let mut scan = Scan::new(n, win);
    let mut game = Game::with_win(n, win).expect("valid rules");
    for (i, &(r, c)) in moves.iter().enumerate() {
        let player = Player::for_move(i);
        open.play(player, r, c);
        scan.mark(player, r, c);
        assert!(matches!(game.play(r, c), Ok(Status::InProgress { .. })), "move {i} {r},{c} ends the game");
        for p in [Player::X, Player::O] {
            assert_eq!(open.open_to(p), scan.open_to(p), "{n}/{win} after move {i}, open to {p:?}");
        }
    }
    open
}

/// A size, a win length for it (the rules and any up to 9), the
/// cells in a random order and how many of them to play.
fn random_game() -> impl Strategy<Value = (usize, usize, Vec<usize>, usize)> {
    let fixed = vec![(1, 1), (2, 2), (3, 3), (4, 3), (7, 4), (15, 5), (15, 15)];
    prop_oneof![
        proptest::sample::select(fixed),
        (1..=9usize).prop_flat_map(|n| (Just(n), Game::win_lengths(n))),
    ]
    .prop_flat_map(|(n, win)| {
        (Just(n), Just(win), Just((0..n * n).collect::<Vec<_>>()).prop_shuffle(), 0..=n * n)
    })
}

proptest! {
    #[test]
    fn counts_match_a_scan_of_every_line_after_every_move((n, win, order, count) in random_game()) {
        let mut open = OpenLines::new(n, win).expect("valid rules");
        let mut scan = Scan::new(n, win);
        for p in [Player::X, Player::O] {
            prop_assert_eq!(open.open_to(p), scan.open_to(p));
        }
        // Past a win the engine would stop; the counts stay well defined.
        for (i, &cell) in order.iter().take(count).enumerate() {
            let player = Player::for_move(i);
            open.play(player, cell / n, cell % n);
            scan.mark(player, cell / n, cell % n);
            for p in [Player::X, Player::O] {
                prop_assert_eq!(open.open_to(p), scan.open_to(p), "{}/{} after move {}, {:?}", n, win, i, p);
                prop_assert_eq!(open.can_complete(p), scan.open_to(p) > 0);
            }
        }
    }
}

#[test]
fn x_marking_every_line_of_3x3_leaves_o_nothing_to_complete() {
    // X: centre, top, left, bottom-right corner — every row, column and
    // diagonal, with no three in a row; O answers in three corners.
    let moves = [(1, 1), (0, 0), (0, 1), (2, 0), (1, 0), (0, 2)];
    let before = play_checked(3, 3, &moves);
    // Row 2 and column 2 are still free of X.
    assert_eq!(before.open_to(Player::O), 2);
    assert!(before.can_complete(Player::O));
    let after = play_checked(3, 3, &[&moves[..], &[(2, 2)]].concat());
    assert_eq!(after.open_to(Player::O), 0);
    assert!(!after.can_complete(Player::O));
    // Row 1 and column 1 hold no O: X may still win, so O running out of
    // time loses while X running out of time draws.
    assert_eq!(after.open_to(Player::X), 2);
    assert!(after.can_complete(Player::X));
}

/// A legal game where `X` marks every cell with `(row + 2·col) % 5 == 0`:
/// along a row, column, diagonal or anti-diagonal that sum steps by 2, 1,
/// 3 or 4 (mod 5), so every 5 cells in a row hold exactly one `X` — `X`
/// blocks every window of 5 and completes none, and no window is free of
/// `X` for `O` to complete. `O` answers on the other cells, row by row.
fn blocking_game(n: usize) -> Vec<(usize, usize)> {
    let cells = (0..n * n).map(|i| (i / n, i % n));
    let xs: Vec<_> = cells.clone().filter(|&(r, c)| (r + 2 * c) % 5 == 0).collect();
    let os = cells.filter(|&(r, c)| (r + 2 * c) % 5 != 0);
    let mut moves = Vec::new();
    for (i, &x) in xs.iter().enumerate() {
        moves.push(x);
        if i + 1 < xs.len() {
            moves.extend(os.clone().nth(i));
        }
    }
    moves
}

#[test]
fn x_blocking_every_window_of_five_leaves_o_nothing_to_complete() {
    for n in [6, 15] {
        let moves = blocking_game(n);
        let open = play_checked(n, 5, &moves);
        assert_eq!(open.open_to(Player::O), 0, "{n}/5");
        assert!(!open.can_complete(Player::O));
        let before = play_checked(n, 5, &moves[..moves.len() - 2]);
        assert!(before.can_complete(Player::O), "{n}/5: the last X closes the last window");
    }
}

#[test]
fn the_largest_boards_are_allocated_and_counted_at_their_edges() {
    for (n, win) in [(1000, 1000), (1000, 5), (Game::MAX_SIZE, 3), (Game::MAX_SIZE, Game::MAX_SIZE)] {
        let mut open = OpenLines::new(n, win).expect("valid rules");
        let span = n - win + 1;
        let total = 2 * n * span + 2 * span * span;
        assert_eq!(open.open_to(Player::O), total);
        // The top-left corner closes the first window of its row, its column
        // and the diagonal; the top-right one that of the anti-diagonal and
        // its column, and the last of the row — the same as the first when a
        // whole line wins.
        open.play(Player::X, 0, 0);
        open.play(Player::X, 0, n - 1);
        let corners = if win == n { 5 } else { 6 };
        assert_eq!(open.open_to(Player::O), total - corners, "{n}/{win}");
        // A cell off both long diagonals, far from the edges: its row and
        // column, or `win` windows in each of the four directions.
        open.play(Player::X, n / 2, n / 2 + 1);
        let inner = if win == n { 2 } else { 4 * win };
        assert_eq!(open.open_to(Player::O), total - corners - inner, "{n}/{win}");
        assert_eq!(open.open_to(Player::X), total);
    }
}
