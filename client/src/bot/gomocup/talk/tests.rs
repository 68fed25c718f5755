use super::*;

const TIMING: Timing = Timing { turn_ms: 900, match_ms: 60_000, left_ms: 40_000 };

fn sent(outs: &[Out]) -> Vec<&str> {
    outs.iter()
        .filter_map(|o| match o {
            Out::Send(line) => Some(line.as_str()),
            _ => None,
        })
        .collect()
}

fn game(moves: &[(usize, usize)]) -> Game {
    let mut g = Game::with_win(15, 5).expect("15x15");
    for &(r, c) in moves {
        g.play(r, c).expect("legal");
    }
    g
}

const TIMES: [&str; 3] = ["INFO timeout_turn 900", "INFO timeout_match 60000", "INFO time_left 40000"];

#[test]
fn a_first_game_starts_the_brain_then_begins_and_turns_with_column_first() {
    let mut talk = Talk::new(367_001_600);
    assert_eq!(sent(&talk.ask(&game(&[]), TIMING, 1)), ["START 15"]);
    let outs = talk.hear("OK");
    let mut want = vec!["INFO max_memory 367001600", "INFO rule 0"];
    want.extend(TIMES);
    want.push("BEGIN");
    assert_eq!(sent(&outs), want);
    // x,y is column, row: "7,3" is row 3, column 7.
    assert_eq!(talk.hear("MESSAGE thinking hard"), [Out::Log("brain says: thinking hard".into())]);
    assert_eq!(talk.hear("7,3"), [Out::Chosen((3, 7))]);
    // The opponent answers at row 4, column 8: TURN x,y = 8,4.
    let outs = talk.ask(&game(&[(3, 7), (4, 8)]), TIMING, 1);
    assert_eq!(sent(&outs)[3..], ["TURN 8,4"]);
    assert_eq!(talk.hear(" 9 , 5 "), [Out::Chosen((5, 9))]);
}

#[test]
fn a_brain_moving_second_gets_turn_and_a_position_it_does_not_know_gets_board() {
    let mut talk = Talk::new(1);
    talk.ask(&game(&[(7, 7)]), TIMING, 1);
    assert_eq!(sent(&talk.hear("OK"))[5..], ["TURN 7,7"]);
    assert_eq!(talk.hear("8,8"), [Out::Chosen((8, 8))]);
    // A resume where the brain's move never reached the server, and O's second
    // move came elsewhere: the whole board, in move order, own stones 1.
    let g = game(&[(7, 7), (6, 6), (7, 8)]);
    let outs = talk.ask(&g, TIMING, 1);
    assert_eq!(sent(&outs)[3..], ["BOARD", "7,7,2", "6,6,1", "8,7,2", "DONE"]);
    // A cell the brain was just told is taken: the game is lost.
    assert_eq!(talk.hear("6,6"), [Out::Lost("brain played \"6,6\", a taken cell".into())]);
}

#[test]
fn an_opening_is_sent_as_a_board_after_start() {
    let mut talk = Talk::new(1);
    let g = game(&[(7, 7), (7, 8), (8, 8), (6, 6)]);
    talk.ask(&g, TIMING, 1);
    let board = ["BOARD", "7,7,1", "8,7,2", "8,8,1", "6,6,2", "DONE"];
    assert_eq!(sent(&talk.hear("OK"))[5..], board);
}

#[test]
fn the_next_game_restarts_the_brain_or_starts_a_new_one() {
    let mut talk = Talk::new(1);
    talk.ask(&game(&[]), TIMING, 1);
    talk.hear("OK");
    talk.hear("7,7");
    // Game 2, same board: RESTART, then the position.
    assert_eq!(sent(&talk.ask(&game(&[(0, 0)]), TIMING, 2)), ["RESTART"]);
    assert_eq!(sent(&talk.hear("OK"))[5..], ["TURN 0,0"]);
    talk.hear("1,1");
    // A brain that does not know RESTART is started afresh.
    assert_eq!(sent(&talk.ask(&game(&[]), TIMING, 3)), ["RESTART"]);
    let outs = talk.hear("UNKNOWN RESTART");
    assert_eq!(outs.last(), Some(&Out::Respawn));
    talk.forget();
    assert_eq!(sent(&talk.ask(&game(&[]), TIMING, 3)), ["START 15"]);
    talk.hear("OK");
    talk.hear("7,7");
    // Another board size: a new process.
    let big = Game::with_win(19, 5).expect("19x19");
    assert_eq!(talk.ask(&big, TIMING, 4), [Out::Respawn]);
}

