//! The chaos run's crash phase: honest pairs play against the real
//! `ttt-server` binary on a SQLite file; in the middle the server is killed
//! with SIGKILL and started again on the same file and address. Every game
//! either finished before the kill, or its players reconnect, resume with
//! their tokens and finish it; every result judges consistent, and the record
//! of every game interrupted by the kill is in the API afterwards.
//!
//! Its cluster form: two instances on one Postgres and one Redis, the pairs
//! spread over both (half of them with a player on each, relayed over
//! Redis); one instance is killed and not started again. The
//! other adopts its games, their players resume there and finish them, and
//! the same checks hold.
//!
//! Its SIGSTOP form: the same cluster, but the instance is paused past its
//! lease instead (the other adopts its games; players who hear nothing for
//! a few seconds resume there), then woken and left running. Players keep
//! their old connections to it, some with a move sent into them during the
//! pause, and read them on: once awake it must say nothing of the games it
//! lost (no `moved`, no `game_over`) and close them with 1012. Every frame
//! any client saw is then checked against the records (see
//! [`crate::witness`]), and a few pairs play as accounts whose ratings must
//! have moved once per game.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rand::Rng;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep, timeout};
use tokio_tungstenite::tungstenite::Message;

mod arena;
mod pause;

use pause::{Heard, Kept, hear_out, holders, judge_heard, signal};

use crate::chaos::Failures;
use crate::process::{StartLine, start_line};
use crate::witness::{Judged, Seen, Witness};
use crate::{TempDir, api, random_game, random_rest};

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;
type Fallible<T> = Result<T, String>;

/// The phase's shape.
#[derive(Debug, Clone)]
pub struct CrashConfig {
    /// The `ttt-server` binary.
    pub server_bin: PathBuf,
    /// Pairs playing games back to back.
    pub pairs: usize,
    /// How long they play before the kill.
    pub before: Duration,
    /// How long new games keep starting after the restart.
    pub after: Duration,
    /// Two instances of a cluster (Postgres and Redis, started for the
    /// phase), one of them killed and not started again.
    pub cluster: bool,
    /// With `cluster`: the instance is not killed but SIGSTOPped for this
    /// long (past its lease), then SIGCONTed and left running to the end.
    pub stop: Option<Duration>,
}

/// What happened.
#[derive(Debug, Default)]
pub struct CrashReport {
    /// Games that finished before the kill.
    pub before: AtomicU64,
    /// Games in progress at the kill that were resumed and finished after it.
    pub resumed: AtomicU64,
    /// Games whose last move was in flight at the kill: ended by the restart itself.
    pub ended_by_restart: AtomicU64,
    /// Games started and finished after the restart.
    pub after: AtomicU64,
    /// Games started so shortly before the kill (within the 100 ms a crash
    /// may lose) that the restarted server did not have them.
    pub lost_young: AtomicU64,
    /// Moves the players had seen accepted that the restarted server did not have.
    pub moves_lost: AtomicU64,
    /// How long before the kill the oldest of those was seen, in milliseconds
    /// (the contract allows 100).
    pub lost_oldest_ms: AtomicU64,
    /// Games the restarted server said it restored.
    pub restored: AtomicU64,
    /// Games that ended before the kill, found recorded as seen and not
    /// restored after it.
    pub stayed_ended: AtomicU64,
    /// From starting the server again to its listening, in milliseconds; in
    /// a cluster, from the kill to the other instance's adopting its games.
    pub restart_ms: AtomicU64,
    /// Whether it was the cluster form.
    pub cluster: AtomicBool,
    /// In a cluster, the games finished whose players were on different
    /// instances when they started (the kill sends both to the survivor).
    pub cross: AtomicU64,
    /// The SIGSTOP form, and how long the pause lasted in milliseconds.
    pub paused_ms: AtomicU64,
    /// Old connections to the stopped instance its players kept and read on
    /// after it woke.
    pub kept: AtomicU64,
    /// Of those, the ones whose player had sent a move into them during the pause.
    pub kept_queued: AtomicU64,
    /// Of those kept, the ones in rooms it held whose games the other
    /// adopted (and recorded).
    pub kept_held: AtomicU64,
    /// The ones in rooms it held whose games it still held when it woke (too
    /// young to have been saved, nobody adopted them) and recorded itself.
    pub kept_kept: AtomicU64,
    /// The ones in rooms it held whose games have no record.
    pub kept_unrecorded: AtomicU64,
    /// Of those, the ones it closed with 1012 once awake.
    pub closed_restart: AtomicU64,
    /// Records of games resumed after the stop that the API had only a
    /// moment after their `game_over` (written by the woken instance as its
    /// store came back).
    pub late_records: AtomicU64,
    /// `moved` or `game_over` frames it sent on them once awake: stale.
    pub stale: AtomicU64,
    /// The SIGSTOP form's check of every sighting against the records.
    pub witnessed: Mutex<Option<Judged>>,
    /// The cluster form's arena tournament, as judged (see `crash/arena.rs`).
    pub arena: Mutex<String>,
    /// Everything that went wrong: a non-empty list fails the run.
    pub failures: Failures,
}

