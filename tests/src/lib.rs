//! Helpers for the end-to-end tests: a server on `127.0.0.1:0`, and a client
//! that speaks the protocol as raw JSON, every read under a timeout; and the
//! load generator's pieces (`load`, `relay`).

pub mod address;
pub mod arena;
pub mod chaos;
pub mod cluster;
pub mod crash;
pub mod haproxy;
pub mod load;
pub mod pki;
pub mod postgres;
pub mod process;
pub mod redis;
pub mod relay;
pub mod tmux;
pub mod tools;
pub mod witness;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use tictactoe_protocol::{ErrorCode, Game, ServerMessage, Status, Verdict, judge};
use tictactoe_server::store::Database;
use tictactoe_server::{Config, Server, Stats};

/// How long any single read may take before the test fails.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A server running in this process on a loopback port.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its live counters.
    pub stats: Arc<Stats>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
    /// Set when the server speaks `wss://`: how clients trust it.
    tls: Option<Connector>,
}

/// Logs the server's tracing output when `RUST_LOG` is set (for debugging a test).
pub fn trace() {
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
    }
}

/// A test configuration: loopback, timers off unless a test sets them.
pub fn test_config() -> Config {
    Config {
        bind: "127.0.0.1:0".parse().unwrap_or_else(|_| unreachable!()),
        turn_timeout_ms: 0,
        reconnect_grace_ms: 0,
        max_messages_per_second: 0,
        database: Database::None,
        ..Config::default()
    }
}

impl TestServer {
    /// Starts a server with `config` on `127.0.0.1:0`.
    pub async fn start(config: Config) -> TestServer {
        TestServer::start_at(config, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Stops the server gracefully and starts another with `config` on the
    /// same address: a restart, as clients see it.
    pub async fn restart(self, config: Config) -> TestServer {
        let addr = self.addr;
        self.shutdown().await;
        TestServer::start_at(config, addr).await
    }

    /// Starts a server with `config` on `addr`.
    pub async fn start_at(config: Config, addr: SocketAddr) -> TestServer {
        trace();
        let listener = TcpListener::bind(addr).await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let server = Server::new(config);
        let stats = server.stats();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve(listener, async {
            let _ = stopped.await;
        }));
        TestServer { addr, stats, stop: Some(stop), task, tls: None }
    }

    /// Starts a `wss://` server with `config` and the certificate of `pki`;
    /// its clients trust `pki`'s CA.
    pub async fn start_tls(config: Config, pki: &pki::TestPki) -> TestServer {
        let config = Config { tls_cert: Some(pki.cert.clone()), tls_key: Some(pki.key.clone()), ..config };
        TestServer { tls: Some(pki.connector()), ..TestServer::start(config).await }
    }

    /// The server's WebSocket URL (`wss://localhost:PORT/` when it speaks TLS).
    pub fn url(&self) -> String {
        match self.tls {
            None => format!("ws://{}/", self.addr),
            Some(_) => format!("wss://localhost:{}/", self.addr.port()),
        }
    }

    /// Connects a new client and reads its `welcome`.
    pub async fn client(&self) -> Client {
        Client::connect_with(&self.url(), self.tls.clone()).await
    }

    /// Signals shutdown and waits for `serve` to return; fails after 10 s.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let done = tokio::time::timeout(Duration::from_secs(10), &mut self.task).await;
        let result = done.expect("serve returns within 10 s of shutdown");
        result.expect("serve task").expect("serve result");
    }

    /// Waits (up to 10 s) until the server holds no connections and no rooms.
    pub async fn wait_idle(&self) {
        for _ in 0..200 {
            if self.stats.connections() == 0 && self.stats.rooms() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server not idle: {} connections, {} rooms", self.stats.connections(), self.stats.rooms());
    }
}

/// One protocol client over a real WebSocket.
pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The `welcome` the server sent.
    pub welcome: Value,
    /// Every JSON frame received, in order (for schema checks).
    pub received: Vec<Value>,
    /// Every JSON frame sent with [`Client::send`], in order.
    pub sent: Vec<Value>,
}

