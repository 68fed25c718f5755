//! The store's faults with the real binary and real faults: a kill -9 right
//! after many `game_over`s (no ended game comes back), a full disk made by
//! `RLIMIT_FSIZE` (503, `unavailable`, games finish, a spill file at SIGTERM
//! that `ttt-server import` puts back), a damaged saved row (set aside, the
//! other games resume) and a file that is not a database (a clear refusal).

use std::time::Duration;

use serde_json::{Value, json};
use tictactoe_server::store::Database;
use tictactoe_tests::process::{ServerProcess, server_bin};
use tictactoe_tests::{Client, TempDir, api};

/// Waits up to 10 s for `/healthz` to answer `status`; its body.
async fn health_becomes(addr: std::net::SocketAddr, status: u16) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (got, body) = api(addr, "/healthz").await;
        if got == status {
            return body;
        }
        assert!(tokio::time::Instant::now() < deadline, "/healthz still {got}: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Two players in a private room: X (the creator), O, their tokens and the room.
struct Pair {
    x: Client,
    o: Client,
    tokens: [String; 2],
    room: String,
}

async fn pair(server: &ServerProcess) -> Pair {
    let (mut x, mut o) = (server.client().await, server.client().await);
    x.send(json!({"type": "create_room", "mark": "X"})).await;
    let room = x.recv_type("room_created").await["room"].as_str().expect("a room").to_owned();
    o.send(json!({"type": "join_room", "room": room})).await;
    let (sx, so) = (x.recv_type("game_started").await, o.recv_type("game_started").await);
    assert_eq!(sx["you"], 1);
    let token = |v: &Value| v["resume_token"].as_str().expect("token").to_owned();
    Pair { tokens: [token(&sx), token(&so)], x, o, room }
}

/// X wins down the first column; this plays all but the last move.
const OPENING: [(usize, [u8; 2]); 4] = [(0, [0, 0]), (1, [0, 1]), (0, [1, 0]), (1, [1, 1])];

impl Pair {
    async fn play(&mut self, who: usize, cell: [u8; 2]) {
        let c = if who == 0 { &mut self.x } else { &mut self.o };
        c.send(json!({"type": "move", "row": cell[0], "col": cell[1]})).await;
        self.x.recv_type("moved").await;
        self.o.recv_type("moved").await;
    }
}

/// What a connection has already received of `kind`, within `wait`
/// (`None` when it closes first).
async fn seen(c: &mut Client, kind: &str, wait: Duration) -> Option<Value> {
    let next = async {
        while let Some(v) = c.next_json().await {
            if v["type"] == kind {
                return Some(v);
            }
        }
        None
    };
    tokio::time::timeout(wait, next).await.ok().flatten()
}

#[tokio::test]
async fn a_kill_right_after_game_over_never_brings_an_ended_game_back() {
    let dir = TempDir::new("faults-kill");
    // SQLite, or Postgres when the suites run on it.
    let database = dir.database("ttt.db");
    let db = database.to_string();
    let args = ["--database", &db, "--turn-timeout-ms", "60000"];
    let server = ServerProcess::start(&args);
    let mut pairs = Vec::new();
    for _ in 0..30 {
        let mut p = pair(&server).await;
        for (who, cell) in OPENING {
            p.play(who, cell).await;
        }
        pairs.push(p);
    }
    // Every last move at once; the kill follows the first game_over seen.
    for p in &mut pairs {
        p.x.send(json!({"type": "move", "row": 2, "col": 0})).await;
    }
    let first = pairs[0].o.recv_type("game_over").await;
    server.signal("KILL");
    let mut ended = vec![(first["game_id"].as_str().expect("id").to_owned(), pairs[0].tokens.clone())];
    for p in pairs.iter_mut().skip(1) {
        // What reached the client before the kill is what a player saw.
        if let Some(over) = seen(&mut p.o, "game_over", Duration::from_millis(500)).await {
            assert_eq!(over["winner"], 1);
            ended.push((over["game_id"].as_str().expect("id").to_owned(), p.tokens.clone()));
        }
    }
    server.exits_within(Duration::from_secs(5)).await;
    let server = ServerProcess::start(&args);
    assert!(server.restored as usize <= pairs.len() - ended.len(), "ended games restored");
    // `game_over` leaves only after the record is committed, so the kill may
    // fall between the two: a game not seen ended is either restored, and
    // resumes where it was, or was recorded ended; never lost, never both.
    let seen_ended: Vec<&[String; 2]> = ended.iter().map(|(_, tokens)| tokens).collect();
    let (mut resumed, mut recorded) = (0, Vec::new());
    for p in pairs.iter().filter(|p| !seen_ended.contains(&&p.tokens)) {
        let mut c = server.client().await;
        c.send(json!({"type": "resume", "token": p.tokens[0], "id": 1})).await;
        let answer = c.recv_any(&["state", "error"]).await;
        if answer["type"] == "state" {
            // As of its last saved move (a crash may lose the last ~100 ms).
            let opening: Vec<[u8; 2]> = OPENING.iter().map(|&(_, cell)| cell).collect();
            let moves: Vec<[u8; 2]> = serde_json::from_value(answer["moves"].clone()).expect("moves");
            assert!(opening.starts_with(&moves), "not the game played: {answer}");
            resumed += 1;
        } else {
            assert_eq!(answer["code"], "invalid_token", "{answer}");
            recorded.push(p.room.clone());
        }
    }
    println!("{} games seen ended, {resumed} restored, {} ended unseen", ended.len(), recorded.len());
    assert_eq!(server.restored, resumed, "the games restored are the ones that resume");
    for (id, tokens) in &ended {
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        assert_eq!(status, 200, "game {id} seen ended has no record");
        assert_eq!((record["winner"].clone(), record["reason"].clone()), (json!(1), json!("line")));
        for token in tokens {
            let mut c = server.client().await;
            c.send(json!({"type": "resume", "token": token, "id": 1})).await;
            let refused = c.recv_type("error").await;
            assert_eq!(refused["code"], "invalid_token", "{refused}");
        }
    }
    drop(server);
    for room in &recorded {
        let ends = records_of(&database, room);
        assert_eq!(ends, [(1, "line".to_owned())], "room {room}: not restored, so recorded ended once");
    }
}

/// The winner and reason of every record of a game played in `room`, read
/// from the database itself.
fn records_of(database: &Database, room: &str) -> Vec<(i64, String)> {
    match database {
        Database::Postgres(url) => {
            let sql = format!("SELECT winner, reason FROM games WHERE room = '{room}'");
            let rows =
                tictactoe_tests::postgres::shared().psql(tictactoe_tests::postgres::name_of(url), &sql);
            rows.lines()
                .filter_map(|l| l.split_once('|'))
                .map(|(w, r)| (w.parse().expect("a winner"), r.to_owned()))
                .collect()
        }
        Database::Sqlite(path) => {
            let conn = rusqlite::Connection::open(path).expect("open");
            conn.prepare("SELECT winner, reason FROM games WHERE room = ?1")
                .expect("prepare")
                .query_map([room], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        }
        Database::None => Vec::new(),
    }
}

/// `sh` ignoring SIGXFSZ (inherited through exec) around `prlimit`, so that
/// writes past `bytes` fail with EFBIG as on a full disk. Only the soft
/// limit: another process may lift it again (room made on the disk).
fn full_disk(bytes: u64) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("trap '' XFSZ; exec prlimit --fsize={bytes}:unlimited -- \"$0\" \"$@\""),
    ]
}

