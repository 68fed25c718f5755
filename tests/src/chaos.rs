//! The chaos run: many clients at once against one in-process server, with
//! mixed behaviour — honest players, players who drop and resume, garbage and
//! binary frames, oversized frames, floods, abrupt drops, TCP connections that
//! never finish the handshake, readers that never read. Afterwards the server
//! must still serve, no task may have panicked, every honest game must have
//! ended with a `game_over` whose moves judge to its winner, and the server's
//! connection and room counts must be back to zero.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rand::Rng;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{Instant, sleep, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use tictactoe_server::Config;

use crate::{TestServer, random_game, test_config};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;
type Fallible<T> = Result<T, String>;

/// How many clients of each kind, and for how long.
#[derive(Debug, Clone)]
pub struct ChaosConfig {
    /// How long new games and new misbehaviour keep starting.
    pub duration: Duration,
    /// Pairs playing honest games back to back in private rooms.
    pub honest_pairs: usize,
    /// Honest pairs where one player drops mid-game and resumes on a new connection.
    pub resume_pairs: usize,
    /// Clients sending garbage, binary frames, unknown types and misplaced requests.
    pub garbage: usize,
    /// Clients sending frames over the size limit.
    pub oversized: usize,
    /// Clients flooding requests past the rate limit.
    pub flooders: usize,
    /// Clients that quick-match and then drop the TCP connection mid-game.
    pub droppers: usize,
    /// TCP connections that never finish the WebSocket handshake.
    pub half_open: usize,
    /// Clients that never read while asking for large replies.
    pub slow_readers: usize,
    /// Pairs that challenge each other by name: declined, accepted and
    /// resigned, or abandoned by a drop.
    pub challengers: usize,
}

impl ChaosConfig {
    /// A run of `secs` seconds with every kind of client, `scale` of each per unit.
    pub fn scaled(secs: f64, scale: usize) -> ChaosConfig {
        ChaosConfig {
            duration: Duration::from_secs_f64(secs),
            honest_pairs: 8 * scale,
            resume_pairs: 4 * scale,
            garbage: 4 * scale,
            oversized: 2 * scale,
            flooders: 2 * scale,
            droppers: 4 * scale,
            half_open: 8 * scale,
            slow_readers: 2 * scale,
            challengers: 2 * scale,
        }
    }
}

/// The server configuration of the run: short handshake timeout, a reconnect
/// grace long enough to resume, a small outbound queue for slow readers.
pub fn server_config() -> Config {
    Config {
        reconnect_grace_ms: 5_000,
        handshake_timeout_ms: 500,
        max_messages_per_second: 200,
        max_message_bytes: 4096,
        outbound_queue: 32,
        ..test_config()
    }
}

/// Everything that went wrong in a run: a non-empty list fails it.
#[derive(Debug, Default)]
pub struct Failures(Mutex<Vec<String>>);

impl Failures {
    /// Adds one.
    pub fn push(&self, what: String) {
        if let Ok(mut f) = self.0.lock() {
            f.push(what);
        }
    }