impl Client {
    /// Connects to `url` and reads the `welcome`.
    pub async fn connect(url: &str) -> Client {
        Client::connect_with(url, None).await
    }

    /// Connects to `url` with a TLS set-up for `wss://`, and reads the `welcome`.
    pub async fn connect_with(url: &str, tls: Option<Connector>) -> Client {
        let connect = tokio_tungstenite::connect_async_tls_with_config(url, None, true, tls);
        let (ws, _) = connect.await.expect("connect");
        let mut client = Client { ws, welcome: Value::Null, received: Vec::new(), sent: Vec::new() };
        let welcome = client.recv_json().await;
        assert_eq!(welcome["type"], "welcome", "first message is welcome");
        client.welcome = welcome;
        client
    }

    /// Sends one JSON value as a text frame.
    pub async fn send(&mut self, value: Value) {
        self.send_raw(Message::text(value.to_string())).await;
        self.sent.push(value);
    }

    /// Sends several JSON values back to back and flushes once, so that they
    /// reach the server together.
    pub async fn send_batch(&mut self, values: Vec<Value>) {
        for value in values {
            self.ws.feed(Message::text(value.to_string())).await.expect("feed");
            self.sent.push(value);
        }
        self.ws.flush().await.expect("flush");
    }

    /// Sends one frame as it is.
    pub async fn send_raw(&mut self, msg: Message) {
        self.ws.send(msg).await.expect("send");
    }

    /// The next frame of any kind; fails on timeout, close or a broken frame.
    async fn next_frame(&mut self) -> Message {
        tokio::time::timeout(READ_TIMEOUT, self.ws.next())
            .await
            .expect("a frame within the read timeout")
            .expect("connection open")
            .expect("valid frame")
    }

