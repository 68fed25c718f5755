//! `ttt --server A,B`: several server URLs tried in turn. A first URL that
//! refuses connections is passed over for the next (by bots, `who`, the
//! HTTP API of `history`, and `register`, which saves the account for
//! each); and a game played on an instance of a cluster that is killed
//! goes on on another instance, which the client reconnects to by itself.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::postgres::{name_of, shared};
use tictactoe_tests::redis::{Redis, instance};
use tictactoe_tests::tmux::{Session, invite_code};
use tictactoe_tests::{TempDir, TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// A `ws://` URL where nothing listens: a port bound and let go.
fn closed_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("ws://{addr}")
}

/// `ttt ARGS` with `home` as its HOME and none of the machine's own ttt settings.
fn ttt(home: &TempDir, args: &[&str]) -> Command {
    let mut cmd = Command::new(TTT);
    cmd.args(args).env("HOME", &home.path).stdin(Stdio::null());
    for var in
        ["TTT_TOKEN", "TTT_SERVER", "TTT_STATE_DIR", "TTT_CONFIG_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME"]
    {
        cmd.env_remove(var);
    }
    cmd
}

/// Waits for `child` to exit, within `limit`, and returns what it printed.
async fn output(child: std::process::Child, limit: Duration) -> Output {
    let waited = tokio::time::timeout(limit, tokio::task::spawn_blocking(move || child.wait_with_output()));
    waited.await.expect("ttt finished in time").expect("join").expect("ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_server_that_refuses_connections_is_passed_over_for_the_next() {
    let home = TempDir::new("servers-closed");
    let config = Config { max_messages_per_second: 0, database: home.database("ttt.db"), ..test_config() };
    let server = TestServer::start(config).await;
    let (closed, url) = (closed_url(), server.url());
    let list = format!("{closed},{url}");
    // An account registered through the list is saved for each of its servers.
    let registered = ttt(&home, &["register", "zoe", "--server", &list]).output().expect("register");
    assert!(registered.status.success(), "{}", String::from_utf8_lossy(&registered.stderr));
    let saved = std::fs::read_dir(home.path.join(".config/ttt/accounts")).expect("accounts").count();
    assert_eq!(saved, 2, "one accounts file per server");
    // The HTTP API is asked of the first server that answers; the account is found under the list.
    let history = ttt(&home, &["history", "--server", &list]).output().expect("history");
    let said = String::from_utf8_lossy(&history.stdout);
    assert!(history.status.success() && said.contains("zoe has no recorded games yet."), "{said}");
    let mut creator = ttt(&home, &["bot", "--server", &list, "--create", "--think-ms", "50"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ttt bot");
    // The code is on stdout's first line; the invite on stderr.
    let mut out = BufReader::new(creator.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("room line");
    let code = line.trim().strip_prefix("room: ").expect("room: CODE").to_owned();
    let joiner = ttt(&home, &["bot", "--server", &list, "--join", &code, "--think-ms", "50"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ttt bot");
    let (created, joined) =
        (output(creator, Duration::from_secs(30)).await, output(joiner, Duration::from_secs(30)).await);
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("the creator's tally");
    for (bot, stdout) in [(&created, rest), (&joined, String::from_utf8_lossy(&joined.stdout).into_owned())] {
        let stderr = String::from_utf8_lossy(&bot.stderr);
        assert!(bot.status.success(), "{stdout}\n{stderr}");
        assert!(["wins: 1", "draws: 1", "losses: 1"].iter().any(|r| stdout.contains(r)), "{stdout}");
    }
    // The server that answered comes first in the invite, and its page is the one named.
    let stderr = String::from_utf8_lossy(&created.stderr);
    let web = format!("http://{}/r/{code}", url.trim_start_matches("ws://").trim_end_matches('/'));
    let hint = format!("play --join {code} --server {url},{closed}  or open {web}");
    assert!(stderr.contains(&hint), "{stderr}");
    // A command that only asks: the same list works.
    let who = ttt(&home, &["who", "--server", &list]).output().expect("who");
    assert!(who.status.success(), "{}", String::from_utf8_lossy(&who.stderr));
    // Nothing answers at all: both failures are told.
    let none = ttt(&home, &["who", "--server", &format!("{closed},{}", closed_url())]).output().expect("who");
    let said = String::from_utf8_lossy(&none.stderr);
    assert!(!none.status.success());
    assert!(said.starts_with("ttt: no server answered: cannot reach the server at ws://"), "{said}");
    assert_eq!(said.matches("cannot reach").count(), 2, "{said}");
    server.shutdown().await;
}

/// Waits until `n` moves of the game in `room` are saved in database `url`.
async fn saved(url: &str, room: &str, n: usize) {
    let sql = format!("SELECT coalesce(sum(length(cells)) / 4, 0) FROM live_moves WHERE room = '{room}'");
    let deadline = Instant::now() + Duration::from_secs(5);
    while shared().psql(name_of(url), &sql).trim() != n.to_string() {
        assert!(Instant::now() < deadline, "{n} moves of {room} were not saved");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_given_two_instances_goes_on_on_the_second_when_the_first_is_killed() {
    tictactoe_tests::tools::require("tmux");
    let database = shared().database("client-servers");
    let redis = Redis::start();
    let spill = TempDir::new("client-servers-spill");
    let a = instance(&database, &redis, "a", &spill);
    let b = instance(&database, &redis, "b", &spill);
    let home = TempDir::new("client-servers");
    let list = format!("{},{}", a.url(), b.url());
    let cmd = format!(
        "exec env -u TTT_TOKEN -u TTT_STATE_DIR -u TTT_CONFIG_DIR -u XDG_STATE_HOME -u XDG_CONFIG_HOME HOME={} {TTT} play --server {list} --create --seat x --name ann",
        home.path.display()
    );
    let x = Session::start("ttt-servers", (120, 30), &cmd);
    let invite = x.shows(" --server ", 10).await;
    let code = invite_code(&invite).or_else(|| invite_code(&x.joined())).expect("a code");
    assert!(x.joined().contains(&format!("--server {list}")), "the invite names both servers");
    // The opponent plays on instance a too.
    let mut o = a.client().await;
    o.send(json!({"type": "join_room", "room": code})).await;
    let token = o.recv_type("game_started").await["resume_token"].clone();
    // X a1, O a2, X b1.
    x.shows("your turn", 10).await;
    x.keys(&["a1", "Enter"]);
    o.recv_type("moved").await;
    o.play(1, 0).await;
    x.shows("your turn", 10).await;
    x.keys(&["b1", "Enter"]);
    o.recv_type("moved").await;
    saved(&database, &code, 3).await;

    a.signal("KILL");
    let _ = o.until_close().await;
    // The opponent comes back on b, which holds the resume until it has adopted the game.
    let mut o = b.client().await;
    o.send(json!({"type": "resume", "token": token})).await;
    let state = o.recv_any(&["state", "error"]).await;
    assert_eq!(
        (&state["type"], &state["moves"]),
        (&json!("state"), &json!([[0, 0], [1, 0], [0, 1]])),
        "{state}"
    );
    // ttt, given a and b, reconnected to b by itself: the game goes on to its end.
    o.play(1, 1).await;
    x.shows("your turn", 15).await;
    x.keys(&["c1", "Enter"]);
    let over = o.recv_type("game_over").await;
    assert_eq!((&over["winner"], &over["reason"]), (&json!(1), &json!("line")), "{over}");
    let end = x.shows("You won", 10).await;
    assert!(!end.contains("CONNECTION LOST"), "{end}");
    drop(a);
}