    /// The failures so far.
    pub fn list(&self) -> Vec<String> {
        self.0.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

/// What happened, counted across all clients.
#[derive(Debug, Default)]
pub struct Report {
    /// Honest games that ended with a consistent `game_over`.
    pub games: AtomicU64,
    /// Of those, games in which a player dropped and resumed.
    pub resumed: AtomicU64,
    /// Frames sent by all clients.
    pub frames_sent: AtomicU64,
    /// Abrupt TCP drops by clients.
    pub drops: AtomicU64,
    /// Half-open connections the server hung up on.
    pub half_open_closed: AtomicU64,
    /// Slow readers the server dropped.
    pub slow_dropped: AtomicU64,
    /// Error codes received, by code.
    pub refusals: Mutex<BTreeMap<String, u64>>,
    /// Close codes received, by code.
    pub closes: Mutex<BTreeMap<String, u64>>,
    /// Everything that went wrong: a non-empty list fails the run.
    pub failures: Failures,
    /// Panics anywhere in the process during the run.
    pub panics: AtomicU64,
}

impl Report {
    fn count(map: &Mutex<BTreeMap<String, u64>>, key: String) {
        if let Ok(mut map) = map.lock() {
            *map.entry(key).or_default() += 1;
        }
    }

    fn fail(&self, what: String) {
        self.failures.push(what);
    }

    /// The failures so far.
    pub fn failures(&self) -> Vec<String> {
        self.failures.list()
    }

    /// The figures, one per line.
    pub fn render(&self) -> String {
        let map = |m: &Mutex<BTreeMap<String, u64>>| {
            m.lock()
                .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        };
        format!(
            "chaos: honest games {} ({} with a drop and resume), frames sent {}, abrupt drops {}, \
             half-open connections closed by the server {}, slow readers dropped {}, panics {}\n\
             chaos: refusals by code: {}\nchaos: closes by code: {}",
            self.games.load(Ordering::Relaxed),
            self.resumed.load(Ordering::Relaxed),
            self.frames_sent.load(Ordering::Relaxed),
            self.drops.load(Ordering::Relaxed),
            self.half_open_closed.load(Ordering::Relaxed),
            self.slow_dropped.load(Ordering::Relaxed),
            self.panics.load(Ordering::Relaxed),
            map(&self.refusals),
            map(&self.closes),
        )
    }
}

/// Counts panics anywhere in the process (the server's tasks included).
static PANICS: AtomicU64 = AtomicU64::new(0);

fn count_panics() {
    static HOOK: OnceLock<()> = OnceLock::new();
    HOOK.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::Relaxed);
            previous(info);
        }));
    });
}

/// Runs the chaos against a fresh in-process server and checks the aftermath.
pub async fn run(cfg: &ChaosConfig) -> Arc<Report> {
    count_panics();
    let panics_before = PANICS.load(Ordering::Relaxed);
    let server = TestServer::start(server_config()).await;
    let url = server.url();
    let report = Arc::new(Report::default());
    let deadline = Instant::now() + cfg.duration;
    let mut tasks = tokio::task::JoinSet::new();
    let ctx = Ctx { url: url.clone(), report: report.clone(), deadline };
    for i in 0..cfg.honest_pairs {
        tasks.spawn(ctx.clone().honest(i, false));
    }
    for i in 0..cfg.resume_pairs {
        tasks.spawn(ctx.clone().honest(i, true));
    }
    for _ in 0..cfg.garbage {
        tasks.spawn(ctx.clone().garbage());
    }
    let addr = server.addr;
    for _ in 0..cfg.oversized {
        let c = ctx.clone();
        tasks.spawn(async move { c.repeat("oversized client", ms(50), || c.oversized_once()).await });
    }
    for _ in 0..cfg.flooders {
        let c = ctx.clone();
        tasks.spawn(async move { c.repeat("flooder", ms(100), || c.flood_once()).await });
    }
    for _ in 0..cfg.droppers {
        let c = ctx.clone();
        tasks.spawn(async move { c.repeat("dropper", ms(0), || c.drop_once()).await });
    }
    for _ in 0..cfg.half_open {
        let c = ctx.clone();
        tasks.spawn(async move { c.repeat("half-open client", ms(0), || c.half_open_once(addr)).await });
    }
    for _ in 0..cfg.slow_readers {
        tasks.spawn(ctx.clone().slow_reader());
    }
    for i in 0..cfg.challengers {
        let c = ctx.clone();
        tasks.spawn(async move {
            let round = AtomicU64::new(0);
            c.repeat("challenger", ms(0), || c.challenge_once(i, round.fetch_add(1, Ordering::Relaxed))).await
        });
    }
    let all_done = async {
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done {
                report.fail(format!("a client task failed: {e}"));
            }
        }
    };
    if timeout(cfg.duration + Duration::from_secs(60), all_done).await.is_err() {
        report.fail("clients still running a minute after the deadline".into());
    }

    // The aftermath: still serving, back to zero, no panic.
    match timeout(Duration::from_secs(20), ctx.honest_game(3, false)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => report.fail(format!("after the chaos, a fresh game failed: {e}")),
        Err(_) => report.fail("after the chaos, a fresh game did not finish in 20 s".into()),
    }
    let idle = async {
        while server.stats.connections() != 0 || server.stats.rooms() != 0 {
            sleep(Duration::from_millis(50)).await;
        }
    };
    if timeout(Duration::from_secs(15), idle).await.is_err() {
        report.fail(format!(
            "server not back to zero: {} connections, {} rooms",
            server.stats.connections(),
            server.stats.rooms()
        ));
    }
    server.shutdown().await;
    report.panics.store(PANICS.load(Ordering::Relaxed) - panics_before, Ordering::Relaxed);
    if report.panics.load(Ordering::Relaxed) > 0 {
        report.fail("a task panicked".into());
    }
    report
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What every chaos client shares.
#[derive(Clone)]
struct Ctx {
    url: String,
    report: Arc<Report>,
    deadline: Instant,
}

