//! The load generator's client side: pairs of players in private rooms making
//! random legal moves, closed-loop or paced, rematching after every game; and
//! the report (throughput, the mover's round-trip latency, errors, judging).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use tictactoe_protocol::{Game, judge};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long one read may take before the pair counts a `timeout` error and stops.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// `ws://` URL of the target.
    pub url: String,
    /// Concurrent games.
    pub pairs: usize,
    /// How long to play.
    pub duration: Duration,
    /// Total moves per second across all pairs; `None` = closed loop.
    pub rate: Option<f64>,
    /// Board size.
    pub size: usize,
    /// A Fischer clock for every game; `None`: the server's per-move timer.
    pub clock: Option<tictactoe_protocol::Fischer>,
    /// The target is the bare relay (no rooms, no rules), not the game server.
    pub relay: bool,
    /// Where the second player of each game connects (another instance of
    /// a cluster: the game is played across instances); `None`: `url`.
    pub join_url: Option<String>,
}

/// What one run measured.
#[derive(Debug, Default)]
pub struct Report {
    /// Accepted moves.
    pub moves: u64,
    /// Finished games.
    pub games: u64,
    /// Wall time of the measured phase.
    pub elapsed: Duration,
    /// Mover's round trip per move (send `move` → own `moved`), in µs.
    pub latencies_us: Vec<u32>,
    /// Refusals and failures by code (`timeout`, `closed` for transport trouble).
    pub errors: BTreeMap<String, u64>,
    /// From sending a game's last move to its `game_over`, per game, in µs
    /// (the server holds `game_over` until the record is committed).
    pub ends_us: Vec<u32>,
    /// Games whose `game_over.moves` judged to the announced winner.
    pub judged_ok: u64,
    /// Games whose record did not judge to the announced winner.
    pub judged_bad: u64,
}

impl Report {
    fn merge(&mut self, other: Report) {
        self.moves += other.moves;
        self.games += other.games;
        self.latencies_us.extend(other.latencies_us);
        self.ends_us.extend(other.ends_us);
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        self.judged_ok += other.judged_ok;
        self.judged_bad += other.judged_bad;
    }

