//! The engine under arbitrary operation sequences (play, play as a named
//! player, undo) on sizes 1 to 12 and every win length, and now and then on
//! 30 to 40, where a win longer than 29 takes the run lengths rather than
//! the bit planes. After every operation the engine's status agrees with the
//! reference board (and, for a whole line, with a scan of every line); a
//! refused move changes nothing; undo restores the whole state before the
//! move, runs included.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tictactoe_protocol::oracle::Board;
use tictactoe_protocol::{Game, LineKind, Player, Status};

#[derive(Debug, Arbitrary)]
enum Op {
    Play(u8, u8),
    PlayAs(bool, u8, u8),
    Undo,
}

#[derive(Debug, Arbitrary)]
struct Input {
    size: u8,
    win: u8,
    ops: Vec<Op>,
}

/// Everything observable about a game.
type Snapshot = (Vec<[u16; 2]>, Status, Option<Player>, Vec<bool>);

fn snapshot(game: &Game) -> Snapshot {
    let n = game.size();
    let occupied = (0..n * n).map(|i| game.is_occupied(i / n, i % n)).collect();
    (game.moves().to_vec(), game.status(), game.turn(), occupied)
}

/// The status by brute force: who holds a whole line of the board rebuilt from the moves.
fn scan(game: &Game) -> Status {
    let n = game.size();
    let mut cells = vec![None; n * n];
    for (i, &[r, c]) in game.moves().iter().enumerate() {
        let cell = &mut cells[usize::from(r) * n + usize::from(c)];
        assert!(cell.is_none(), "a cell played twice");
        *cell = Some(Player::for_move(i));
    }
    let full = |line: &mut dyn Iterator<Item = (usize, usize)>| {
        let marks: Vec<Option<Player>> = line.map(|(r, c)| cells[r * n + c]).collect();
        let first = marks[0]?;
        marks.iter().all(|&m| m == Some(first)).then_some(first)
    };
    let mut winners = Vec::new();
    for i in 0..n {
        winners.extend(full(&mut (0..n).map(|c| (i, c))).map(|p| (p, LineKind::Row, i)));
        winners.extend(full(&mut (0..n).map(|r| (r, i))).map(|p| (p, LineKind::Col, i)));
    }
    winners.extend(full(&mut (0..n).map(|i| (i, i))).map(|p| (p, LineKind::Diag, 0)));
    winners.extend(full(&mut (0..n).map(|i| (i, n - 1 - i))).map(|p| (p, LineKind::AntiDiag, 0)));
    match game.status() {
        // The engine names one line; it must be one of the full lines.
        Status::Won { winner, line } => {
            assert!(winners.contains(&(winner, line.kind, line.index as usize)), "{line:?} is not full of {winner:?}");
            assert!(winners.iter().all(|w| w.0 == winner), "two winners");
            game.status()
        }
        _ if !winners.is_empty() => panic!("a full line the engine missed: {winners:?}"),
        _ if game.moves().len() == n * n => Status::Draw,
        _ => Status::InProgress { turn: Player::for_move(game.moves().len()) },
    }
}

fuzz_target!(|input: Input| {
    let size =
        if input.size >= 240 { 30 + usize::from(input.size % 11) } else { usize::from(input.size % 12) + 1 };
    let least = Game::min_win(size);
    let win = least + usize::from(input.win) % (size - least + 1);
    let Ok(mut game) = Game::with_win(size, win) else { panic!("size {size}, win {win} are valid") };
    // The whole game before each applied move, for undo.
    let mut history: Vec<Game> = Vec::new();
    let coord = |v: u8| usize::from(v) % (size + 2); // sometimes off the board
    for op in input.ops {
        let before = snapshot(&game);
        let whole = game.clone();
        let result = match op {
            Op::Play(r, c) => Some(game.play(coord(r), coord(c))),
            Op::PlayAs(x, r, c) => {
                Some(game.play_as(if x { Player::X } else { Player::O }, coord(r), coord(c)))
            }
            Op::Undo => {
                let undone = game.undo();
                assert_eq!(undone.is_some(), !history.is_empty());
                if undone.is_some() {
                    assert_eq!(Some(&game), history.pop().as_ref(), "undo restores the state");
                }
                None
            }
        };
        match result {
            Some(Ok(status)) => {
                assert_eq!(status, game.status());
                assert_eq!(game.moves().len(), before.0.len() + 1);
                history.push(whole);
            }
            Some(Err(_)) => assert_eq!(snapshot(&game), before, "a refused move changes nothing"),
            None => {}
        }
        if win == size {
            assert_eq!(game.status(), scan(&game));
        }
        let mut board = Board::new(size, win);
        for &[r, c] in game.moves() {
            let _ = board.play(usize::from(r), usize::from(c));
        }
        assert_eq!(game.status(), board.status(), "the reference board agrees");
        assert_eq!(game.turn(), match game.status() {
            Status::InProgress { turn } => Some(turn),
            _ => None,
        });
    }
});