/// A database in its own directory, with a spill directory beside it.
struct Disk {
    _dir: TempDir,
    path: std::path::PathBuf,
    db: String,
    spill: std::path::PathBuf,
}

impl Disk {
    fn new(label: &str) -> Disk {
        let dir = TempDir::new(label);
        let path = dir.path.join("ttt.db");
        let spill = dir.path.join("spill");
        std::fs::create_dir_all(&spill).expect("spill dir");
        Disk { db: format!("sqlite:{}", path.display()), path, spill, _dir: dir }
    }

    fn args(&self) -> Vec<String> {
        let spill = self.spill.display().to_string();
        ["--database", &self.db, "--spill-dir", &spill, "--turn-timeout-ms", "60000"]
            .map(str::to_owned)
            .to_vec()
    }

    /// The server on a full disk. A first start makes the file; then no file
    /// may be written past 40 KiB (the shared-memory index takes 32): the
    /// log holds nine pages, and none past the tenth of the file (where the
    /// saved games' tables are) can be checkpointed, so the log never empties.
    async fn full(&self) -> ServerProcess {
        let args = self.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = ServerProcess::start(&args);
        server.signal("TERM");
        assert!(server.exits_within(Duration::from_secs(5)).await.success());
        let wrapper = full_disk(40 << 10);
        let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
        ServerProcess::start_under(&wrapper, &args)
    }
}