impl CrashReport {
    fn fail(&self, what: String) {
        self.failures.push(what);
    }

    /// The failures so far.
    pub fn failures(&self) -> Vec<String> {
        self.failures.list()
    }

    /// The figures, one line.
    pub fn render(&self) -> String {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        // The words of each form: alone (killed, started again) or a cluster
        // (killed, adopted; or paused, adopted, woken).
        let paused = n(&self.paused_ms);
        let stopped = format!(
            "cluster: two instances, one SIGSTOPped for {paused} ms and then SIGCONTed: games finished before the stop"
        );
        let fault = if paused > 0 { "the stop" } else { "the kill" };
        let [head, resumed, ended, restored, took] = match self.cluster.load(Ordering::Relaxed) {
            true if paused > 0 => [
                &stopped,
                "in progress on the stopped instance and finished on the other after a resume",
                "ended by the stop itself",
                "games adopted",
                "ms after the stop",
            ],
            true => [
                "cluster: two instances, one SIGKILLed: games finished before the kill",
                "in progress on the killed instance and finished on the other after a resume",
                "ended by the kill itself",
                "games adopted",
                "ms after the kill",
            ],
            false => [
                "crash: games finished before the SIGKILL",
                "in progress at it and finished after a resume",
                "ended by the restart itself",
                "games restored",
                "listening ms after the restart",
            ],
        };
        format!(
            "{head} {}, {resumed} {}, {ended} {}, started within 100 ms of it and lost with it {}, played after \
             it {}; {restored} {} ({took}: {}); moves seen accepted but lost {} (the oldest seen {} ms before \
             {fault}); games ended before {fault} and still ended, recorded as seen, after it {}",
            n(&self.before),
            n(&self.resumed),
            n(&self.ended_by_restart),
            n(&self.lost_young),
            n(&self.after),
            n(&self.restored),
            n(&self.restart_ms),
            n(&self.moves_lost),
            n(&self.lost_oldest_ms),
            n(&self.stayed_ended),
        ) + &match self.cluster.load(Ordering::Relaxed) {
            true => format!("; of all games finished, {} had a player on each instance", n(&self.cross)),
            false => String::new(),
        } + &self
            .witnessed
            .lock()
            .ok()
            .and_then(|w| w.as_ref().map(|j| self.render_witnessed(j)))
            .unwrap_or_default()
            + &self.arena.lock().map(|a| a.clone()).unwrap_or_default()
    }

    /// The SIGSTOP form's own figures.
    fn render_witnessed(&self, j: &Judged) -> String {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "; old connections to the stopped instance read on after it woke {} (with a move sent into them \
             during the pause {}; in rooms it held whose games the other adopted {}, closed by it with 1012 {}; \
             in rooms whose games nobody adopted and it recorded itself {}, with no record {}; records there only \
             after their game_over {}), moved/game_over it sent on them once awake {} (must be 0); frames seen checked \
             against the records: {} games, {} moves, contradicted but younger than 100 ms at the stop {}, games \
             seen but never named by a game_over {}; accounts {} with {} rated games, each rated once",
            n(&self.kept),
            n(&self.kept_queued),
            n(&self.kept_held),
            n(&self.closed_restart),
            n(&self.kept_kept),
            n(&self.kept_unrecorded),
            n(&self.late_records),
            n(&self.stale),
            j.games,
            j.moves,
            j.young,
            j.unnamed,
            j.accounts,
            j.rated,
        )
    }
}

/// A `ttt-server` process.
struct Process {
    child: Child,
    addr: SocketAddr,
    /// When it said it adopted games, and how many.
    adopted: Arc<Mutex<Option<(Instant, u64)>>>,
    /// Its log, line by line: quoted when a failure concerns one of its rooms.
    log: Arc<Mutex<Vec<String>>>,
}

impl Process {
    /// Notes `what` in its log where it happens, among its lines.
    fn mark(&self, what: &str) {
        if let Ok(mut log) = self.log.lock() {
            log.push(format!("==== chaos: {what}"));
        }
    }

    /// Writes its log to `path`.
    fn save_log(&self, path: &std::path::Path) -> std::io::Result<()> {
        let log = self.log.lock().map(|l| l.join("\n")).unwrap_or_default();
        std::fs::write(path, log + "\n")
    }

    /// The lines of its log about room `code`.
    fn about(&self, code: &str) -> Vec<String> {
        let tag = format!("code={code}");
        let log = self.log.lock().map(|l| l.clone()).unwrap_or_default();
        log.into_iter().filter(|l| l.contains(&tag)).collect()
    }
}

