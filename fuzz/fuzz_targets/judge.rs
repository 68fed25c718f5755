//! `judge` on arbitrary sizes, win lengths and move lists: never a panic; a verdict agrees
//! with the engine replaying the same list, and an error names a real index
//! at which the engine refuses (or the game was already over).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tictactoe_protocol::{Game, JudgeError, Verdict, judge};

#[derive(Debug, Arbitrary)]
struct Input {
    size: u8,
    win: u8,
    moves: Vec<[u8; 2]>,
}

fuzz_target!(|input: Input| {
    let size = usize::from(input.size % 16);
    let win = usize::from(input.win % 17);
    let moves: Vec<[usize; 2]> = input.moves.iter().map(|&[r, c]| [usize::from(r), usize::from(c)]).collect();
    let verdict = judge(size, win, &moves);
    let Ok(mut game) = Game::with_win(size, win) else {
        assert!(verdict.is_err(), "size 0 and win lengths outside min(3, size)..=size are refused");
        return;
    };
    let mut refused_at = None;
    for (i, &[r, c]) in moves.iter().enumerate() {
        if game.play(r, c).is_err() {
            refused_at = Some(i);
            break;
        }
    }
    match (verdict, refused_at) {
        (Ok(v), None) => assert_eq!(v, Verdict::from_status(game.status())),
        (Err(JudgeError::IllegalMove { index, reason }), Some(i)) => {
            assert_eq!(index, i, "judge and engine refuse the same move");
            assert_eq!(game.play(moves[i][0], moves[i][1]), Err(reason), "for the same reason");
        }
        (v, r) => panic!("judge says {v:?}, the engine refuses at {r:?}"),
    }
});