#[tokio::test]
async fn a_full_disk_is_said_games_finish_and_a_stop_spills_what_import_puts_back() {
    let disk = Disk::new("faults-full");
    let (db, spill) = (&disk.db, &disk.spill);
    let args = disk.args();
    let server = disk.full().await;
    let (status, health) = api(server.addr, "/healthz").await;
    assert_eq!((status, health["status"].clone(), health["store"].clone()), (200, json!("ok"), json!("ok")));
    assert_eq!(health["bus"], "none");
    assert!(health["instance"].as_str().is_some_and(|i| !i.is_empty()), "{health}");
    // A game starts before anything was written, and stays in progress.
    let mut going = pair(&server).await;
    going.play(0, [0, 0]).await;
    // Another pair plays games until the store fails.
    let mut ids = Vec::new();
    if let Some(mut p) = try_pair(&server).await {
        for _ in 0..400 {
            p.x.send(json!({"type": "resign"})).await;
            let over = p.o.recv_type("game_over").await;
            p.x.recv_type("game_over").await;
            ids.push(over["game_id"].as_str().expect("a game id even when it cannot be written").to_owned());
            // Asked by both at once; a refusal (the store failed) comes to each.
            p.x.send(json!({"type": "rematch"})).await;
            p.o.send(json!({"type": "rematch"})).await;
            if p.x.recv_any(&["game_started", "error"]).await["type"] == "error" {
                break;
            }
            p.o.recv_type("game_started").await;
        }
    }
    let health = health_becomes(server.addr, 503).await;
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["store"], "cannot write to the database", "{health}");
    let text = health.to_string();
    assert!(!text.contains("SQL") && !text.contains("sqlite") && !text.contains("I/O"), "{text}");
    // Nothing new starts, and says why without the database's words.
    let mut late = server.client().await;
    for (i, request) in [
        json!({"type": "quick_match"}),
        json!({"type": "create_room"}),
        json!({"type": "register", "name": "newcomer"}),
        json!({"type": "play_house"}),
        json!({"type": "hello", "name": "ann", "token": "ttt_x"}),
        json!({"type": "join_room", "room": "NOSUCHROOM"}),
        json!({"type": "challenge", "name": "bob"}),
        json!({"type": "accept", "challenge": "c1"}),
    ]
    .into_iter()
    .enumerate()
    {
        let mut request = request;
        request["id"] = json!(i);
        late.send(request).await;
        let refused = late.recv_type("error").await;
        assert_eq!(refused["code"], "unavailable", "{refused}");
        assert_eq!(refused["id"], i);
        assert!(refused["retry_after_ms"].as_u64().is_some_and(|ms| ms > 0), "{refused}");
        assert!(!refused["message"].as_str().unwrap_or("").contains("I/O"), "{refused}");
    }
    // The game in progress goes on and ends; its record waits in memory and
    // the API shows it from there; a rematch would be a new game.
    for (who, cell) in [(1, [1, 0]), (0, [0, 1]), (1, [1, 1])] {
        going.play(who, cell).await;
    }
    going.x.send(json!({"type": "move", "row": 0, "col": 2})).await;
    let over = going.o.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")));
    let id = over["game_id"].as_str().expect("id").to_owned();
    ids.push(id.clone());
    going.o.send(json!({"type": "rematch", "id": 9})).await;
    let refused = going.o.recv_type("error").await;
    assert_eq!((refused["code"].clone(), refused["id"].clone()), (json!("unavailable"), json!(9)));
    let (status, held) = api(server.addr, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200, "{held}");
    assert_eq!(held["moves"], json!([[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]]));
    // SIGTERM: 10 s of tries, then the spill file, and a non-zero exit.
    server.signal("TERM");
    let status = server.exits_within(Duration::from_secs(20)).await;
    assert!(!status.success(), "a stop that could not write exited 0");
    let files: Vec<_> = std::fs::read_dir(spill).expect("spill dir").flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
    assert!(name.starts_with("ttt-unsaved-") && name.ends_with(".jsonl"), "{name}");
    let out = std::process::Command::new(server_bin())
        .args(["import", &files[0].display().to_string(), "--database", db])
        .output()
        .expect("import");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // With room on the disk again, every game a player saw end is there.
    let server = ServerProcess::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(server.restored, 0, "an ended game came back");
    for id in &ids {
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        assert_eq!(status, 200, "game {id} lost");
        assert!(record["reason"] == "resign" || record["reason"] == "line", "{record}");
    }
    drop(server);
}