/// Starts the binary with `args`; returns once it listens, with the number
/// of games it said it restored.
async fn start(bin: &PathBuf, args: &[String]) -> Fallible<(Process, u64)> {
    let mut child = Command::new(bin)
        .args(args)
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("start {}: {e}", bin.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut restored = 0;
    let addr = loop {
        let line = timeout(Duration::from_secs(20), lines.next_line())
            .await
            .map_err(|_| "the server did not start listening within 20 s".to_owned())?
            .map_err(|e| e.to_string())?
            .ok_or("the server exited before listening")?;
        match start_line(&line) {
            StartLine::Restored(games) => restored = games,
            StartLine::Listening(addr) => break addr,
            StartLine::BadAddress(line) => return Err(format!("no address on the listening line {line:?}")),
            StartLine::Other => {}
        }
    };
    // Keep draining the log so the server never blocks on a full pipe.
    let adopted = Arc::new(Mutex::new(None));
    let seen = adopted.clone();
    let log = Arc::new(Mutex::new(Vec::new()));
    let kept = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(mut kept) = kept.lock() {
                kept.push(line.clone());
            }
            if line.contains("adopted the games") {
                let games = line.split("games=").nth(1).and_then(|g| g.split_whitespace().next());
                let games = games.and_then(|g| g.parse().ok()).unwrap_or(0);
                if let Ok(mut at) = seen.lock() {
                    let before = at.map_or(0, |(_, n)| n);
                    *at = Some((Instant::now(), before + games));
                }
            }
        }
    });
    Ok((Process { child, addr, adopted, log }, restored))
}

/// Shared by the pairs.
struct Ctx {
    /// What each pair is doing, for the report of pairs that never end.
    doing: Mutex<std::collections::HashMap<usize, String>>,
    /// The servers' URLs and addresses: the one killed first. Alone, both
    /// are the one server's (it comes back on the same address).
    urls: [String; 2],
    addrs: [SocketAddr; 2],
    /// Two instances of a cluster: after the kill, everyone goes to the other.
    cluster: bool,
    report: Arc<CrashReport>,
    /// Set just before the server is killed: a failure after it is the kill's.
    killed: AtomicBool,
    /// When it was killed.
    killed_at: Mutex<Option<Instant>>,
    /// Set once the server listens again after the kill.
    restarted: AtomicBool,
    /// New games start until then.
    deadline: Mutex<Option<Instant>>,
    /// Games born before the kill whose `game_over` both players saw without
    /// an interruption: `(game_over, resume tokens)`. None may come back.
    ended: Mutex<Vec<(Value, [Value; 2])>>,
    /// The SIGSTOP form: how long a player waits for an answer before it
    /// takes its instance for gone (a pause is heard only as silence).
    silence: Option<Duration>,
    /// When the stopped instance was woken.
    woke_at: Mutex<Option<Instant>>,
    /// What every client saw (the SIGSTOP form checks it against the records).
    witness: Witness,
    /// The readers of old connections kept across the pause.
    hearing: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// What the old connections to the stopped instance in its own rooms
    /// heard, judged at the end.
    heard: Mutex<Vec<Heard>>,
}

impl Ctx {
    fn live(&self) -> bool {
        self.deadline.lock().ok().and_then(|d| *d).is_none_or(|d| Instant::now() < d)
    }

    /// Where a pair whose home is server `home` plays now.
    fn url(&self, home: usize) -> &str {
        match self.cluster && self.killed.load(Ordering::Acquire) {
            true => &self.urls[1],
            false => &self.urls[home],
        }
    }

    /// The server that is up after the kill.
    fn survivor(&self) -> (&str, SocketAddr) {
        (&self.urls[1], self.addrs[1])
    }

    /// Which of the two servers `url` is (0: the one the fault hits).
    fn instance_of(&self, url: &str) -> usize {
        usize::from(self.urls[0] != url)
    }

    /// In the SIGSTOP form, keeps reading a seat's old connection until it
    /// closes or 10 s after the stopped instance woke, and judges what it
    /// hears (else drops it).
    fn hear_out(self: &Arc<Self>, kept: Kept, seen: &Arc<Seen>) {
        if self.silence.is_none() {
            return;
        }
        let reading = tokio::spawn(hear_out(self.clone(), kept, seen.clone()));
        if let Ok(mut hearing) = self.hearing.lock() {
            hearing.push(reading);
        }
    }

    fn woke_at(&self) -> Option<Instant> {
        self.woke_at.lock().ok().and_then(|w| *w)
    }
}

/// Runs the phase.
pub async fn run(cfg: &CrashConfig) -> Arc<CrashReport> {
    let report = Arc::new(CrashReport::default());
    if let Err(e) = phase(cfg, &report).await {
        report.fail(e);
    }
    report
}

