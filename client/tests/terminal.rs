//! `ttt` as people run it, in a real terminal (tmux): two players on one
//! machine sharing a HOME, a saved account playing as itself, and another
//! player's hostile text kept away from the terminal.

use std::process::{Command, Stdio};

use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::tmux::{Session, invite_code};
use tictactoe_tests::{Client, TempDir, TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// A shell command running `ttt ARGS` with `home` as its HOME, and none of
/// the machine's own ttt settings.
fn in_home(home: &TempDir, args: &str) -> String {
    format!(
        "exec env -u TTT_TOKEN -u TTT_STATE_DIR -u TTT_CONFIG_DIR -u XDG_STATE_HOME -u XDG_CONFIG_HOME HOME={} {TTT} {args}",
        home.path.display()
    )
}

/// The room code a `ttt play --create` session tells the friend to join,
/// once its invite is whole on screen.
async fn code_on(session: &Session) -> String {
    let screen = session.shows(" --server ", 10).await;
    invite_code(&screen)
        .or_else(|| invite_code(&session.joined()))
        .unwrap_or_else(|| panic!("an invite with a code:\n{screen}"))
}

/// The names of the seat files kept in `home`, sorted.
fn seat_files(home: &TempDir) -> Vec<String> {
    let seats = home.path.join(".local/state/ttt/seats");
    let mut files: Vec<String> = std::fs::read_dir(&seats)
        .expect("seats kept")
        .flatten()
        .filter(|f| f.path().is_file())
        .map(|f| f.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

/// The one line of `screen` holding `needle`.
fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{screen}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_in_one_home_each_take_back_their_own_seat() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(Config { reconnect_grace_ms: 20_000, ..test_config() }).await;
    let url = server.url();
    let home = TempDir::new("one-home");
    // The README's quick start on one machine, in 80-column terminals.
    let ann = Session::start(
        "ttt-home-ann",
        (80, 24),
        &in_home(&home, &format!("play --server {url} --name ann --create")),
    );
    let code = code_on(&ann).await;
    let bob = Session::start(
        "ttt-home-bob",
        (80, 24),
        &in_home(&home, &format!("play --server {url} --name bob --join {code}")),
    );
    let bob_screen = bob.shows("You are", 10).await;
    let ann_screen = ann.shows("You are", 10).await;
    // The room code is whole on the title line; the status line does not wrap.
    assert!(line_with(&ann_screen, "tictactoe — room").contains(&code), "{ann_screen}");
    for (screen, me) in [(&ann_screen, "ann"), (&bob_screen, "bob")] {
        let status = line_with(screen, "You are");
        assert!(status.contains(&format!("({me})")) && status.contains("vs "), "{screen}");
        assert!(status.contains("your turn") || status.contains("to move"), "on one line:\n{screen}");
    }
    let ann_is_x = ann_screen.contains("You are X (ann)");
    let (x, o) = if ann_is_x { (&ann, &bob) } else { (&bob, &ann) };
    x.shows("your turn", 10).await;
    x.keys(&["b2", "Enter"]);
    o.shows("your turn", 10).await;
    // Each seat in its own file.
    let files = seat_files(&home);
    assert_eq!(files.len(), 2, "one seat file per player: {files:?}");
    assert!(files[0].starts_with("ann.") && files[1].starts_with("bob."), "{files:?}");

    // ann's client is killed outright, then started again with the same command.
    let killed = Command::new("kill").args(["-9", &ann.pid()]).status().expect("kill");
    assert!(killed.success());
    bob.shows("opponent disconnected", 10).await;
    drop(ann);
    let again = Session::start(
        "ttt-home-ann2",
        (80, 24),
        &in_home(&home, &format!("play --server {url} --name ann --create")),
    );
    let back = again.shows("took your seat back", 10).await;
    assert!(line_with(&back, "You are").contains("(ann)"), "ann's own seat:\n{back}");
    // bob was not disturbed: his seat, his connection, the same game.
    let seen = bob.shows("opponent reconnected", 10).await;
    assert!(line_with(&seen, "You are").contains("(bob)"), "{seen}");
    for wrong in ["took over", "Game over", "CONNECTION LOST", "RECONNECTING"] {
        assert!(!seen.contains(wrong), "bob's screen says {wrong:?}:\n{seen}");
    }
    // And the game goes on between them.
    // X has made one move: O is to move.
    let (mover, other) = if ann_is_x { (&bob, &again) } else { (&again, &bob) };
    mover.shows("your turn", 10).await;
    mover.keys(&["a1", "Enter"]);
    other.shows("your turn", 10).await;
    server.shutdown().await;
}

/// Kills the client in `session` outright (as a crash would) and waits
/// until the opponent's screen, `other`, says so.
async fn kill_9(session: Session, other: &Session) {
    let killed = Command::new("kill").args(["-9", &session.pid()]).status().expect("kill");
    assert!(killed.success());
    other.shows("opponent disconnected", 10).await;
    drop(session);
}

/// The mark `screen`'s status line says its player has.
fn mark_on(screen: &str) -> &'static str {
    let status = line_with(screen, "You are");
    if status.contains("You are X") { "X" } else { "O" }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nameless_players_in_one_home_each_take_back_their_own_seat_with_the_same_command() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(Config { reconnect_grace_ms: 20_000, ..test_config() }).await;
    let url = server.url();
    let home = TempDir::new("nameless");
    // No --name on either: both play as "player", in one HOME.
    let create = in_home(&home, &format!("play --server {url} --create"));
    let creator = Session::start("ttt-nameless-a", (100, 30), &create);
    let code = code_on(&creator).await;
    // The invite names the room's web page too.
    let invite = creator.joined();
    assert!(
        invite.contains(&format!(
            "or open http://{}/r/{code}",
            url.trim_start_matches("ws://").trim_end_matches('/')
        )),
        "{invite}"
    );
    // The friend runs the hint as printed.
    let join = in_home(&home, &format!("play --join {code} --server {url}"));
    let joiner = Session::start("ttt-nameless-b", (100, 30), &join);
    let joiner_mark = mark_on(&joiner.shows("You are", 10).await);
    let creator_mark = mark_on(&creator.shows("You are", 10).await);
    assert_ne!(joiner_mark, creator_mark);
    let (x, o) = if creator_mark == "X" { (&creator, &joiner) } else { (&joiner, &creator) };
    x.shows("your turn", 10).await;
    x.keys(&["b2", "Enter"]);
    o.shows("your turn", 10).await;
    assert_eq!(seat_files(&home).len(), 2, "a seat file per client: {:?}", seat_files(&home));
    let creator_is_x = creator_mark == "X";

    // The joiner dies and is started again with the same command: its own seat, not the creator's.
    kill_9(joiner, &creator).await;
    let joiner = Session::start("ttt-nameless-b2", (100, 30), &join);
    let back = joiner.shows("took your seat back", 10).await;
    assert_eq!(mark_on(&back), joiner_mark, "the joiner's own seat:\n{back}");
    let seen = creator.shows("opponent reconnected", 10).await;
    assert_eq!(mark_on(&seen), creator_mark, "{seen}");
    // O is to move (X played b2).
    let (x, o) = if creator_is_x { (&creator, &joiner) } else { (&joiner, &creator) };
    o.shows("your turn", 10).await;
    o.keys(&["a1", "Enter"]);
    x.shows("your turn", 10).await;

    // The same for the creator.
    kill_9(creator, &joiner).await;
    let creator = Session::start("ttt-nameless-a2", (100, 30), &create);
    let back = creator.shows("took your seat back", 10).await;
    assert_eq!(mark_on(&back), creator_mark, "the creator's own seat:\n{back}");
    joiner.shows("opponent reconnected", 10).await;
    let (x, o) = if creator_is_x { (&creator, &joiner) } else { (&joiner, &creator) };
    x.shows("your turn", 10).await;
    x.keys(&["c3", "Enter"]);
    let after = o.shows("your turn", 10).await;
    for wrong in ["both seats", "took over", "Game over", "CONNECTION LOST"] {
        assert!(!after.contains(wrong), "the screen says {wrong:?}:\n{after}");
    }
    assert_eq!(seat_files(&home).len(), 2, "still a seat file per client: {:?}", seat_files(&home));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_account_plays_and_challenges_as_itself_by_default() {
    tictactoe_tests::tools::require("tmux");
    let home = TempDir::new("saved-account");
    let server = TestServer::start(Config { database: home.database("ttt.db"), ..test_config() }).await;
    let url = server.url();
    let ttt = |args: &[&str]| {
        let mut cmd = Command::new(TTT);
        cmd.args(args).env("HOME", &home.path).stdin(Stdio::null());
        for var in ["TTT_TOKEN", "TTT_STATE_DIR", "TTT_CONFIG_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME"] {
            cmd.env_remove(var);
        }
        cmd
    };
    let registered = ttt(&["register", "zoe", "--server", &url]).output().expect("register");
    assert!(registered.status.success(), "{}", String::from_utf8_lossy(&registered.stderr));

    // `ttt challenge NAME` with no --name: from the account, signed in.
    let mut cy = Client::connect(&url).await;
    cy.send(json!({"type": "hello", "name": "cy"})).await;
    let challenger = ttt(&["challenge", "cy", "--server", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("challenge");
    let challenged = cy.recv_type("challenged").await;
    assert_eq!((&challenged["from"]["name"], &challenged["from"]["account"]), (&json!("zoe"), &json!(true)));
    cy.send(json!({"type": "decline", "challenge": challenged["challenge"], "reason": "busy now"})).await;
    let out =
        tokio::task::spawn_blocking(move || challenger.wait_with_output()).await.expect("join").expect("ran");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cy declined: busy now"));

    // `ttt play` with no --name, full screen: the account again.
    let play =
        Session::start("ttt-saved", (100, 30), &in_home(&home, &format!("play --server {url} --create")));
    let code = code_on(&play).await;
    cy.send(json!({"type": "join_room", "room": code})).await;
    let started = cy.recv_type("game_started").await;
    let zoe = started["players"].as_array().expect("players").iter().find(|p| p["name"] == "zoe").cloned();
    assert_eq!(zoe.map(|p| p["account"].clone()), Some(json!(true)), "{started}");
    let screen = play.shows("You are", 10).await;
    assert!(line_with(&screen, "You are").contains("(zoe 1500)"), "{screen}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_decline_reason_leaves_the_terminals_title_and_screen_alone() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(test_config()).await;
    let url = server.url();
    let home = TempDir::new("hostile");
    let mut ann = Client::connect(&url).await;
    ann.send(json!({"type": "hello", "name": "ann"})).await;
    // A title of our own and a line on the screen before `ttt challenge`
    // runs (full screen), and a line after it exits.
    let cmd = format!(
        "printf '\\033]2;calm-title\\033\\\\'; echo MARK-BEFORE; env -u TTT_TOKEN HOME={} {TTT} challenge ann --server {url} --name bob; echo SHELL-BACK; sleep 30",
        home.path.display()
    );
    let term = Session::start("ttt-hostile", (100, 30), &cmd);
    let challenged = ann.recv_type("challenged").await;
    assert_eq!(term.title(), "calm-title");
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[H";
    ann.send(json!({"type": "decline", "challenge": challenged["challenge"], "reason": hostile})).await;
    let after = term.shows("SHELL-BACK", 10).await;
    assert!(after.contains("MARK-BEFORE"), "the screen was cleared:\n{after}");
    assert!(after.contains("ann declined"), "the decline is said:\n{after}");
    assert_eq!(term.title(), "calm-title", "the title was set by the other player");
    server.shutdown().await;
}

/// A clock as the clock line shows it (`2:58`, `0:09.4`, with the running
/// clock's `]` after it), in ms.
fn shown_ms(time: &str) -> Option<u64> {
    let (minutes, seconds) = time.trim_end_matches(']').split_once(':')?;
    let seconds: f64 = seconds.parse().ok()?;
    Some(minutes.parse::<u64>().ok()? * 60_000 + (seconds * 1000.0).round() as u64)
}

/// The times on `screen`'s clock line (`X (ann) 2:58   O (cy) 3:00`), X's
/// then O's, in ms; `None` while there is no clock line.
fn clocks_on(screen: &str) -> Option<(u64, u64)> {
    let line = screen.lines().find(|l| l.contains("X (") && l.contains("O (") && !l.contains("You are"))?;
    let after = |mark: &str| {
        let rest = &line[line.find(mark)?..];
        shown_ms(rest[rest.find(')')? + 1..].split_whitespace().next()?)
    };
    Some((after("X (")?, after("O (")?))
}

/// Waits until `session`'s clock line shows `running` (`[X (` or `[O (`:
/// the running clock, bracketed without colour) and returns both times.
async fn running_clock(session: &Session, running: &str) -> (u64, u64) {
    let screen = session.shows(running, 10).await;
    clocks_on(&screen).unwrap_or_else(|| panic!("a clock line:\n{screen}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_game_shows_both_clocks_and_the_running_one_ticks() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(test_config()).await;
    let url = server.url();
    let home = TempDir::new("clocks");
    // Without colour, the running clock is the one in brackets.
    let cmd = in_home(&home, &format!("play --server {url} --name ann --create --seat x --clock 3+2"));
    let ann = Session::start("ttt-clocks", (80, 24), &format!("NO_COLOR=1 {cmd}"));
    let code = code_on(&ann).await;
    let mut cy = Client::connect(&url).await;
    cy.send(json!({"type": "hello", "name": "cy"})).await;
    cy.send(json!({"type": "join_room", "room": code})).await;
    let started = cy.recv_type("game_started").await;
    assert_eq!(started["clock"], json!({"initial_ms": 180_000, "increment_ms": 2_000}), "{started}");

    // Before each side has moved no clock runs: both show the initial time,
    // and the first move's own time is on the status line.
    let screen = ann.shows("first move", 10).await;
    assert_eq!(clocks_on(&screen), Some((180_000, 180_000)), "{screen}");
    assert!(!screen.contains("[X (") && !screen.contains("[O ("), "none running:\n{screen}");
    ann.keys(&["b2", "Enter"]);
    cy.recv_type("moved").await;
    cy.play(0, 0).await;

    // Now X's clock runs, and ticks down on screen between messages; O's stands.
    let (x1, o1) = running_clock(&ann, "[X (ann)").await;
    assert!(x1 <= 180_000 && o1 == 180_000, "no increment for a first move: {x1} {o1}");
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let screen = ann.screen();
    let (x2, o2) = clocks_on(&screen).unwrap_or_else(|| panic!("a clock line:\n{screen}"));
    assert!(x2 + 1_000 <= x1 && x2 + 4_000 >= x1, "X's clock ticked about 2 s: {x1} → {x2}\n{screen}");
    assert_eq!(o2, o1, "O's clock stands:\n{screen}");

    // X moves: the increment is added to X, and O's clock runs.
    ann.keys(&["c3", "Enter"]);
    cy.recv_type("moved").await;
    let (x3, o3) = running_clock(&ann, "[O (cy)").await;
    assert!(x3 > x2 && x3 <= x2 + 2_000, "X gained its 2 s increment (less its thinking): {x2} → {x3}");
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let (x4, o4) = clocks_on(&ann.screen()).expect("a clock line");
    assert!(o4 + 1_000 <= o3 && x4 == x3, "O's clock ticks, X's stands: {x3} {o3} → {x4} {o4}");
    server.shutdown().await;
}
