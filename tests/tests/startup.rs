//! The real `ttt-server` binary refusing to start, each time saying why and
//! what to do: a SQLite file another server is using (named, with that
//! server's pid; after a `kill -9` of that one a start is never refused),
//! a database directory that is missing or not writable, and an address
//! something else listens on.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tictactoe_tests::process::{ServerProcess, server_bin};
use tictactoe_tests::{TempDir, http_get};

/// The contract's bound on a refused start.
const REFUSED_WITHIN: Duration = Duration::from_secs(10);

/// Runs `ttt-server ARGS` (as `nobody` when `as_nobody` and the tests run as
/// root), which must exit non-zero within [`REFUSED_WITHIN`]: what it said.
fn refused(args: &[&str], as_nobody: bool) -> String {
    let mut command = match as_nobody && root() {
        true => {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(server_bin());
            c
        }
        false => Command::new(server_bin()),
    };
    let mut child = command
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ttt-server");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > REFUSED_WITHIN {
            let _ = child.kill();
            panic!("ttt-server {args:?} was still running after {REFUSED_WITHIN:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().expect("its output");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!status.success(), "ttt-server {args:?} started: {said}");
    said
}

fn root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[tokio::test]
async fn a_second_server_on_a_sqlite_file_in_use_is_refused_and_a_start_after_kill_9_is_not() {
    let dir = TempDir::new("one-file");
    let file = dir.path.join("ttt.db");
    let database = format!("sqlite:{}", file.display());
    let first = ServerProcess::start(&["--database", &database]);
    let said = refused(&["--bind", "127.0.0.1:0", "--database", &database], false);
    assert!(said.contains(&file.display().to_string()), "names the file: {said}");
    assert!(said.contains(&format!("pid {}", first.child.id())), "names the other server: {said}");
    // The first one was not disturbed.
    assert_eq!(http_get(first.addr, "/healthz").await.0, 200);
    // A crash leaves the lock file, but not the lock: the next start works.
    first.signal("KILL");
    let status = first.exits_within(Duration::from_secs(5)).await;
    assert!(!status.success());
    assert!(dir.path.join("ttt.db.lock").is_file());
    let again = ServerProcess::start(&["--database", &database]);
    assert_eq!(http_get(again.addr, "/healthz").await.0, 200);
    // And it holds the file in its turn.
    let said = refused(&["--bind", "127.0.0.1:0", "--database", &database], false);
    assert!(said.contains(&format!("pid {}", again.child.id())), "{said}");
}

#[test]
fn a_missing_database_directory_is_named_with_what_to_do() {
    let dir = TempDir::new("no-dir");
    let missing = dir.path.join("not-made");
    let database = format!("sqlite:{}", missing.join("ttt.db").display());
    let said = refused(&["--bind", "127.0.0.1:0", "--database", &database], false);
    assert!(said.contains(&format!("{} does not exist", missing.display())), "{said}");
    assert!(said.contains("mkdir -p"), "{said}");
}

#[test]
fn a_database_directory_that_cannot_be_written_is_named_with_what_to_do() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("read-only");
    let locked = dir.path.join("locked");
    std::fs::create_dir(&locked).expect("mkdir");
    // Readable by all, writable by none but root (the server runs as
    // `nobody` when the tests run as root).
    for path in [&dir.path, &locked] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    }
    let database = format!("sqlite:{}", locked.join("ttt.db").display());
    let said = refused(&["--bind", "127.0.0.1:0", "--database", &database], true);
    std::fs::set_permissions(&dir.path, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
    assert!(said.contains(&format!("may not write in {}", locked.display())), "{said}");
    assert!(!said.contains("does not exist"), "{said}");
}

#[test]
fn an_address_in_use_names_bind_and_the_address() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("its address").to_string();
    let said = refused(&["--bind", &addr, "--database", "none"], false);
    assert!(said.contains(&addr) && said.contains("--bind"), "{said}");
    assert!(said.contains("listens on") && said.contains("already"), "{said}");
}