async fn phase(cfg: &CrashConfig, report: &Arc<CrashReport>) -> Fallible<()> {
    let dir = TempDir::new("crash");
    report.cluster.store(cfg.cluster, Ordering::Relaxed);
    let redis = cfg.cluster.then(crate::redis::Redis::start);
    let db = match cfg.cluster {
        true => crate::postgres::shared().database(match cfg.stop {
            Some(_) => "chaos_pause",
            None => "chaos_cluster",
        }),
        false => dir.database("ttt.db").to_string(),
    };
    let spill = dir.path.display().to_string();
    let args = |bind: &str, instance: &str| -> Vec<String> {
        let mut args: Vec<String> = [
            "--bind",
            bind,
            "--database",
            &db,
            "--spill-dir",
            &spill,
            "--reconnect-grace-ms",
            "20000",
            "--turn-timeout-ms",
            "0",
            "--max-messages-per-second",
            "0",
        ]
        .map(str::to_owned)
        .to_vec();
        if let Some(redis) = &redis {
            args.extend(["--redis".to_owned(), redis.url(), "--instance".to_owned(), instance.to_owned()]);
            // Every player here comes from 127.0.0.1, standing for many
            // addresses: after a kill they all resume at once, which one
            // address's budget of cross-instance lookups would refuse.
            args.extend(["--lookups-per-second-per-ip".to_owned(), "0".to_owned()]);
        }
        args
    };
    let (mut server, _) = start(&cfg.server_bin, &args("127.0.0.1:0", "a")).await?;
    let other = match cfg.cluster {
        true => Some(start(&cfg.server_bin, &args("127.0.0.1:0", "b")).await?.0),
        false => None,
    };
    let addr = server.addr;
    let addrs = [addr, other.as_ref().map_or(addr, |o| o.addr)];
    let ctx = Arc::new(Ctx {
        urls: addrs.map(|a| format!("ws://{a}/")),
        addrs,
        cluster: cfg.cluster,
        report: report.clone(),
        killed: AtomicBool::new(false),
        killed_at: Mutex::new(None),
        restarted: AtomicBool::new(false),
        deadline: Mutex::new(None),
        ended: Mutex::new(Vec::new()),
        doing: Mutex::new(std::collections::HashMap::new()),
        // Half the lease: well before the pause ends, never on a busy machine's hiccup.
        silence: cfg.stop.map(|_| Duration::from_secs(3)),
        woke_at: Mutex::new(None),
        witness: Witness::default(),
        hearing: Mutex::new(Vec::new()),
        heard: Mutex::new(Vec::new()),
    });
    let quit_at = crate::arena::now_ms() + (cfg.before + cfg.after).as_millis() as i64 + 8_000;
    let mut arena = match cfg.cluster && cfg.stop.is_none() {
        true => arena::Arena::start(&ctx.urls, quit_at).await.map_err(|e| report.fail(e)).ok(),
        false => None,
    };
    let mut pairs = tokio::task::JoinSet::new();
    for i in 0..cfg.pairs {
        let ctx = ctx.clone();
        pairs.spawn(async move {
            // In the SIGSTOP form the first few pairs whose rooms are on the
            // instance stopped play as accounts, rated game after game.
            let accounts = match ctx.silence.is_some() && i % 2 == 0 && i < 8 {
                true => match register(&ctx, i).await {
                    Ok(accounts) => Some(accounts),
                    Err(e) => return ctx.report.fail(format!("pair {i}: {e}")),
                },
                false => None,
            };
            while ctx.live() {
                // In a cluster half the pairs have a player on each instance.
                let cross = ctx.cluster && (i / 2) % 2 == 1;
                let played = game(&ctx, i, 3 + i % 3, i % 2, cross, accounts.as_ref()).await;
                if let Ok(mut d) = ctx.doing.lock() {
                    d.remove(&i);
                }
                if let Err(e) = played {
                    ctx.report.fail(format!("pair {i}: {e}"));
                    return;
                }
            }
        });
    }
    sleep(cfg.before).await;
    if let Some(a) = arena.as_mut() {
        a.before_kill(addr).await.unwrap_or_else(|e| report.fail(e));
    }
    let killed_ms = crate::arena::now_ms();
    ctx.killed.store(true, Ordering::Release);
    if let Ok(mut at) = ctx.killed_at.lock() {
        *at = Some(Instant::now());
    }
    match cfg.stop {
        Some(_) => {
            signal(&server.child, "STOP").await?;
            server.mark("SIGSTOP sent");
            if let Some(other) = &other {
                other.mark("the other instance was sent SIGSTOP");
            }
        }
        None => {
            server.child.start_kill().map_err(|e| format!("SIGKILL: {e}"))?;
            let _ = server.child.wait().await;
        }
    }
    let started = std::time::Instant::now();
    let restarted = match other {
        Some(other) => {
            // Nothing to start: the other instance adopts the games.
            ctx.restarted.store(true, Ordering::Release);
            let deadline = Instant::now() + Duration::from_secs(15);
            let adopted = loop {
                let seen = other.adopted.lock().ok().and_then(|a| *a);
                match seen {
                    Some(seen) => break Some(seen),
                    None if Instant::now() > deadline => break None,
                    None => sleep(Duration::from_millis(20)).await,
                }
            };
            match adopted {
                Some((at, games)) => {
                    let killed = ctx.killed_at.lock().ok().and_then(|k| *k).unwrap_or(at);
                    report.restart_ms.store(at.duration_since(killed).as_millis() as u64, Ordering::Relaxed);
                    report.restored.store(games, Ordering::Relaxed);
                }
                None => report.fail("the other instance adopted nothing within 15 s of the kill".into()),
            }
            other
        }
        None => {
            let (restarted, restored) = start(&cfg.server_bin, &args(&addr.to_string(), "a")).await?;
            report.restart_ms.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
            report.restored.store(restored, Ordering::Relaxed);
            ctx.restarted.store(true, Ordering::Release);
            restarted
        }
    };
    if let Ok(mut d) = ctx.deadline.lock() {
        *d = Some(Instant::now() + cfg.after);
    }
    if let Some(pause) = cfg.stop {
        // Woken once the pause is over (its games adopted by then), and left running.
        let stopped = ctx.killed_at.lock().ok().and_then(|k| *k).unwrap_or_else(Instant::now);
        tokio::time::sleep_until(stopped + pause).await;
        server.mark("SIGCONT sent");
        restarted.mark("the other instance was sent SIGCONT");
        signal(&server.child, "CONT").await?;
        let woke = Instant::now();
        report.paused_ms.store(woke.duration_since(stopped).as_millis() as u64, Ordering::Relaxed);
        if let Ok(mut at) = ctx.woke_at.lock() {
            *at = Some(woke);
        }
    }
    let all = async { while pairs.join_next().await.is_some() {} };
    if timeout(cfg.after + Duration::from_secs(60), all).await.is_err() {
        let doing = ctx.doing.lock().map(|d| format!("{d:?}")).unwrap_or_default();
        report.fail(format!("pairs still playing a minute after the phase's end: {doing}"));
    }
    // What the woken instance says on the old connections, before anything is judged.
    let hearing = ctx.hearing.lock().map(|mut h| std::mem::take(&mut *h)).unwrap_or_default();
    for reading in hearing {
        let _ = reading.await;
    }
    let heard = ctx.heard.lock().map(|mut h| std::mem::take(&mut *h)).unwrap_or_default();
    let failed = match cfg.stop {
        Some(_) => {
            let woke = ctx.woke_at().unwrap_or_else(Instant::now);
            judge_heard(report, &heard, &holders(&db, &heard)?, woke)
        }
        None => Vec::new(),
    };
    for room in failed {
        report.fail(format!(
            "room {room} in the stopped instance's log: {:?}; in the other's: {:?}",
            server.about(&room),
            restarted.about(&room)
        ));
    }
    let ended = ctx.ended.lock().map(|e| e.clone()).unwrap_or_default();
    let (url, addr) = ctx.survivor();
    if let Some(a) = arena {
        match a.judge(addr, killed_ms).await {
            Ok(line) => *report.arena.lock().unwrap_or_else(|p| p.into_inner()) = line,
            Err(e) => report.fail(e),
        }
    }
    // All at once: in a cluster an unknown token is answered only once a
    // dead instance's games would have been adopted (seconds).
    let checks = ended.iter().map(|(over, tokens)| stays_ended(url, addr, over, tokens));
    for checked in futures::future::join_all(checks).await {
        match checked {
            Ok(()) => report.stayed_ended.fetch_add(1, Ordering::Relaxed),
            Err(e) => {
                report.fail(e);
                0
            }
        };
    }
    if cfg.stop.is_some() {
        let stopped = ctx.killed_at.lock().ok().and_then(|k| *k).unwrap_or_else(Instant::now);
        let woke = ctx.woke_at().unwrap_or_else(Instant::now);
        let judged = ctx.witness.judge(addr, stopped, woke).await;
        for failure in &judged.failures {
            report.fail(failure.clone());
        }
        if let Ok(mut witnessed) = report.witnessed.lock() {
            *witnessed = Some(judged);
        }
    }
    if cfg.stop.is_some() && !report.failures().is_empty() {
        // Both instances' logs, for whoever reads the failures.
        let dir = std::env::temp_dir().join(format!("ttt-chaos-pause-{}", std::process::id()));
        let saved = std::fs::create_dir_all(&dir)
            .and_then(|()| server.save_log(&dir.join("a.log")))
            .and_then(|()| restarted.save_log(&dir.join("b.log")));
        match saved {
            Ok(()) => report.fail(format!("the instances' logs are in {}/a.log and b.log", dir.display())),
            Err(e) => {
                report.fail(format!("the instances' logs could not be saved in {}: {e}", dir.display()))
            }
        }
    }
    // Both, in the SIGSTOP form: the woken instance ran to the end.
    for mut server in [restarted, server] {
        let _ = server.child.start_kill();
        let _ = server.child.wait().await;
    }
    drop(redis);
    Ok(())
}