/// A short pause so that honest clients stay under the rate limit.
const PACE: Duration = Duration::from_millis(8);
const READ: Duration = Duration::from_secs(15);

impl Ctx {
    fn live(&self) -> bool {
        Instant::now() < self.deadline
    }

    async fn connect(&self) -> Fallible<Ws> {
        let (mut ws, _) =
            tokio_tungstenite::connect_async(&self.url).await.map_err(|e| format!("connect: {e}"))?;
        let welcome = recv(&mut ws).await?;
        if welcome["type"] != "welcome" {
            return Err(format!("first frame is not welcome: {welcome}"));
        }
        Ok(ws)
    }

    async fn send(&self, ws: &mut Ws, value: Value) -> Fallible<()> {
        self.report.frames_sent.fetch_add(1, Ordering::Relaxed);
        ws.send(Message::text(value.to_string())).await.map_err(|e| format!("send: {e}"))
    }

    /// Reads until a frame of `kind`; an `error` on the way is a failure.
    async fn expect(&self, ws: &mut Ws, kind: &str) -> Fallible<Value> {
        loop {
            let v = recv(ws).await?;
            if v["type"] == kind {
                return Ok(v);
            }
            if v["type"] == "error" || v["type"] == "game_over" && kind != "game_over" {
                return Err(format!("waiting for {kind}, got {v}"));
            }
        }
    }

    /// Reads the next frame, which must be an `error` with `code`.
    async fn refused(&self, ws: &mut Ws, code: &str) -> Fallible<()> {
        let v = recv(ws).await?;
        if v["type"] != "error" || v["code"] != code {
            return Err(format!("expected error {code}, got {v}"));
        }
        Report::count(&self.report.refusals, code.to_owned());
        Ok(())
    }

    /// Reads to the close; counts the error codes on the way and the close code.
    async fn closed(&self, ws: &mut Ws) -> Option<u16> {
        let code = loop {
            match timeout(READ, ws.next()).await {
                Ok(Some(Ok(Message::Close(frame)))) => break frame.map(|f| u16::from(f.code)),
                Ok(Some(Ok(Message::Text(t)))) => {
                    if let Ok(v) = serde_json::from_str::<Value>(&t)
                        && let Some(code) = v["code"].as_str()
                    {
                        Report::count(&self.report.refusals, code.to_owned());
                    }
                }
                Ok(Some(Ok(_))) => continue,
                _ => break None,
            }
        };
        Report::count(&self.report.closes, code.map_or("none".into(), |c| c.to_string()));
        code
    }

    fn fail(&self, who: &str, e: String) {
        self.report.fail(format!("{who}: {e}"));
    }

    async fn honest(self, i: usize, resume: bool) {
        // Sizes 3 to 5, so some games are long.
        let size = 3 + i % 3;
        while self.live() {
            if let Err(e) = self.honest_game(size, resume).await {
                return self.fail(if resume { "resuming pair" } else { "honest pair" }, e);
            }
        }
    }