    /// Moves per second over the measured phase.
    pub fn moves_per_sec(&self) -> f64 {
        self.moves as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The latency at quantile `q` (0..=1), in µs.
    pub fn percentile(&mut self, q: f64) -> u32 {
        if self.latencies_us.is_empty() {
            return 0;
        }
        self.latencies_us.sort_unstable();
        let i = ((self.latencies_us.len() - 1) as f64 * q).round() as usize;
        self.latencies_us[i]
    }

    /// The time from a game's last move to its `game_over` at quantile `q`, in µs.
    pub fn end_percentile(&mut self, q: f64) -> u32 {
        if self.ends_us.is_empty() {
            return 0;
        }
        self.ends_us.sort_unstable();
        self.ends_us[((self.ends_us.len() - 1) as f64 * q).round() as usize]
    }

    /// One `summary:` line of key=value pairs, for scripts.
    pub fn summary(&mut self) -> String {
        let errors: u64 = self.errors.values().sum();
        let (end50, end99) = (self.end_percentile(0.5), self.end_percentile(0.99));
        format!(
            "summary: moves_per_sec={:.0} p50_us={} p99_us={} p999_us={} max_us={} errors={errors} judged_bad={} \
             end_p50_us={end50} end_p99_us={end99} connect_retries={}",
            self.moves_per_sec(),
            self.percentile(0.5),
            self.percentile(0.99),
            self.percentile(0.999),
            self.percentile(1.0),
            self.judged_bad,
            CONNECT_RETRIES.load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// The printed report, several lines.
    pub fn render(&mut self, label: &str) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let errors = if self.errors.is_empty() {
            "none".to_owned()
        } else {
            self.errors.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ")
        };
        let judged = if self.games > 0 {
            format!(
                "\n  judge:    {}/{} game records judge to their winner",
                self.judged_ok,
                self.judged_ok + self.judged_bad
            )
        } else {
            String::new()
        };
        let (p50, p99, p999, max) =
            (self.percentile(0.5), self.percentile(0.99), self.percentile(0.999), self.percentile(1.0));
        format!(
            "{label}\n  moves:    {} in {:.1} s = {:.0} moves/s, {:.0} games/s\n  latency:  p50 {p50} µs, p99 {p99} µs, p99.9 {p999} µs, max {max} µs\n  errors:   {errors}{judged}",
            self.moves,
            secs,
            self.moves_per_sec(),
            self.games as f64 / secs,
        )
    }
}

/// Small buffers and no Nagle: the default client config (a 128 KiB read
/// buffer zero-filled on every read) would make the load generator, not the
/// server, the bottleneck.
fn client_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_message_size(Some(1 << 20))
}

/// Opens a connection and reads its `welcome`. A handshake the kernel
/// reset (thousands of connections opened at once overflow the server's
/// accept queue, and SYN cookies then reset some) is tried again, as a
/// client would: up to [`CONNECT_TRIES`] times, a little later each time.
async fn connect(url: &str) -> Result<Ws, String> {
    let mut tries = 0;
    let mut ws = loop {
        tries += 1;
        match tokio_tungstenite::connect_async_with_config(url, Some(client_config()), true).await {
            Ok((ws, _)) => break ws,
            Err(tokio_tungstenite::tungstenite::Error::Io(_)) if tries < CONNECT_TRIES => {
                CONNECT_RETRIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50 * tries)).await;
            }
            Err(e) => return Err(format!("connect: {e}")),
        }
    };
    match read(&mut ws).await? {
        v if v.as_str().starts_with(r#"{"type":"welcome""#) => Ok(ws),
        other => Err(format!("expected welcome, got {other}")),
    }
}

/// How many times [`connect`] tries a handshake the kernel reset.
const CONNECT_TRIES: u64 = 5;

/// Handshakes tried again, in this process: the summary says how many (an
/// accept queue that overflowed is worth knowing about).
static CONNECT_RETRIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

async fn read(ws: &mut Ws) -> Result<Utf8Bytes, String> {
    loop {
        match tokio::time::timeout(READ_TIMEOUT, ws.next()).await {
            Err(_) => return Err("timeout".into()),
            Ok(Some(Ok(Message::Text(t)))) => return Ok(t),
            Ok(Some(Ok(_))) => continue,
            Ok(_) => return Err("closed".into()),
        }
    }
}

async fn send(ws: &mut Ws, value: &Value) -> Result<(), String> {
    ws.send(Message::text(value.to_string())).await.map_err(|_| "closed".to_owned())
}

async fn read_type(ws: &mut Ws, kind: &str) -> Result<Value, String> {
    loop {
        let text = read(ws).await?;
        let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        if v["type"] == kind {
            return Ok(v);
        }
        if v["type"] == "error" {
            return Err(v["code"].as_str().unwrap_or("error").to_owned());
        }
    }
}

/// One pair: `x` moves first. Relay pairs are connected in order so that the
/// relay pairs them together.
struct Pair {
    x: Ws,
    o: Ws,
}

async fn open_game_pair(
    url: &str,
    join_url: &str,
    size: usize,
    clock: Option<tictactoe_protocol::Fischer>,
) -> Result<Pair, String> {
    // Named, as real clients are: the server lists them (who, challenges).
    let mut a = connect(url).await?;
    send(&mut a, &json!({"type": "hello", "name": "load-a"})).await?;
    send(&mut a, &json!({"type": "create_room", "size": size, "clock": clock})).await?;
    let room = read_type(&mut a, "room_created").await?["room"].clone();
    let mut b = connect(join_url).await?;
    send(&mut b, &json!({"type": "hello", "name": "load-b"})).await?;
    send(&mut b, &json!({"type": "join_room", "room": room})).await?;
    let sa = read_type(&mut a, "game_started").await?;
    read_type(&mut b, "game_started").await?;
    Ok(if sa["you"] == 1 { Pair { x: a, o: b } } else { Pair { x: b, o: a } })
}