/// Registers pair `pair`'s two accounts on its home instance: their names and tokens.
async fn register(ctx: &Ctx, pair: usize) -> Fallible<[(String, String); 2]> {
    let mut accounts = Vec::new();
    for seat in ["x", "y"] {
        let mut ws = connect(ctx.url(pair % 2)).await?;
        let name = format!("stop{seat}{pair}");
        send(&mut ws, json!({"type": "register", "name": name, "bot": false})).await?;
        let token = expect(&mut ws, "registered").await?["token"].as_str().ok_or("no token")?.to_owned();
        ctx.witness.account(&name);
        accounts.push((name, token));
        let _ = ws.close(None).await;
    }
    accounts.try_into().map_err(|_| "two accounts".to_owned())
}

async fn connect(url: &str) -> Fallible<Ws> {
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.map_err(|e| format!("connect: {e}"))?;
    let welcome = recv(&mut ws).await?;
    if welcome["type"] != "welcome" {
        return Err(format!("first frame is not welcome: {welcome}"));
    }
    Ok(ws)
}

async fn recv(ws: &mut Ws) -> Fallible<Value> {
    loop {
        match timeout(Duration::from_secs(15), ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => return serde_json::from_str(&t).map_err(|e| e.to_string()),
            Ok(Some(Ok(Message::Close(_)))) | Ok(None) => return Err("closed".into()),
            Ok(Some(Ok(_))) => continue,
            Ok(Some(Err(e))) => return Err(format!("read: {e}")),
            Err(_) => return Err("no frame within 15 s".into()),
        }
    }
}