    /// One game between two honest clients in a private room, random legal
    /// moves; with `resume`, one player drops mid-game and resumes.
    async fn honest_game(&self, size: usize, resume: bool) -> Fallible<()> {
        let mut a = self.connect().await?;
        let mut b = self.connect().await?;
        self.send(&mut a, json!({"type": "create_room", "size": size})).await?;
        let room = self.expect(&mut a, "room_created").await?["room"].as_str().unwrap_or_default().to_owned();
        self.send(&mut b, json!({"type": "join_room", "room": room})).await?;
        let sa = self.expect(&mut a, "game_started").await?;
        let sb = self.expect(&mut b, "game_started").await?;
        let (mut x, mut o, tokens) = if sa["you"] == 1 {
            (a, b, [sa["resume_token"].clone(), sb["resume_token"].clone()])
        } else {
            (b, a, [sb["resume_token"].clone(), sa["resume_token"].clone()])
        };
        let moves = random_game(size, &mut rand::rng());
        let drop_at = resume.then(|| rand::rng().random_range(0..moves.len()));
        for (i, &[r, c]) in moves.iter().enumerate() {
            if drop_at == Some(i) {
                // The player to move drops without a close frame and comes back.
                let seat = i % 2;
                let (gone, other) = if seat == 0 { (&mut x, &mut o) } else { (&mut o, &mut x) };
                let fresh = self.connect().await?;
                let old = std::mem::replace(gone, fresh);
                drop(old);
                self.report.drops.fetch_add(1, Ordering::Relaxed);
                self.expect(other, "opponent_disconnected").await?;
                self.send(gone, json!({"type": "resume", "token": tokens[seat]})).await?;
                let state = self.expect(gone, "state").await?;
                if state["moves"].as_array().map(Vec::len) != Some(i) {
                    return Err(format!("resumed state has the wrong moves: {state}"));
                }
                self.expect(other, "opponent_reconnected").await?;
            }
            let (mover, other) = if i % 2 == 0 { (&mut x, &mut o) } else { (&mut o, &mut x) };
            sleep(PACE).await;
            self.send(mover, json!({"type": "move", "row": r, "col": c})).await?;
            let own = self.expect(mover, "moved").await?;
            let seen = self.expect(other, "moved").await?;
            if own != seen || own["seq"] != i + 1 {
                return Err(format!("players saw different moves: {own} / {seen}"));
            }
        }
        let gx = self.expect(&mut x, "game_over").await?;
        let go = self.expect(&mut o, "game_over").await?;
        if gx != go {
            return Err(format!("players saw different results: {gx} / {go}"));
        }
        let list: Vec<[usize; 2]> = serde_json::from_value(gx["moves"].clone()).map_err(|e| e.to_string())?;
        let verdict = tictactoe_protocol::judge(size, size, &list).map_err(|e| format!("{e}: {gx}"))?;
        if list != moves || u64::from(verdict.winner_number()) != gx["winner"].as_u64().unwrap_or(9) {
            return Err(format!("game_over does not judge to its winner: {gx}"));
        }
        self.report.games.fetch_add(1, Ordering::Relaxed);
        if drop_at.is_some() {
            self.report.resumed.fetch_add(1, Ordering::Relaxed);
        }
        // Leave politely (half the time) or just hang up.
        if rand::rng().random_bool(0.5) {
            let _ = x.close(None).await;
            let _ = o.close(None).await;
        }
        Ok(())
    }