    /// The next text frame as JSON; fails on timeout, close or a non-text frame.
    pub async fn recv_json(&mut self) -> Value {
        loop {
            match self.next_frame().await {
                Message::Text(text) => {
                    let value: Value = serde_json::from_str(&text).expect("JSON from server");
                    self.received.push(value.clone());
                    return value;
                }
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    /// Reads until the server's next WebSocket ping and answers it at once;
    /// text frames read meanwhile are kept in `received`. For tests that
    /// must know where the server's ping interval stands.
    pub async fn answer_next_ping(&mut self) {
        loop {
            match self.next_frame().await {
                Message::Ping(_) => break,
                Message::Text(text) => {
                    self.received.push(serde_json::from_str(&text).expect("JSON from server"))
                }
                _ => continue,
            }
        }
        // tungstenite queued the pong; a flush sends it.
        self.ws.flush().await.expect("flush");
    }

    /// The next message, decoded with the protocol crate's types.
    pub async fn recv(&mut self) -> ServerMessage {
        serde_json::from_value(self.recv_json().await).expect("a protocol message")
    }

    /// Reads until a message of `kind` (its `type`) arrives, returning it.
    pub async fn recv_type(&mut self, kind: &str) -> Value {
        loop {
            let v = self.recv_json().await;
            if v["type"] == kind {
                return v;
            }
        }
    }

    /// Reads until a message whose `type` is one of `kinds` arrives, returning it.
    pub async fn recv_any(&mut self, kinds: &[&str]) -> Value {
        loop {
            let v = self.recv_json().await;
            if kinds.iter().any(|k| v["type"] == *k) {
                return v;
            }
        }
    }

    /// The next text frame as JSON, or `None` once the connection is closed
    /// or broken. No timeout of its own: the caller bounds the wait.
    pub async fn next_json(&mut self) -> Option<Value> {
        loop {
            match self.ws.next().await? {
                Ok(Message::Text(text)) => {
                    let value: Value = serde_json::from_str(&text).ok()?;
                    self.received.push(value.clone());
                    return Some(value);
                }
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => continue,
            }
        }
    }

    /// Sends one JSON value; `false` when the connection is gone.
    pub async fn try_send(&mut self, value: Value) -> bool {
        let sent = self.ws.send(Message::text(value.to_string())).await.is_ok();
        self.sent.push(value);
        sent
    }

    /// Reads until the server closes: the messages that came before the
    /// close (within the read timeout each), and the close frame's code, if
    /// it sent one.
    pub async fn until_close(&mut self) -> (Vec<Value>, Option<CloseCode>) {
        let mut before = Vec::new();
        loop {
            let next = tokio::time::timeout(READ_TIMEOUT, self.ws.next())
                .await
                .expect("close within the read timeout");
            match next {
                Some(Ok(Message::Close(frame))) => return (before, frame.map(|f| f.code)),
                Some(Ok(Message::Text(text))) => {
                    let value: Value = serde_json::from_str(&text).expect("JSON from server");
                    self.received.push(value.clone());
                    before.push(value);
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return (before, None),
            }
        }
    }

    /// Reads the next message and checks it is an `error` with `code` (and `id`, if given).
    pub async fn expect_error(&mut self, code: ErrorCode, id: Option<Value>) -> Value {
        let v = self.recv_json().await;
        let want = serde_json::to_value(code).unwrap_or_default();
        assert_eq!(v["type"], "error", "expected error {want}, got {v}");
        assert_eq!(v["code"], want, "{v}");
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        if let Some(id) = id {
            assert_eq!(v["id"], id, "{v}");
        }
        v
    }

    /// Starts the close handshake with `frame`.
    pub async fn close_with(&mut self, frame: tokio_tungstenite::tungstenite::protocol::CloseFrame) {
        self.ws.send(Message::Close(Some(frame))).await.expect("send close");
    }

    /// Reads until the server closes; returns the close frame's code, if it sent one.
    pub async fn expect_close(&mut self) -> Option<CloseCode> {
        self.expect_close_frame().await.map(|(code, _)| code)
    }

    /// Reads until the server closes; returns the close frame's code and
    /// reason, if it sent one.
    pub async fn expect_close_frame(&mut self) -> Option<(CloseCode, String)> {
        loop {
            let next = tokio::time::timeout(READ_TIMEOUT, self.ws.next())
                .await
                .expect("close within the read timeout");
            match next {
                Some(Ok(Message::Close(frame))) => return frame.map(|f| (f.code, f.reason.to_string())),
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// Sends `move` and reads until this client's own `moved` (returned) arrives.
    pub async fn play(&mut self, row: usize, col: usize) -> Value {
        self.send(json!({"type": "move", "row": row, "col": col})).await;
        self.recv_type("moved").await
    }
}

/// Plays `games` quick-match games on 3×3 as a client that never rematches:
/// after each game it queues again, which leaves the room.
pub async fn requeuer(server: &TestServer, games: u32) {
    let mut c = server.client().await;
    c.send(json!({"type": "quick_match"})).await;
    for game in 0..games {
        let started = c.recv_type("game_started").await;
        let me = started["you"].clone();
        let mut taken = [false; 9];
        let mut to_move = me == 1;
        loop {
            if to_move {
                let cell = taken.iter().position(|t| !t).expect("a free cell while the game goes on");
                c.send(json!({"type": "move", "row": cell / 3, "col": cell % 3})).await;
                to_move = false;
            }
            let msg = c.recv_json().await;
            match msg["type"].as_str() {
                Some("moved") => {
                    let cell = msg["row"].as_u64().unwrap_or(0) * 3 + msg["col"].as_u64().unwrap_or(0);
                    taken[cell as usize] = true;
                    to_move = msg["next"] == me;
                }
                Some("game_over") => break,
                _ => {}
            }
        }
        if game + 1 < games {
            c.send(json!({"type": "quick_match"})).await;
        }
    }
}

/// Two clients in a game: `.0` is player 1, `.1` player 2 (read from `game_started`).
pub struct Pair {
    /// Player 1 (`X`).
    pub x: Client,
    /// Player 2 (`O`).
    pub o: Client,
    /// The room code.
    pub room: String,
}

/// Two clients paired by quick match for `size`.
pub async fn quick_pair(server: &TestServer, size: usize) -> Pair {
    quick_pair_with(server, json!({"type": "quick_match", "size": size})).await
}

/// Two clients paired by quick match for boards of `size` won by `win` in a row.
pub async fn quick_pair_k(server: &TestServer, size: usize, win: usize) -> Pair {
    quick_pair_with(server, json!({"type": "quick_match", "size": size, "win": win})).await
}

/// Two clients paired by the same `quick_match` request.
async fn quick_pair_with(server: &TestServer, request: Value) -> Pair {
    let mut a = server.client().await;
    let mut b = server.client().await;
    a.send(request.clone()).await;
    assert_eq!(a.recv_type("queued").await["size"], request["size"]);
    b.send(request).await;
    let sa = a.recv_type("game_started").await;
    let sb = b.recv_type("game_started").await;
    assert_eq!(sa["room"], sb["room"]);
    let room = sa["room"].as_str().unwrap_or_default().to_owned();
    if sa["you"] == 1 {
        assert_eq!(sb["you"], 2);
        Pair { x: a, o: b, room }
    } else {
        assert_eq!((sa["you"].clone(), sb["you"].clone()), (json!(2), json!(1)));
        Pair { x: b, o: a, room }
    }
}

/// Two clients paired through a private room.
pub async fn private_pair(server: &TestServer, size: usize) -> Pair {
    let mut a = server.client().await;
    let mut b = server.client().await;
    a.send(json!({"type": "create_room", "size": size})).await;
    let created = a.recv_type("room_created").await;
    let room = created["room"].as_str().unwrap_or_default().to_owned();
    b.send(json!({"type": "join_room", "room": room})).await;
    let sa = a.recv_type("game_started").await;
    let sb = b.recv_type("game_started").await;
    assert_ne!(sa["you"], sb["you"]);
    if sa["you"] == 1 { Pair { x: a, o: b, room } } else { Pair { x: b, o: a, room } }
}

/// Plays `moves` (alternating, player 1 first) to the end; checks every
/// `moved`, and returns both players' `game_over` (they must be equal).
pub async fn play_out(pair: &mut Pair, moves: &[[usize; 2]]) -> Value {
    for (i, &[r, c]) in moves.iter().enumerate() {
        let (mover, other) = if i % 2 == 0 { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) };
        let own = mover.play(r, c).await;
        let seen = other.recv_type("moved").await;
        assert_eq!(own["seq"], i + 1);
        assert_eq!(own, seen, "both players see the same move");
    }
    let gx = pair.x.recv_type("game_over").await;
    let go = pair.o.recv_type("game_over").await;
    assert_eq!(gx, go);
    gx
}

/// Checks a `game_over` against the contract (the classic rule: a whole
/// line wins); see [`assert_judged_k`].
pub fn assert_judged(size: usize, game_over: &Value) {
    assert_judged_k(size, size, game_over);
}

/// Checks a `game_over` on a `size` board won by `win` in a row against the
/// contract (PROTOCOL.md, `game_over` and "Judge"): its `moves` are a legal
/// game; `line` and `draw` judge to their `winner` (and only a line has a
/// `line`); every other reason ends a game that was not already decided on
/// the board (a game won by a line or drawn by a full board must have ended
/// with that reason), with the winner the reason gives: `resign` and
/// `disconnect` a player (the opponent of whoever resigned or dropped),
/// `timeout` the player who was not to move, `shutdown` and `aborted`
/// nobody; `timeout` and `disconnect` only once each side has moved (before
/// that they are `aborted`), `aborted` only before.
pub fn assert_judged_k(size: usize, win: usize, game_over: &Value) {
    let moves: Vec<[usize; 2]> = serde_json::from_value(game_over["moves"].clone()).expect("moves");
    let winner = game_over["winner"].as_u64().unwrap_or_else(|| panic!("no winner: {game_over}"));
    let verdict = judge(size, win, &moves).unwrap_or_else(|e| panic!("not a legal game ({e}): {game_over}"));
    let reason = game_over["reason"].as_str().unwrap_or_else(|| panic!("no reason: {game_over}"));
    let has_line = !game_over["line"].is_null();
    match reason {
        "line" => {
            assert!(
                matches!(verdict, Verdict::A | Verdict::B),
                "a line that judges {verdict:?}: {game_over}"
            );
            assert_eq!(u64::from(verdict.winner_number()), winner, "{game_over}");
            assert!(has_line, "a game won by a line names no line: {game_over}");
            return;
        }
        "draw" => {
            assert_eq!((verdict, winner), (Verdict::Draw, 0), "{game_over}");
            assert!(!has_line, "a draw with a line: {game_over}");
            return;
        }
        _ => {}
    }
    // Not by the board: the board must not have decided the game already.
    assert_eq!(verdict, Verdict::Pending, "a game the board had decided ended with {reason}: {game_over}");
    assert!(!has_line, "a game ended with {reason} names a line: {game_over}");
    let to_move = if moves.len() % 2 == 0 { 1 } else { 2 };
    let both_moved = moves.len() >= 2;
    match reason {
        "resign" => assert!(winner == 1 || winner == 2, "a resignation without a winner: {game_over}"),
        "disconnect" => {
            assert!(winner == 1 || winner == 2, "a disconnect without a winner: {game_over}");
            assert!(both_moved, "a disconnect before each side moved is aborted: {game_over}");
        }
        "timeout" => {
            assert_eq!(winner, 3 - to_move, "the player to move ({to_move}) lost on time: {game_over}");
            assert!(both_moved, "a timeout before each side moved is aborted: {game_over}");
        }
        "shutdown" => assert_eq!(winner, 0, "{game_over}"),
        "aborted" => {
            assert_eq!(winner, 0, "{game_over}");
            assert!(!both_moved, "a game each side had moved in was aborted: {game_over}");
        }
        other => panic!("a reason the contract does not have: {other:?}: {game_over}"),
    }
}

/// Winning move lists for player 1 on an n×n board, one per kind of line:
/// row 0, column 0, the diagonal, the anti-diagonal.
pub fn winning_games(n: usize) -> Vec<(&'static str, Vec<[usize; 2]>)> {
    let weave = |x: &dyn Fn(usize) -> [usize; 2], o: &dyn Fn(usize) -> [usize; 2]| {
        let mut v = Vec::new();
        for i in 0..n {
            v.push(x(i));
            if i + 1 < n {
                v.push(o(i));
            }
        }
        v
    };
    vec![
        ("row", weave(&|i| [0, i], &|i| [1, i])),
        ("col", weave(&|i| [i, 0], &|i| [i, 1])),
        ("diag", weave(&|i| [i, i], &|i| [i, (i + 1) % n])),
        ("anti_diag", weave(&|i| [i, n - 1 - i], &|i| [i, (n - i) % n])),
    ]
}

/// A full-board draw on an n×n board (n ≥ 3), found by seeded random play.
pub fn drawn_game(n: usize) -> Vec<[usize; 2]> {
    use rand::seq::SliceRandom;
    use rand::{SeedableRng, rngs::StdRng};
    for seed in 0.. {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut cells: Vec<[usize; 2]> = (0..n * n).map(|i| [i / n, i % n]).collect();
        cells.shuffle(&mut rng);
        let Ok(mut game) = Game::new(n) else { break };
        let all_legal = cells.iter().all(|&[r, c]| game.play(r, c).is_ok());
        if all_legal && game.status() == Status::Draw {
            return cells;
        }
    }
    Vec::new()
}

/// Random legal moves for a whole game on an n×n board (any outcome).
pub fn random_game(n: usize, rng: &mut impl rand::Rng) -> Vec<[usize; 2]> {
    random_rest(n, &[], None, rng)
}

/// Random legal moves that finish the game `played` began on an n×n board,
/// the first of them not `unlike` while another cell is free (a game that
/// goes on differently from a copy of it that went on with `unlike`).
pub fn random_rest(
    n: usize,
    played: &[[usize; 2]],
    unlike: Option<[usize; 2]>,
    rng: &mut impl rand::Rng,
) -> Vec<[usize; 2]> {
    use rand::seq::SliceRandom;
    let mut cells: Vec<[usize; 2]> = (0..n * n).map(|i| [i / n, i % n]).collect();
    cells.shuffle(rng);
    // Tried last, so any other free cell comes first.
    if let Some(at) = unlike.and_then(|u| cells.iter().position(|c| *c == u)) {
        let cell = cells.remove(at);
        cells.push(cell);
    }
    let Ok(mut game) = Game::new(n) else {
        return Vec::new();
    };
    if played.iter().any(|&[r, c]| game.play(r, c).is_err()) {
        return Vec::new();
    }
    let mut moves = Vec::new();
    for [r, c] in cells {
        if game.status().is_over() {
            break;
        }
        if game.play(r, c).is_ok() {
            moves.push([r, c]);
        }
    }
    moves
}

/// A directory for one test's database files, removed when dropped.
pub struct TempDir {
    /// The directory.
    pub path: std::path::PathBuf,
}

impl TempDir {
    /// A fresh, empty directory under the system's temporary directory.
    pub fn new(label: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("ttt-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir { path }
    }

    /// The `--database` setting for a SQLite file called `name` in it; when
    /// the suites run on Postgres (`TTT_TEST_DATABASE=postgres`), a fresh
    /// database of the test binary's Postgres, the same one each time it is
    /// asked for with this directory and name (a restart finds its data).
    pub fn database(&self, name: &str) -> tictactoe_server::store::Database {
        if !postgres::chosen() {
            return Database::Sqlite(self.path.join(name));
        }
        static MADE: std::sync::Mutex<Vec<(std::path::PathBuf, String, String)>> =
            std::sync::Mutex::new(Vec::new());
        let mut made = MADE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, _, url)) = made.iter().find(|(p, n, _)| *p == self.path && n == name) {
            return Database::Postgres(url.clone());
        }
        let label = self.path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let url = postgres::shared().database(&label);
        made.push((self.path.clone(), name.to_owned(), url.clone()));
        Database::Postgres(url)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// One plain HTTP/1.1 GET to `addr`: the status code and the body.
pub async fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send the request");
    let mut raw = Vec::new();
    tokio::time::timeout(READ_TIMEOUT, stream.read_to_end(&mut raw))
        .await
        .expect("the answer within the read timeout")
        .expect("read the answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status code");
    (status, body.to_owned())
}

/// A GET whose body is JSON: the status and the parsed body.
pub async fn api(addr: SocketAddr, path: &str) -> (u16, Value) {
    let (status, body) = http_get(addr, path).await;
    (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {body}")))
}

/// The record of game `id` at `addr`'s `/api/games/{id}`, waited for (up to
/// 5 s) while its commit is on its way.
pub async fn record_of(addr: SocketAddr, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (status, record) = api(addr, &format!("/api/games/{id}")).await;
        if status == 200 {
            return record;
        }
        assert!(tokio::time::Instant::now() < deadline, "no record of {id}: {status} {record}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl TestServer {
    /// Signals shutdown and returns `serve`'s result (an error at start, say).
    pub async fn stop(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // A store that cannot write is given 10 s before it spills.
        let done = tokio::time::timeout(Duration::from_secs(20), &mut self.task).await;
        done.expect("serve returns within 20 s of shutdown").expect("serve task")
    }
}

impl Client {
    /// Registers `name` (a bot account if `bot`) and returns its token.
    pub async fn register(&mut self, name: &str, bot: bool) -> String {
        self.send(json!({"type": "register", "name": name, "bot": bot})).await;
        let reply = self.recv_type("registered").await;
        reply["token"].as_str().expect("a token").to_owned()
    }

    /// Signs in as `name` with `token`.
    pub async fn sign_in(&mut self, name: &str, token: &str) -> Value {
        self.send(json!({"type": "hello", "name": name, "token": token})).await;
        self.recv_type("authenticated").await
    }
}

/// A TCP proxy in front of a server that a test can cut, as a network
/// outage would: [`Proxy::cut`] drops every connection through it and
/// refuses new ones until [`Proxy::restore`].
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    open: Arc<std::sync::atomic::AtomicBool>,
    conns: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// A proxy on `127.0.0.1:0` to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let open = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let conns = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (open2, conns2) = (open.clone(), conns.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !open2.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                let relay = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                conns2.lock().unwrap_or_else(|p| p.into_inner()).push(relay.abort_handle());
            }
        });
        Proxy { addr, open, conns, task }
    }

    /// Drops every connection through the proxy and refuses new ones.
    pub fn cut(&self) {
        self.open.store(false, std::sync::atomic::Ordering::SeqCst);
        for c in self.conns.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            c.abort();
        }
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.open.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(reason: &str, winner: u64, moves: Value, line: Value) -> Value {
        json!({"type": "game_over", "reason": reason, "winner": winner, "moves": moves, "line": line})
    }

    fn fails(game_over: Value) -> bool {
        std::panic::catch_unwind(|| assert_judged(3, &game_over)).is_err()
    }

    #[test]
    fn a_game_over_is_judged_by_its_reason() {
        let row = json!({"kind": "row", "index": 0});
        let won = json!([[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]]);
        let going = json!([[0, 0], [1, 0], [0, 1]]);
        // What the contract allows.
        assert_judged(3, &over("line", 1, won.clone(), row.clone()));
        assert_judged(3, &over("resign", 2, going.clone(), Value::Null));
        assert_judged(3, &over("timeout", 1, going.clone(), Value::Null));
        assert_judged(3, &over("disconnect", 1, going.clone(), Value::Null));
        assert_judged(3, &over("shutdown", 0, going.clone(), Value::Null));
        assert_judged(3, &over("aborted", 0, json!([[1, 1]]), Value::Null));
        // A game the board had already decided, ended by anything but its line.
        for reason in ["resign", "timeout", "disconnect"] {
            assert!(fails(over(reason, 1, won.clone(), Value::Null)), "{reason}");
        }
        assert!(fails(over("shutdown", 0, won.clone(), Value::Null)));
        // A line that is not on the board, or a winner the reason does not give.
        assert!(fails(over("line", 1, going.clone(), row.clone())));
        assert!(fails(over("line", 2, won.clone(), row)));
        assert!(fails(over("line", 1, won, Value::Null)));
        assert!(fails(over("timeout", 2, going.clone(), Value::Null)), "player 2 was not to move");
        assert!(fails(over("resign", 0, going.clone(), Value::Null)));
        assert!(fails(over("shutdown", 1, going.clone(), Value::Null)));
        assert!(fails(over("aborted", 0, going.clone(), Value::Null)), "each side had moved");
        assert!(fails(over("disconnect", 2, json!([[0, 0]]), Value::Null)), "before each side moved");
        assert!(fails(over("gave_up", 1, going, Value::Null)));
    }
}