/// Sets up every pair (relay pairs one after another, game pairs in parallel).
async fn open_pairs(cfg: &LoadConfig) -> Result<Vec<Pair>, String> {
    let mut pairs = Vec::with_capacity(cfg.pairs);
    if cfg.relay {
        for _ in 0..cfg.pairs {
            let x = connect(&cfg.url).await?;
            let o = connect(&cfg.url).await?;
            pairs.push(Pair { x, o });
        }
        return Ok(pairs);
    }
    let mut tasks = Vec::new();
    for _ in 0..cfg.pairs {
        let (url, size, clock) = (cfg.url.clone(), cfg.size, cfg.clock);
        let join = cfg.join_url.clone().unwrap_or_else(|| url.clone());
        tasks.push(tokio::spawn(async move { open_game_pair(&url, &join, size, clock).await }));
    }
    for t in tasks {
        pairs.push(t.await.map_err(|e| e.to_string())??);
    }
    Ok(pairs)
}

/// Plays until `until`; `interval` paces this pair's moves, starting at `first`
/// (pairs are staggered so that paced load is a steady stream, not bursts).
async fn play_pair(
    mut pair: Pair,
    cfg: LoadConfig,
    seed: u64,
    until: Instant,
    interval: Option<Duration>,
    first: Instant,
) -> Report {
    let mut report = Report::default();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut game = Game::new(cfg.size).unwrap_or_default();
    let all_cells: Vec<(usize, usize)> =
        (0..cfg.size * cfg.size).map(|i| (i / cfg.size, i % cfg.size)).collect();
    let mut empty = all_cells.clone();
    let mut x_moves = true;
    let mut next_slot = first;
    while Instant::now() < until {
        if let Some(interval) = interval {
            tokio::time::sleep_until(next_slot.into()).await;
            next_slot += interval;
        }
        let pick = rng.random_range(0..empty.len().max(1));
        let (row, col) = if empty.is_empty() { (0, 0) } else { empty.swap_remove(pick) };
        let ends = game.play(row, col).map(|s| s.is_over()).unwrap_or(true);
        let (mover, other) = if x_moves { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) };
        // The relay has no rules: a game's last move says so, for it to
        // send what the server would (a `game_over` to both).
        let frame = if cfg.relay && ends {
            format!(r#"{{"type":"move","row":{row},"col":{col},"last":true}}"#)
        } else {
            format!(r#"{{"type":"move","row":{row},"col":{col}}}"#)
        };
        let started = Instant::now();
        if let Err(e) = mover.send(Message::text(frame)).await.map_err(|_| "closed".to_owned()) {
            *report.errors.entry(e).or_default() += 1;
            break;
        }
        let own = read(mover).await;
        let seen = read(other).await;
        let (own, _) = match (own, seen) {
            (Ok(own), Ok(seen)) => (own, seen),
            (Err(e), _) | (_, Err(e)) => {
                *report.errors.entry(e).or_default() += 1;
                break;
            }
        };
        if !own.as_str().starts_with(r#"{"type":"moved""#) {
            let v: Value = serde_json::from_str(&own).unwrap_or_default();
            *report.errors.entry(v["code"].as_str().unwrap_or("unexpected").to_owned()).or_default() += 1;
            break;
        }
        report.latencies_us.push(u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX));
        report.moves += 1;
        x_moves = !x_moves;
        if ends {
            if let Err(e) = finish_game(&mut pair, &mut report, &cfg, started).await {
                *report.errors.entry(e).or_default() += 1;
                break;
            }
            game = Game::new(cfg.size).unwrap_or_default();
            empty.clone_from(&all_cells);
            x_moves = true;
        }
    }
    report
}