/// The disk fills, games end meanwhile, then room is made: within 10 s
/// `/healthz` is 200 again and what waited in memory is in the file, in
/// order, with nothing spilled at the next stop.
#[tokio::test]
async fn what_waited_is_written_when_the_disk_has_room_again() {
    let disk = Disk::new("faults-back");
    let (path, spill) = (&disk.path, &disk.spill);
    let server = disk.full().await;
    let mut ids = Vec::new();
    let mut going = Vec::new();
    for _ in 0..3 {
        going.push(pair(&server).await);
    }
    // Each game ends; some while the store still wrote, the rest after.
    for p in &mut going {
        p.play(0, [0, 0]).await;
        p.o.send(json!({"type": "resign"})).await;
        ids.push(p.x.recv_type("game_over").await["game_id"].as_str().expect("id").to_owned());
    }
    if api(server.addr, "/healthz").await.0 == 200 {
        // Not full yet: more games until it is.
        let mut p = try_pair(&server).await.expect("a pair while the store writes");
        for _ in 0..400 {
            p.x.send(json!({"type": "resign"})).await;
            ids.push(p.o.recv_type("game_over").await["game_id"].as_str().expect("id").to_owned());
            if api(server.addr, "/healthz").await.0 == 503 {
                break;
            }
            p.x.send(json!({"type": "rematch"})).await;
            p.o.send(json!({"type": "rematch"})).await;
            if p.x.recv_any(&["game_started", "error"]).await["type"] == "error" {
                break;
            }
            p.o.recv_type("game_started").await;
        }
    }
    health_becomes(server.addr, 503).await;
    // Room on the disk again: the limit is lifted from outside.
    let lifted = std::process::Command::new("prlimit")
        .args(["--pid", &server.child.id().to_string(), "--fsize=unlimited:unlimited"])
        .status()
        .expect("prlimit");
    assert!(lifted.success());
    let health = health_becomes(server.addr, 200).await;
    assert_eq!(health["store"], "ok");
    server.signal("TERM");
    assert!(
        server.exits_within(Duration::from_secs(10)).await.success(),
        "a stop with nothing unsaved exits 0"
    );
    assert_eq!(std::fs::read_dir(spill).expect("spill").count(), 0, "nothing spilled");
    let conn = rusqlite::Connection::open(path).expect("open");
    for id in &ids {
        let n: i64 =
            conn.query_row("SELECT count(*) FROM games WHERE id = ?1", [id], |r| r.get(0)).expect("count");
        assert_eq!(n, 1, "game {id} not in the file");
    }
    let order: Vec<String> = conn
        .prepare("SELECT id FROM games ORDER BY seq")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(order, ids, "written in the order the games ended");
}