async fn expect(ws: &mut Ws, kind: &str) -> Fallible<Value> {
    loop {
        let v = recv(ws).await?;
        if v["type"] == kind {
            return Ok(v);
        }
        if v["type"] == "error" {
            return Err(format!("waiting for {kind}, got {v}"));
        }
    }
}

async fn send(ws: &mut Ws, v: Value) -> Fallible<()> {
    ws.send(Message::text(v.to_string())).await.map_err(|e| format!("send: {e}"))
}

/// A game whose `game_over` was seen before the kill, asked of the server
/// after it: recorded once with the result seen, and its tokens refused (it
/// was not restored as live).
async fn stays_ended(url: &str, addr: SocketAddr, over: &Value, tokens: &[Value; 2]) -> Fallible<()> {
    let id = over["game_id"].as_str().ok_or("no game_id")?;
    let (status, record) = api(addr, &format!("/api/games/{id}")).await;
    if status != 200 || record["moves"] != over["moves"] || record["winner"] != over["winner"] {
        return Err(format!(
            "game {id} ended before the kill but its record is not what was seen: {status} {record}"
        ));
    }
    for token in tokens {
        let mut ws = connect(url).await?;
        send(&mut ws, json!({"type": "resume", "token": token})).await?;
        let answer = loop {
            let v = recv(&mut ws).await?;
            if v["type"] == "state" || v["type"] == "error" {
                break v;
            }
        };
        if answer["code"] != "invalid_token" {
            return Err(format!("game {id} ended before the kill came back after it: resume gave {answer}"));
        }
    }
    Ok(())
}

/// How a seat comes back after the kill.
enum Back {
    /// Resumed: the restored moves.
    Resumed(Box<Ws>, Vec<[usize; 2]>),
    /// The token is no longer valid: the game ended with the restart.
    Over,
}

/// Reconnects (the server is down for a moment) and resumes with `token`.
/// In a cluster the game is not there until it is adopted: an unknown
/// token is tried again for up to `adopting`.
async fn come_back(url: &str, token: &Value, adopting: Duration) -> Fallible<Back> {
    let adopted_by = Instant::now() + adopting;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut wait = Duration::from_millis(50);
    loop {
        if let Ok(mut ws) = connect(url).await {
            send(&mut ws, json!({"type": "resume", "token": token})).await?;
            loop {
                // Closed with 1012 while its room's instance died: again.
                let Ok(v) = recv(&mut ws).await else { break };
                match v["type"].as_str() {
                    Some("state") => {
                        let moves = serde_json::from_value(v["moves"].clone()).map_err(|e| e.to_string())?;
                        return Ok(Back::Resumed(Box::new(ws), moves));
                    }
                    Some("error") if v["code"] == "invalid_token" && Instant::now() > adopted_by => {
                        return Ok(Back::Over);
                    }
                    Some("error") if v["code"] == "invalid_token" => break,
                    // Its game ended as it was restored (its last move ended
                    // it): the room closed as the resume reached it.
                    Some("error") if v["code"] == "room_not_found" => return Ok(Back::Over),
                    Some("error") => return Err(format!("resume refused: {v}")),
                    _ => continue,
                }
            }
        }
        if Instant::now() > deadline {
            return Err("could not reconnect within 20 s of the kill".into());
        }
        let jitter = 0.5 + rand::rng().random::<f64>() / 2.0;
        sleep(wait.mul_f64(jitter)).await;
        wait = (wait * 2).min(Duration::from_millis(500));
    }
}