/// Reads both `game_over`s, judges the record (the relay's is a canned
/// frame: parsed alike, not judged), and starts the rematch (seats swap).
async fn finish_game(
    pair: &mut Pair,
    report: &mut Report,
    cfg: &LoadConfig,
    last: Instant,
) -> Result<(), String> {
    let over = read_type(&mut pair.x, "game_over").await?;
    read_type(&mut pair.o, "game_over").await?;
    report.ends_us.push(u32::try_from(last.elapsed().as_micros()).unwrap_or(u32::MAX));
    report.games += 1;
    let moves: Vec<[usize; 2]> = serde_json::from_value(over["moves"].clone()).unwrap_or_default();
    let consistent = judge(cfg.size, cfg.size, &moves)
        .is_ok_and(|v| Some(u64::from(v.winner_number())) == over["winner"].as_u64());
    if cfg.relay {
        // Nothing to judge: the relay's frames are the same whatever was played.
    } else if consistent {
        report.judged_ok += 1;
    } else {
        report.judged_bad += 1;
    }
    send(&mut pair.x, &json!({"type": "rematch"})).await?;
    send(&mut pair.o, &json!({"type": "rematch"})).await?;
    read_type(&mut pair.x, "game_started").await?;
    let so = read_type(&mut pair.o, "game_started").await?;
    if so["you"] == 1 {
        std::mem::swap(&mut pair.x, &mut pair.o);
    }
    Ok(())
}

/// Opens the pairs, plays for the configured time, and merges the reports.
pub async fn run(cfg: &LoadConfig) -> Result<Report, String> {
    let pairs = open_pairs(cfg).await?;
    let interval = cfg.rate.map(|r| Duration::from_secs_f64(cfg.pairs as f64 / r.max(1e-9)));
    let start = Instant::now();
    let until = start + cfg.duration;
    let tasks: Vec<_> = pairs
        .into_iter()
        .enumerate()
        .map(|(i, pair)| {
            let first = start + interval.map_or(Duration::ZERO, |d| d.mul_f64(i as f64 / cfg.pairs as f64));
            tokio::spawn(play_pair(pair, cfg.clone(), i as u64, until, interval, first))
        })
        .collect();
    let mut report = Report::default();
    for t in tasks {
        report.merge(t.await.map_err(|e| e.to_string())?);
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Opens `n` connections that stay idle: each reads its `welcome`, then only
/// answers the server's pings (a task per connection polls it). Aborting the
/// returned tasks closes them (dropping a handle does not).
pub async fn hold_idle(url: &str, n: usize) -> Result<Vec<tokio::task::JoinHandle<()>>, String> {
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        let mut ws = connect(url).await.map_err(|e| format!("idle connection {i}: {e}"))?;
        conns.push(tokio::spawn(async move { while let Some(Ok(_)) = ws.next().await {} }));
    }
    Ok(conns)
}

/// Opens `pairs` games on `url`, each with its first move made and its
/// second player to move, and holds their connections (answering pings)
/// until the handles are aborted: a server's cost of a live game.
pub async fn hold_live(url: &str, pairs: usize) -> Result<Vec<tokio::task::JoinHandle<()>>, String> {
    let mut held = Vec::with_capacity(2 * pairs);
    for i in 0..pairs {
        let mut pair = open_game_pair(url, url, 3, None).await.map_err(|e| format!("live game {i}: {e}"))?;
        send(&mut pair.x, &json!({"type": "move", "row": 1, "col": 1})).await?;
        read_type(&mut pair.x, "moved").await?;
        read_type(&mut pair.o, "moved").await?;
        for mut ws in [pair.x, pair.o] {
            held.push(tokio::spawn(async move { while let Some(Ok(_)) = ws.next().await {} }));
        }
    }
    Ok(held)
}

/// Resident memory of process `pid`, in KiB (Linux `/proc`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
