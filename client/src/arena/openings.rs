//! The openings a match is played from: read from a file in Gomocup's
//! format, or made at random from a seed, each checked with the engine so
//! that none completes a line (the server would refuse it).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tictactoe_protocol::Game;

/// An opening: moves `[row, col]`, X first, then alternately.
pub type Opening = Vec<[u16; 2]>;

/// Where the match's openings come from.
#[derive(Debug, Clone)]
pub enum Openings {
    /// No opening: every pair starts from the empty board.
    Empty,
    /// These openings, in order, cycling.
    Listed(Vec<Opening>),
    /// Random openings of this many moves, from this seed.
    Random { plies: usize, rng: Box<StdRng> },
}

impl Openings {
    /// The opening of the next pair.
    pub fn next(&mut self, pair: usize, size: usize, win: usize) -> Opening {
        match self {
            Openings::Empty => Vec::new(),
            Openings::Listed(list) => list[pair % list.len()].clone(),
            Openings::Random { plies, rng } => random(rng, *plies, size, win),
        }
    }

    /// Random openings of `plies` moves from `seed`: the same seed, the same openings.
    pub fn random(plies: usize, seed: u64) -> Openings {
        Openings::Random { plies, rng: Box::new(StdRng::seed_from_u64(seed)) }
    }
}

/// Reads openings in Gomocup's format: one a line, comma-separated `x,y`
/// offsets from the centre (`⌊size/2⌋`), x the column (rightward), y the
/// row (downward), spaces after commas allowed. Blank lines are skipped.
/// Each must fit the board and complete no line.
pub fn parse(text: &str, size: usize, win: usize) -> Result<Vec<Opening>, String> {
    let centre = (size / 2) as i64;
    let mut openings = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = |why: String| format!("line {}: {why}", index + 1);
        let numbers: Vec<i64> = line
            .split(',')
            .map(|n| n.trim().parse::<i64>().map_err(|_| at(format!("{:?} is not a number", n.trim()))))
            .collect::<Result<_, _>>()?;
        if numbers.len() % 2 != 0 {
            return Err(at("an odd count of numbers (x,y pairs expected)".into()));
        }
        let mut opening = Opening::new();
        for xy in numbers.chunks(2) {
            let (row, col) = (centre + xy[1], centre + xy[0]);
            let on_board = |v: i64| (0..size as i64).contains(&v);
            if !on_board(row) || !on_board(col) {
                return Err(at(format!("{},{} is off the {size}×{size} board", xy[0], xy[1])));
            }
            opening.push([row as u16, col as u16]);
        }
        check(&opening, size, win).map_err(at)?;
        openings.push(opening);
    }
    if openings.is_empty() {
        return Err("no opening in the file".into());
    }
    Ok(openings)
}

/// Whether `opening` can start a game: every move on an empty cell, none
/// completing a line, the board not filled.
pub fn check(opening: &[[u16; 2]], size: usize, win: usize) -> Result<(), String> {
    let moves: Vec<[i64; 2]> = opening.iter().map(|&[r, c]| [r.into(), c.into()]).collect();
    tictactoe_protocol::Rules { size, win, clock: None }.opening(&moves).map(drop)
}

/// A random opening of `plies` moves that completes no line (fewer when the
/// board cannot hold that many: an opening leaves at least one cell free).
fn random(rng: &mut StdRng, plies: usize, size: usize, win: usize) -> Opening {
    let plies = plies.min(size * size - 1);
    'again: loop {
        let Ok(mut game) = Game::with_win(size, win) else { return Vec::new() };
        while game.moves().len() < plies {
            let free: Vec<(usize, usize)> = (0..size * size)
                .map(|i| (i / size, i % size))
                .filter(|&(r, c)| !game.is_occupied(r, c))
                .collect();
            let (row, col) = free[rng.random_range(0..free.len())];
            match game.play(row, col) {
                Ok(status) if !status.is_over() => {}
                _ => continue 'again,
            }
        }
        return game.moves().to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gomocup_offsets_are_columns_then_rows_from_the_centre() {
        let openings = parse("0,0, 1,-1\n\n-2, 3\n", 15, 5).expect("parses");
        // Centre 7: x 1 is column 8, y -1 is row 6.
        assert_eq!(openings, vec![vec![[7, 7], [6, 8]], vec![[10, 5]]]);
    }

    #[test]
    fn a_bad_opening_is_refused_naming_its_line() {
        assert_eq!(parse("0,0\n9,0\n", 15, 5).unwrap_err(), "line 2: 9,0 is off the 15×15 board");
        assert_eq!(
            parse("0,0,0,0", 15, 5).unwrap_err(),
            "line 1: opening move 1 ([7, 7]) is on a taken cell"
        );
        assert!(parse("0,0,1", 15, 5).unwrap_err().contains("odd count"));
        // X takes the top row of a 3×3 board: the opening would end the game.
        let won = "-1,-1, -1,0, 0,-1, 0,0, 1,-1";
        let refused = parse(won, 3, 3).unwrap_err();
        assert!(refused.starts_with("line 1: opening move 4 ([0, 2]) completes a line"), "{refused}");
    }

    #[test]
    fn random_openings_repeat_with_their_seed_and_complete_no_line() {
        let make = |seed| {
            let mut openings = Openings::random(6, seed);
            (0..20).map(|pair| openings.next(pair, 3, 3)).collect::<Vec<_>>()
        };
        let first = make(7);
        assert_eq!(first, make(7));
        assert_ne!(first, make(8));
        for opening in &first {
            assert_eq!(opening.len(), 6);
            check(opening, 3, 3).expect("no line completed");
        }
    }
}