#[test]
fn failures_lose_the_game_in_words() {
    let lost = |answer: &str| {
        let mut talk = Talk::new(1);
        talk.ask(&game(&[]), TIMING, 1);
        talk.hear("OK");
        talk.hear(answer)
    };
    assert_eq!(lost("ERROR no idea"), [Out::Lost("brain answered \"ERROR no idea\"".into())]);
    assert_eq!(lost("UNKNOWN BEGIN"), [Out::Lost("brain answered \"UNKNOWN BEGIN\"".into())]);
    assert_eq!(lost("15,0"), [Out::Lost("brain played \"15,0\", off the 15×15 board".into())]);
    assert_eq!(lost("h8"), [Out::Lost("brain answered \"h8\", not a move \"x,y\"".into())]);
    assert_eq!(lost("1,2,3"), [Out::Lost("brain answered \"1,2,3\", not a move \"x,y\"".into())]);
    // SUGGEST and DEBUG are only logged; the move still comes.
    let mut talk = Talk::new(1);
    talk.ask(&game(&[]), TIMING, 1);
    talk.hear("OK");
    assert!(matches!(talk.hear("SUGGEST 3,3").as_slice(), [Out::Log(_)]));
    assert!(matches!(talk.hear("DEBUG x").as_slice(), [Out::Log(_)]));
    assert_eq!(talk.hear("3,3"), [Out::Chosen((3, 3))]);
    // Said when nothing was asked: logged.
    assert!(matches!(talk.hear("7,7").as_slice(), [Out::Log(_)]));
}

#[test]
fn a_refused_board_is_refused_in_the_brains_words() {
    let mut talk = Talk::new(1);
    assert_eq!(sent(&talk.vet(40)), ["START 40"]);
    assert_eq!(
        talk.hear("ERROR Unsupported board size!"),
        [Out::Refused("the brain says: Unsupported board size!".into())]
    );
    assert_eq!(talk.vet(15).len(), 1);
    assert_eq!(talk.hear("OK"), [Out::Accepted]);
    // The game after a vetted START restarts the brain (its board is fresh anyway).
    assert_eq!(sent(&talk.ask(&game(&[]), TIMING, 1)), ["RESTART"]);
    // At a game's start, START refused.
    let mut talk = Talk::new(1);
    talk.ask(&game(&[]), TIMING, 1);
    assert_eq!(talk.hear("ERROR"), [Out::Refused("the brain does not play this board".into())]);
    // Not five in a row: refused without asking.
    let three = Game::new(3).expect("3x3");
    assert!(matches!(talk.ask(&three, TIMING, 2).as_slice(), [Out::Refused(_)]));
}

#[test]
fn xy_and_cells_convert_both_ways() {
    assert_eq!(xy([3, 7]), "7,3");
    assert_eq!(parse_cell("7,3", 15), Ok([3, 7]));
    assert_eq!(parse_cell("14,14", 15), Ok([14, 14]));
    assert!(parse_cell("-1,3", 15).is_err());
    assert!(parse_cell("", 15).is_err());
}

#[test]
fn an_error_about_an_info_line_is_logged_and_the_move_still_awaited() {
    let mut talk = Talk::new(367_001_600);
    talk.ask(&game(&[]), TIMING, 1);
    talk.hear("OK");
    // A brain busy with its last search took `INFO timeout_turn 900` apart.
    for line in ["ERROR Unknown command: TIMEOUT_TURN", "ERROR Unknown command: 900"] {
        assert!(matches!(&talk.hear(line)[..], [Out::Log(_)]), "{line}");
    }
    assert_eq!(talk.hear("7,7"), [Out::Chosen((7, 7))]);
    // An error about the move itself still loses.
    talk.ask(&game(&[(7, 7), (8, 8)]), TIMING, 1);
    assert!(matches!(&talk.hear("ERROR cannot move")[..], [Out::Lost(_)]));
}
