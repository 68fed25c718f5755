//! The checks of an organised room's set-up (`create_room` with `host`,
//! `players`, `opening`, `games`), made before the lobby sees it: every
//! refusal names what is wrong, an opening's the move at fault.

use std::sync::Arc;

use tictactoe_protocol::{ErrorCode, Rules};

use crate::cmd::Organise;
use crate::core::text::check_name;

/// What `create_room` asked for beyond the board, as the client sent it.
pub struct Asked {
    pub host: bool,
    pub players: Option<[String; 2]>,
    pub opening: Option<Vec<[i64; 2]>>,
    pub games: Option<i64>,
}

/// The room's set-up, or the refusal: `None` for a plain private room.
pub fn organise(rules: Rules, asked: Asked) -> Result<Option<Organise>, (ErrorCode, String)> {
    let Asked { host, players, opening, games } = asked;
    if !host && (players.is_some() || games.is_some()) {
        let text = "players and games are for an organiser's room: send host: true with them";
        return Err((ErrorCode::BadMessage, text.into()));
    }
    let opening = match opening {
        Some(moves) => rules.opening(&moves).map_err(|text| (ErrorCode::InvalidOpening, text))?,
        None => Vec::new(),
    };
    if !host && opening.is_empty() {
        return Ok(None);
    }
    let players = match players {
        None => None,
        Some([x, o]) => {
            for name in [&x, &o] {
                check_name(name.trim()).map_err(|why| (ErrorCode::InvalidName, format!("players: {why}")))?;
            }
            let (x, o) = (x.trim(), o.trim());
            if crate::core::account::name_key(x) == crate::core::account::name_key(o) {
                let text = format!("players names {x:?} twice: a seat each for two players");
                return Err((ErrorCode::InvalidName, text));
            }
            Some([Arc::from(x), Arc::from(o)])
        }
    };
    let games = games.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    Ok(Some(Organise { host, players, opening, games }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(opening: &[[i64; 2]]) -> Asked {
        Asked { host: true, players: None, opening: Some(opening.to_vec()), games: None }
    }

    #[test]
    fn an_opening_is_refused_naming_the_move_at_fault() {
        let three = Rules::classic(3);
        let refused = |rules, moves: &[[i64; 2]]| organise(rules, asked(moves)).err();
        let (code, text) = refused(three, &[[1, 1], [0, 3]]).unwrap();
        assert_eq!(code, ErrorCode::InvalidOpening);
        assert!(text.starts_with("opening move 1 ([0, 3]) is off"), "{text}");
        assert!(refused(three, &[[-1, 0]]).unwrap().1.starts_with("opening move 0 ([-1, 0]) is off"));
        assert!(refused(three, &[[1, 1], [1, 1]]).unwrap().1.contains("move 1 ([1, 1]) is on a taken cell"));
        let line = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];
        assert!(refused(three, &line).unwrap().1.contains("move 4 ([0, 2]) completes a line"));
        let full = [[0, 0], [0, 1], [0, 2], [1, 1], [1, 0], [1, 2], [2, 1], [2, 0], [2, 2]];
        assert!(refused(three, &full).unwrap().1.contains("move 8 ([2, 2]) fills the board"));
        let ok = organise(three, asked(&[[1, 1], [0, 0], [2, 2]])).unwrap().unwrap();
        assert_eq!(ok.opening, [[1, 1], [0, 0], [2, 2]]);
    }

    #[test]
    fn players_and_games_need_a_host_and_two_names() {
        let three = Rules::classic(3);
        let plain = Asked { host: false, players: None, opening: None, games: None };
        assert_eq!(organise(three, plain), Ok(None));
        let without_host =
            Asked { host: false, players: Some(["a".into(), "b".into()]), opening: None, games: None };
        assert_eq!(organise(three, without_host).unwrap_err().0, ErrorCode::BadMessage);
        let twice =
            Asked { host: true, players: Some(["Ann".into(), "ann".into()]), opening: None, games: Some(2) };
        assert_eq!(organise(three, twice).unwrap_err().0, ErrorCode::InvalidName);
        let good =
            Asked { host: true, players: Some(["ann".into(), "bob".into()]), opening: None, games: Some(2) };
        let o = organise(three, good).unwrap().unwrap();
        assert_eq!(
            (o.host, o.players.map(|p| p.map(|n| n.to_string())), o.games),
            (true, Some(["ann".to_owned(), "bob".to_owned()]), Some(2))
        );
    }
}
