use clap::Parser;

use super::*;
use crate::cli::{Cli, Command};

fn parse(args: &[&str]) -> Result<TournamentCommand, String> {
    let all = ["ttt", "tournament"].iter().chain(args);
    match Cli::try_parse_from(all) {
        Ok(Cli { command: Command::Tournament(t) }) => Ok(t.command),
        Ok(_) => Err("another command".into()),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn create_reads_the_clock_fractional_minutes_and_the_start_delay() {
    let parsed = parse(&[
        "create",
        "Evening arena",
        "--size",
        "4",
        "--win",
        "3",
        "--clock",
        "3+2",
        "--minutes",
        "1.5",
        "--starts-in",
        "30",
    ]);
    let Ok(TournamentCommand::Create { name, size, win, clock, minutes, starts_in, account, .. }) = parsed
    else {
        panic!("not a create");
    };
    assert_eq!((name.as_str(), size, win, account), ("Evening arena", 4, Some(3), None));
    assert_eq!(clock, Fischer { initial_ms: 180_000, increment_ms: 2_000 });
    assert_eq!((minutes, starts_in), (90_000, 30_000));
    // Five seconds a side, as minutes.
    let Ok(TournamentCommand::Create { clock, starts_in, .. }) =
        parse(&["create", "blitz", "--clock", "0.08333+0", "--minutes", "1"])
    else {
        panic!("not a create");
    };
    assert_eq!((clock.initial_ms, clock.increment_ms, starts_in), (5_000, 0, 0));
}

#[test]
fn create_refuses_a_missing_clock_and_words_that_are_not_numbers() {
    assert!(parse(&["create", "x", "--minutes", "5"]).err().unwrap_or_default().contains("--clock"));
    let bad = parse(&["create", "x", "--clock", "3+2", "--minutes", "soon"]).err().unwrap_or_default();
    assert!(bad.contains("\"soon\" is not a number of minutes"), "{bad}");
    let bad = parse(&["create", "x", "--clock", "3", "--minutes", "5"]).err().unwrap_or_default();
    assert!(bad.contains("is not a time control"), "{bad}");
    assert!(parse(&["create", "x", "--clock", "3+2", "--minutes", "-1"]).is_err());
}

#[test]
fn list_join_and_watch_take_their_flags() {
    assert!(matches!(parse(&["list", "--json"]), Ok(TournamentCommand::List { json: true, .. })));
    assert!(matches!(parse(&["list"]), Ok(TournamentCommand::List { json: false, .. })));
    let Ok(TournamentCommand::Join { id, name, .. }) = parse(&["join", "T7", "--name", "ann"]) else {
        panic!("not a join");
    };
    assert_eq!((id.as_str(), name.as_deref()), ("T7", Some("ann")));
    assert!(matches!(parse(&["watch", "T7"]), Ok(TournamentCommand::Watch { id, .. }) if id == "T7"));
    assert!(parse(&["watch"]).is_err(), "watch needs an id");
}