    /// One challenge between two named clients, ending in turn as a
    /// decline, an accepted game that is resigned, or a drop of the
    /// challenger; each side must hear exactly what the contract says.
    async fn challenge_once(&self, pair: usize, round: u64) -> Fallible<()> {
        let (mut a, mut b) = (self.connect().await?, self.connect().await?);
        let (name_a, name_b) = (format!("chaos-a{pair}-{round}"), format!("chaos-b{pair}-{round}"));
        self.send(&mut a, json!({"type": "hello", "name": name_a})).await?;
        self.send(&mut b, json!({"type": "hello", "name": name_b})).await?;
        // Listed once the hello is through: a ping's pong comes after it.
        self.send(&mut b, json!({"type": "ping"})).await?;
        self.expect(&mut b, "pong").await?;
        self.send(&mut a, json!({"type": "challenge", "name": name_b, "size": 3})).await?;
        let id = self.expect(&mut a, "challenge_sent").await?["challenge"].clone();
        let offered = self.expect(&mut b, "challenged").await?;
        if offered["challenge"] != id || offered["from"]["name"] != name_a.as_str() {
            return Err(format!("challenged {offered}, expected {id} from {name_a}"));
        }
        match round % 3 {
            0 => {
                self.send(&mut b, json!({"type": "decline", "challenge": id, "reason": "chaos"})).await?;
                let ended = self.expect(&mut a, "challenge_ended").await?;
                if ended["reason"] != "declined" {
                    return Err(format!("a decline ended as {ended}"));
                }
            }
            1 => {
                self.send(&mut b, json!({"type": "accept", "challenge": id})).await?;
                let (sa, sb) =
                    (self.expect(&mut a, "game_started").await?, self.expect(&mut b, "game_started").await?);
                if sa["room"] != sb["room"] {
                    return Err(format!("an accepted challenge opened two rooms: {sa} {sb}"));
                }
                self.send(&mut a, json!({"type": "resign"})).await?;
                self.expect(&mut b, "game_over").await?;
                self.report.games.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                drop(a);
                let ended = self.expect(&mut b, "challenge_ended").await?;
                if ended["reason"] != "canceled" {
                    return Err(format!("a dropped challenger's challenge ended as {ended}"));
                }
            }
        }
        Ok(())
    }