/// A pair in a private room, or `None` when the room is refused `unavailable`.
async fn try_pair(server: &ServerProcess) -> Option<Pair> {
    let (mut x, mut o) = (server.client().await, server.client().await);
    x.send(json!({"type": "create_room", "mark": "X"})).await;
    let created = x.recv_any(&["room_created", "error"]).await;
    if created["type"] == "error" {
        assert_eq!(created["code"], "unavailable");
        return None;
    }
    o.send(json!({"type": "join_room", "room": created["room"]})).await;
    let started = o.recv_any(&["game_started", "error"]).await;
    if started["type"] == "error" {
        assert_eq!(started["code"], "unavailable");
        return None;
    }
    let sx = x.recv_type("game_started").await;
    let token = |v: &Value| v["resume_token"].as_str().expect("token").to_owned();
    let room = created["room"].as_str().expect("a room").to_owned();
    Some(Pair { tokens: [token(&sx), token(&started)], x, o, room })
}

#[tokio::test]
async fn a_damaged_saved_game_is_set_aside_and_the_others_resume() {
    let dir = TempDir::new("faults-row");
    let path = dir.path.join("ttt.db");
    let db = format!("sqlite:{}", path.display());
    let args = ["--database", &db, "--turn-timeout-ms", "60000"];
    let server = ServerProcess::start(&args);
    let mut good = pair(&server).await;
    good.play(0, [0, 0]).await;
    let mut bad = pair(&server).await;
    bad.play(0, [1, 1]).await;
    server.signal("TERM");
    server.exits_within(Duration::from_secs(5)).await;
    // The bad game's one move, (1, 1), moved off its board in the journal.
    let conn = rusqlite::Connection::open(&path).expect("open");
    let rows: Vec<(i64, Vec<u8>)> = conn
        .prepare("SELECT seq, data FROM live_log")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut changed = 0;
    for (seq, mut data) in rows {
        if let Some(at) = data.windows(4).position(|w| w == [1, 0, 1, 0]) {
            data[at..at + 4].copy_from_slice(&[9, 0, 9, 0]);
            changed += conn
                .execute("UPDATE live_log SET data = ?1 WHERE seq = ?2", rusqlite::params![data, seq])
                .expect("damage");
        }
    }
    assert_eq!(changed, 1);
    drop(conn);
    let server = ServerProcess::start(&args);
    assert_eq!(server.restored, 1);
    let mut x = server.client().await;
    x.send(json!({"type": "resume", "token": good.tokens[0]})).await;
    let state = x.recv_type("state").await;
    assert_eq!(state["moves"], json!([[0, 0]]));
    let mut lost = server.client().await;
    lost.send(json!({"type": "resume", "token": bad.tokens[0]})).await;
    assert_eq!(lost.recv_type("error").await["code"], "invalid_token");
    drop(server);
    let conn = rusqlite::Connection::open(&path).expect("open");
    let kept: Vec<(String, String)> = conn
        .prepare("SELECT what, data FROM quarantine ORDER BY id")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "live_log");
    assert!(kept[0].1.contains(&bad.room) && kept[0].1.contains("[9,9]"), "{}", kept[0].1);
}

#[tokio::test]
async fn a_file_that_is_not_a_database_stops_the_start_with_what_to_do() {
    let dir = TempDir::new("faults-garbage");
    let path = dir.path.join("ttt.db");
    let noise: Vec<u8> = (0..64 * 1024).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&path, &noise).expect("write");
    let out = std::process::Command::new(server_bin())
        .args(["--bind", "127.0.0.1:0", "--database", &format!("sqlite:{}", path.display())])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("not a SQLite database or it is damaged"), "{err}");
    assert!(err.contains("restore it from a backup"), "{err}");
    assert_eq!(std::fs::read(&path).expect("read"), noise, "the file was changed");
}