/// One game in a private room between two clients who come back after the
/// kill; its moves are random, paced so that games are in progress at it.
async fn game(
    ctx: &Arc<Ctx>,
    pair: usize,
    size: usize,
    home: usize,
    cross: bool,
    accounts: Option<&[(String, String); 2]>,
) -> Fallible<()> {
    let doing = |what: String| {
        if let Ok(mut d) = ctx.doing.lock() {
            d.insert(pair, what);
        }
    };
    doing(format!("setting up (home {home}, cross {cross})"));
    // No new game while the server is down: wait for it to be back.
    while ctx.killed.load(Ordering::Acquire) && !ctx.restarted.load(Ordering::Acquire) {
        sleep(Duration::from_millis(10)).await;
    }
    let born_after_kill = ctx.killed.load(Ordering::Acquire);
    let setup = async {
        let (url, away) = (ctx.url(home), ctx.url(if cross { 1 - home } else { home }));
        let (mut a, mut b) = (connect(url).await?, connect(away).await?);
        doing(format!("connected to {url} and {away}"));
        for (ws, (name, token)) in [&mut a, &mut b].into_iter().zip(accounts.into_iter().flatten()) {
            send(ws, json!({"type": "hello", "name": name, "token": token})).await?;
            expect(ws, "authenticated").await?;
        }
        let on = [ctx.instance_of(url), ctx.instance_of(away)];
        send(&mut a, json!({"type": "create_room", "size": size})).await?;
        let room = expect(&mut a, "room_created").await?["room"].as_str().unwrap_or_default().to_owned();
        doing(format!("joining {room} on {away}"));
        send(&mut b, json!({"type": "join_room", "room": room})).await?;
        let sa = expect(&mut a, "game_started").await?;
        let sb = expect(&mut b, "game_started").await?;
        // The room is on the creator's instance; `on` follows the seats.
        Ok::<_, String>(if sa["you"] == 1 {
            ([a, b], [sa["resume_token"].clone(), sb["resume_token"].clone()], on, (on[0], room))
        } else {
            ([b, a], [sb["resume_token"].clone(), sa["resume_token"].clone()], [on[1], on[0]], (on[0], room))
        })
    };
    let setup = async {
        let pair = setup.await?;
        Ok::<_, String>((pair, Instant::now()))
    };
    // A room whose joiner's instance died on the way waits for a joiner
    // that never comes (pings keep its connection open): give up on it.
    let setup = async {
        match timeout(Duration::from_secs(20), setup).await {
            Ok(done) => done,
            Err(_) => Err("no game_started within 20 s".to_owned()),
        }
    };
    let ((mut seats, tokens, mut on, (room_on, room)), started_at) = match setup.await {
        Ok(pair) => pair,
        // A room still waiting for its second player is not kept: start another.
        Err(_) if !born_after_kill && ctx.killed.load(Ordering::Acquire) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut script = random_game(size, &mut rand::rng());
    let mut next = 0;
    let mut interrupted = false;
    // When each move was seen accepted.
    let mut seen_at = Vec::new();
    let sightings = ctx.witness.game();
    let over = loop {
        // Frames from the room the game began in, on the instance the fault hits.
        let hit = room_on == 0 && !interrupted;
        // The mover's move is sent and not yet answered.
        let unanswered = AtomicBool::new(false);
        let step = async {
            if next == script.len() {
                let gx = expect(&mut seats[0], "game_over").await?;
                let go = expect(&mut seats[1], "game_over").await?;
                return Ok::<_, String>(Some((gx, go)));
            }
            let [r, c] = script[next];
            let (mover, other) = if next % 2 == 0 { (0, 1) } else { (1, 0) };
            doing(format!(
                "move {next} by seat {mover} (home {home}, cross {cross}, interrupted {interrupted})"
            ));
            let pause = Duration::from_millis(rand::rng().random_range(10..40));
            sleep(pause).await;
            send(&mut seats[mover], json!({"type": "move", "row": r, "col": c})).await?;
            unanswered.store(true, Ordering::Relaxed);
            let own = expect(&mut seats[mover], "moved").await?;
            unanswered.store(false, Ordering::Relaxed);
            let seen = expect(&mut seats[other], "moved").await?;
            sightings.saw(&own, hit);
            sightings.saw(&seen, hit);
            if own != seen || own["seq"] != next + 1 {
                return Err(format!("players saw different moves: {own} / {seen}"));
            }
            Ok(None)
        };
        // A paused instance is heard only as silence.
        let step = async {
            match ctx.silence {
                Some(silence) => {
                    timeout(silence, step).await.unwrap_or_else(|_| Err(format!("silent for {silence:?}")))
                }
                None => step.await,
            }
        };
        match step.await {
            Ok(Some(over)) => break over,
            Ok(None) => {
                seen_at.truncate(next);
                seen_at.push(Instant::now());
                next += 1;
            }
            Err(e) if !ctx.killed.load(Ordering::Acquire) || interrupted || born_after_kill => return Err(e),
            Err(_) => {
                // The kill: both come back and the game goes on from what the server kept.
                interrupted = true;
                let seen = next;
                let mut restored = Vec::new();
                for (i, token) in tokens.iter().enumerate() {
                    doing(format!("seat {i} coming back after move {seen} (home {home}, cross {cross})"));
                    // In a cluster the game is adopted within 10 s of the kill.
                    let adopting = match ctx.cluster {
                        true => Duration::from_secs(12),
                        false => Duration::ZERO,
                    };
                    match come_back(ctx.url(home), token, adopting).await? {
                        Back::Resumed(ws, moves) => {
                            let ws = std::mem::replace(&mut seats[i], *ws);
                            let queued = i == seen % 2 && unanswered.load(Ordering::Relaxed);
                            let (instance, room) = (on[i], room.clone());
                            ctx.hear_out(Kept { ws, instance, room_on, queued, room }, &sightings);
                            on[i] = ctx.instance_of(ctx.url(home));
                            restored.push(moves);
                        }
                        Back::Over => {
                            for (i, (ws, instance)) in seats.into_iter().zip(on).enumerate() {
                                let (queued, room) =
                                    (i == seen % 2 && unanswered.load(Ordering::Relaxed), room.clone());
                                ctx.hear_out(Kept { ws, instance, room_on, queued, room }, &sightings);
                            }
                            if seen + 1 >= script.len() {
                                ctx.report.ended_by_restart.fetch_add(1, Ordering::Relaxed);
                                return Ok(());
                            }
                            let killed_at =
                                ctx.killed_at.lock().ok().and_then(|at| *at).unwrap_or(started_at);
                            let age = killed_at.saturating_duration_since(started_at);
                            if age <= Duration::from_millis(100) {
                                ctx.report.lost_young.fetch_add(1, Ordering::Relaxed);
                                return Ok(());
                            }
                            return Err(format!(
                                "the seat was not restored after {seen} moves (the game started {age:?} before the kill)"
                            ));
                        }
                    }
                }
                let moves = &restored[0];
                if restored[1] != *moves || moves.len() > script.len() || moves[..] != script[..moves.len()] {
                    return Err(format!(
                        "restored moves {restored:?} are not a prefix of the game {script:?}"
                    ));
                }
                ctx.report.moves_lost.fetch_add(seen.saturating_sub(moves.len()) as u64, Ordering::Relaxed);
                let killed_at = ctx.killed_at.lock().ok().and_then(|at| *at);
                if let (Some(first_lost), Some(killed_at)) = (seen_at.get(moves.len()), killed_at) {
                    let age = killed_at.saturating_duration_since(*first_lost).as_millis() as u64;
                    ctx.report.lost_oldest_ms.fetch_max(age, Ordering::Relaxed);
                }
                next = moves.len();
                if ctx.silence.is_some() && next < script.len() {
                    // On the adopter the game goes on otherwise than the move
                    // sent into the paused instance: a stale copy that took
                    // that move would contradict the record at its seq.
                    let rest = random_rest(size, &script[..next], Some(script[next]), &mut rand::rng());
                    script.truncate(next);
                    script.extend(rest);
                }
            }
        }
    };
    let (gx, go) = over;
    let hit = room_on == 0 && !interrupted;
    sightings.saw(&gx, hit);
    sightings.saw(&go, hit);
    if gx != go {
        return Err(format!("players saw different results: {gx} / {go}"));
    }
    let list: Vec<[usize; 2]> = serde_json::from_value(gx["moves"].clone()).map_err(|e| e.to_string())?;
    let verdict = tictactoe_protocol::judge(size, size, &list).map_err(|e| format!("{e}: {gx}"))?;
    if list != script || u64::from(verdict.winner_number()) != gx["winner"].as_u64().unwrap_or(9) {
        return Err(format!("game_over does not judge to its winner: {gx}"));
    }
    if cross && !born_after_kill {
        ctx.report.cross.fetch_add(1, Ordering::Relaxed);
    }
    if interrupted {
        // The record of a game that outlived the kill is kept like any other.
        let id = gx["game_id"].as_str().ok_or("no game_id")?;
        let mut record = api(ctx.survivor().1, &format!("/api/games/{id}")).await;
        // A game nobody adopted (too young to be saved) goes on on the
        // woken instance, whose store is failing for a moment as it wakes (the
        // adopter ended its sessions): its `game_over` is not held back, and
        // the record is written within seconds (OPERATIONS.md).
        if record.0 == 404 && ctx.silence.is_some() {
            let deadline = Instant::now() + Duration::from_secs(5);
            while record.0 == 404 && Instant::now() < deadline {
                sleep(Duration::from_millis(100)).await;
                record = api(ctx.survivor().1, &format!("/api/games/{id}")).await;
            }
            if record.0 == 200 {
                ctx.report.late_records.fetch_add(1, Ordering::Relaxed);
            }
        }
        let (status, record) = record;
        if status != 200 || record["moves"] != gx["moves"] || record["winner"] != gx["winner"] {
            return Err(format!("the record of {id} is not the game played: {status} {record}"));
        }
        ctx.report.resumed.fetch_add(1, Ordering::Relaxed);
    } else if born_after_kill {
        ctx.report.after.fetch_add(1, Ordering::Relaxed);
    } else {
        ctx.report.before.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut ended) = ctx.ended.lock() {
            ended.push((gx.clone(), tokens.clone()));
        }
    }
    for ws in &mut seats {
        let _ = ws.close(None).await;
    }
    Ok(())
}