    async fn garbage(self) {
        let run = async {
            let mut ws = self.connect().await?;
            let mut n = 0u64;
            while self.live() {
                sleep(PACE).await;
                n += 1;
                let (frame, code) = match n % 9 {
                    0 => (Message::text("{{{ not json"), "bad_message"),
                    1 => (Message::binary(vec![0u8, 159, 146, 150]), "bad_message"),
                    2 => (Message::text(r#"{"type":"teleport"}"#), "bad_message"),
                    3 => (Message::text(r#"{"type":"move","row":"one","col":2}"#), "bad_message"),
                    4 => (Message::text(r#"{"type":"move","row":0,"col":0}"#), "not_in_game"),
                    5 => (Message::text(r#"{"type":"accept","challenge":"c0-NOPE"}"#), "challenge_not_found"),
                    6 => (Message::text(r#"{"type":"challenge","name":"nobody"}"#), "invalid_name"),
                    7 => (Message::text(r#"{"type":"decline","challenge":7}"#), "bad_message"),
                    _ => (Message::text(r#"{"type":"join_room","room":"ZZZZZZZZZZ"}"#), "room_not_found"),
                };
                self.report.frames_sent.fetch_add(1, Ordering::Relaxed);
                ws.send(frame).await.map_err(|e| format!("send: {e}"))?;
                self.refused(&mut ws, code).await?;
            }
            Ok::<_, String>(())
        };
        if let Err(e) = run.await {
            self.fail("garbage client", e);
        }
    }

    /// Runs `once` again and again until the deadline, `pause` apart; the
    /// first failure is recorded under `who` and ends the client.
    async fn repeat<F, Fut>(&self, who: &str, pause: Duration, once: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Fallible<()>>,
    {
        while self.live() {
            if let Err(e) = once().await {
                return self.fail(who, e);
            }
            sleep(pause).await;
        }
    }

    /// A frame twice the size limit: the server must close with 1009.
    async fn oversized_once(&self) -> Fallible<()> {
        let mut ws = self.connect().await?;
        let big = format!(r#"{{"type":"hello","protocol":1,"name":"{}"}}"#, "x".repeat(8192));
        self.report.frames_sent.fetch_add(1, Ordering::Relaxed);
        ws.send(Message::text(big)).await.map_err(|e| format!("send: {e}"))?;
        match self.closed(&mut ws).await {
            Some(1009) => Ok(()),
            other => Err(format!("oversized frame closed with {other:?}, not 1009")),
        }
    }

    /// 600 pings at once: pongs, then `rate_limited`, then the close with 1008.
    async fn flood_once(&self) -> Fallible<()> {
        let mut ws = self.connect().await?;
        for _ in 0..600 {
            self.report.frames_sent.fetch_add(1, Ordering::Relaxed);
            if ws.feed(Message::text(r#"{"type":"ping"}"#)).await.is_err() {
                break;
            }
        }
        let _ = ws.flush().await;
        match self.closed(&mut ws).await {
            Some(1008) => Ok(()),
            other => Err(format!("a flood closed with {other:?}, not 1008")),
        }
    }

    /// Quick-matches on 4×4 (away from the honest games) and drops the TCP
    /// connection at a random point: waiting, mid-game, or right after a move.
    async fn drop_once(&self) -> Fallible<()> {
        let mut ws = self.connect().await?;
        self.send(&mut ws, json!({"type": "quick_match", "size": 4})).await?;
        let until = Instant::now() + Duration::from_millis(rand::rng().random_range(0..400));
        while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(until, ws.next()).await {
            // Moves at random, in turn or not, on or off the board.
            if let Message::Text(t) = msg
                && (t.contains("\"game_started\"") || t.contains("\"moved\""))
            {
                let (row, col) = (rand::rng().random_range(0..5), rand::rng().random_range(0..5));
                self.send(&mut ws, json!({"type": "move", "row": row, "col": col})).await?;
            }
        }
        self.report.drops.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// A TCP connection that sends part of a handshake (or nothing) and
    /// stalls: the server must hang up after its handshake timeout.
    async fn half_open_once(&self, addr: std::net::SocketAddr) -> Fallible<()> {
        let mut tcp = TcpStream::connect(addr).await.map_err(|e| format!("tcp connect: {e}"))?;
        if rand::rng().random_bool(0.5) {
            let _ = tcp.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n").await;
        }
        let mut buf = [0u8; 256];
        loop {
            match timeout(READ, tcp.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(_)) => continue,
                Err(_) => return Err("the server kept a stalled handshake open".to_owned()),
            }
        }
        self.report.half_open_closed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Never reads, while asking again and again for the biggest reply there
    /// is: `spectate` (a `state` with a 100×100 board) and `leave`, on a room
    /// held open by a second connection. The server must drop it once its
    /// outbound queue is full, without slowing anyone else.
    async fn slow_reader(self) {
        let run = async {
            let mut holder = self.connect().await?;
            self.send(&mut holder, json!({"type": "create_room", "size": 100})).await?;
            let room = self.expect(&mut holder, "room_created").await?["room"].clone();
            let socket = TcpSocket::new_v4().map_err(|e| e.to_string())?;
            let _ = socket.set_recv_buffer_size(1024);
            let addr = self.url.trim_start_matches("ws://").trim_end_matches('/');
            let addr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
            let tcp = socket.connect(addr).await.map_err(|e| format!("tcp connect: {e}"))?;
            let (mut ws, _) = tokio_tungstenite::client_async(self.url.as_str(), MaybeTlsStream::Plain(tcp))
                .await
                .map_err(|e| format!("handshake: {e}"))?;
            while self.live() {
                let spectate = json!({"type": "spectate", "room": room});
                if self.send(&mut ws, spectate).await.is_err()
                    || self.send(&mut ws, json!({"type": "leave"})).await.is_err()
                {
                    break; // dropped by the server
                }
                sleep(Duration::from_millis(20)).await;
            }
            // Drain briefly: a dropped reader finds the end of its stream.
            let drained =
                timeout(Duration::from_secs(3), async { while let Some(Ok(_)) = ws.next().await {} });
            if drained.await.is_ok() {
                self.report.slow_dropped.fetch_add(1, Ordering::Relaxed);
            }
            // The holder was served throughout.
            self.send(&mut holder, json!({"type": "ping", "id": 1})).await?;
            self.expect(&mut holder, "pong").await?;
            Ok::<_, String>(())
        };
        if let Err(e) = run.await {
            self.fail("slow reader", e);
        }
    }
}

/// The next text frame as JSON, skipping control frames.
async fn recv(ws: &mut Ws) -> Fallible<Value> {
    loop {
        match timeout(READ, ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => {
                return serde_json::from_str(&t).map_err(|e| format!("{e}: {t}"));
            }
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Ok(Some(Ok(other))) => return Err(format!("unexpected frame {other:?}")),
            Ok(Some(Err(e))) => return Err(format!("read: {e}")),
            Ok(None) => return Err("the server closed the connection".into()),
            Err(_) => return Err(format!("nothing within {READ:?}")),
        }
    }
}
