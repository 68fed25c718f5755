//! An arena bot's play over a real WebSocket, as an independent client would be:
//! its own account, `tournament_join`, every pairing played to its end with
//! one of `tictactoe_bots`' strategies, and a log of what it saw and when
//! (Unix ms, to compare with the tournament's `ends_at`). Its plan adds the
//! habits the tests need: berserk in every game, a pause (`tournament_leave`
//! and back), slow thinking near the end so that a game outlives the
//! tournament's time, and reconnecting (`resume`, then join again) when the
//! server goes away.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tictactoe_bots::Strategy;
use tictactoe_protocol::Game;
use tokio::net::TcpStream;
use tokio::time::{Instant, sleep, timeout, timeout_at};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::{Event, Log, Plan, now_ms};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a bot may go without any frame from the server before the test fails.
const SILENCE: Duration = Duration::from_secs(30);

/// The game a bot sits in.
struct Seat {
    me: u8,
    game: Game,
    resume_token: String,
    /// Whether its clock runs (each side has moved).
    running: bool,
    /// Its own time left as last told.
    clock_ms: i64,
    /// The move it will send, and when.
    due: Option<(Instant, usize, usize)>,
}

struct Bot {
    plan: Plan,
    tournament: String,
    ends_at: i64,
    strategy: Option<Box<dyn Strategy>>,
    rng: StdRng,
    token: String,
    seat: Option<Seat>,
    /// In a room: from `game_started` to `room_closed`.
    in_room: bool,
    /// Paused until this Unix ms.
    paused_until: Option<i64>,
    pause_done: bool,
    /// Join again once the `resume` after a reconnect is answered.
    join_after_resume: bool,
    log: Log,
}

/// Plays in tournament `tournament` (whose time is up at `ends_at`) as
/// `plan` says, until its time is up and its last game is over. It
/// connects to the first of `urls`, and when its connection drops, to the
/// next that answers (the same again, alone).
pub async fn play(urls: Vec<String>, plan: Plan, tournament: String, ends_at: i64) -> Log {
    let strategy = tictactoe_bots::by_name(plan.strategy).expect("a strategy's name");
    let log = Log { name: plan.name.clone(), events: Vec::new() };
    let mut bot = Bot {
        plan,
        tournament,
        ends_at,
        strategy: Some(strategy),
        rng: StdRng::from_rng(&mut rand::rng()),
        token: String::new(),
        seat: None,
        in_room: false,
        paused_until: None,
        pause_done: false,
        join_after_resume: false,
        log,
    };
    let mut ws = bot.enter(&urls[0]).await.expect("the server answers the first connection");
    let mut heard = Instant::now();
    // A game may start a moment after the end (its pairing was decided
    // before): stay that long.
    let until = bot.plan.quit_at.unwrap_or(bot.ends_at + 1_500);
    while now_ms() <= until || bot.in_room {
        bot.chores(&mut ws).await;
        let due = bot.seat.as_ref().and_then(|s| s.due).map(|(at, ..)| at);
        let wake = due.map_or(Instant::now() + Duration::from_millis(200), |d| {
            d.min(Instant::now() + Duration::from_millis(200))
        });
        match timeout_at(wake, next(&mut ws)).await {
            Err(_) => assert!(
                heard.elapsed() < SILENCE,
                "{}: the server said nothing for {SILENCE:?}",
                bot.log.name
            ),
            Ok(Some(msg)) => {
                heard = Instant::now();
                bot.on(&mut ws, msg).await;
            }
            Ok(None) => {
                bot.note(Event::Dropped);
                ws = bot.reconnect(&urls).await;
                heard = Instant::now();
            }
        }
    }
    let _ = ws.close(None).await;
    bot.log
}

/// The next text frame as JSON; `None` once the connection is gone.
async fn next(ws: &mut Ws) -> Option<Value> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(text)) => return serde_json::from_str(&text).ok(),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

async fn send(ws: &mut Ws, value: Value) {
    // A connection that went away shows on the next read.
    let _ = ws.send(Message::text(value.to_string())).await;
}

/// Reads until a frame of type `kind`, within 10 s.
async fn reply(ws: &mut Ws, kind: &str) -> Option<Value> {
    timeout(Duration::from_secs(10), async {
        loop {
            let msg = next(ws).await?;
            if msg["type"] == kind {
                return Some(msg);
            }
        }
    })
    .await
    .ok()
    .flatten()
}

impl Bot {
    fn note(&mut self, event: Event) {
        self.log.events.push((now_ms(), event));
    }

    /// Connects, signs in (registering the account the first time), takes
    /// back its seat if it had one, and joins: `None` when nobody answers.
    async fn enter(&mut self, url: &str) -> Option<Ws> {
        let (mut ws, _) =
            timeout(Duration::from_secs(5), tokio_tungstenite::connect_async(url)).await.ok()?.ok()?;
        reply(&mut ws, "welcome").await?;
        let name = self.plan.name.clone();
        if self.token.is_empty() {
            send(&mut ws, json!({"type": "register", "name": name, "bot": true})).await;
            let registered = reply(&mut ws, "registered").await?;
            self.token = registered["token"].as_str().expect("a token").to_owned();
        }
        send(&mut ws, json!({"type": "hello", "name": name, "token": self.token})).await;
        reply(&mut ws, "authenticated").await?;
        match self.seat.as_mut() {
            Some(seat) => {
                // The move it meant to send answers a position the server
                // may not have kept: the `state` says what to answer.
                seat.due = None;
                send(&mut ws, json!({"type": "resume", "token": seat.resume_token})).await;
                self.join_after_resume = true;
            }
            None => {
                self.in_room = false;
                self.join(&mut ws).await;
            }
        }
        Some(ws)
    }

    /// Sends `tournament_join`, unless paused or the time is up.
    async fn join(&mut self, ws: &mut Ws) {
        if self.paused_until.is_none() && now_ms() < self.ends_at {
            send(ws, json!({"type": "tournament_join", "id": self.tournament})).await;
            self.note(Event::Joined { playing: self.in_room });
        }
    }

    /// Connects again, from the first of `urls` on, with a jittered,
    /// doubling backoff, for up to a minute.
    async fn reconnect(&mut self, urls: &[String]) -> Ws {
        let give_up = Instant::now() + Duration::from_secs(60);
        let mut backoff = Duration::from_millis(100);
        for url in urls.iter().cycle() {
            if let Some(ws) = self.enter(url).await {
                return ws;
            }
            assert!(Instant::now() < give_up, "{}: no server to reconnect to for a minute", self.log.name);
            sleep(backoff.mul_f64(self.rng.random_range(0.5..1.0))).await;
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
        unreachable!("a cycle of addresses ends only when one answers")
    }

    /// Sends a move that is due, and pauses or joins again when it is time.
    async fn chores(&mut self, ws: &mut Ws) {
        if let Some(seat) = self.seat.as_mut() {
            if let Some((_, row, col)) = seat.due.filter(|(at, ..)| *at <= Instant::now()) {
                seat.due = None;
                send(ws, json!({"type": "move", "row": row, "col": col})).await;
            }
        }
        let now = now_ms();
        if let Some((at, len)) = self.plan.pause {
            if !self.pause_done && self.paused_until.is_none() && !self.in_room && now >= at {
                send(ws, json!({"type": "tournament_leave", "id": self.tournament})).await;
                self.note(Event::Left);
                self.paused_until = Some(now + len.as_millis() as i64);
            }
        }
        if self.paused_until.is_some_and(|until| now >= until) && !self.in_room {
            self.paused_until = None;
            self.pause_done = true;
            self.join(ws).await;
        }
    }

    async fn on(&mut self, ws: &mut Ws, msg: Value) {
        match msg["type"].as_str().unwrap_or_default() {
            "game_started" => {
                self.note(Event::Started { tournament: msg["tournament"].as_str().map(str::to_owned) });
                self.in_room = true;
                let size = msg["size"].as_u64().unwrap_or(3) as usize;
                let win = msg["win"].as_u64().unwrap_or(3) as usize;
                let me = msg["you"].as_u64().unwrap_or(0) as u8;
                self.seat = Some(Seat {
                    me,
                    game: Game::with_win(size, win).expect("a board the server plays"),
                    resume_token: msg["resume_token"].as_str().unwrap_or_default().to_owned(),
                    running: false,
                    clock_ms: msg["clocks"][usize::from(me.max(1) - 1)].as_i64().unwrap_or(0),
                    due: None,
                });
                if self.plan.berserk {
                    send(ws, json!({"type": "berserk"})).await;
                }
                if msg["turn"] == u64::from(me) {
                    self.choose().await;
                }
            }
            "moved" => {
                let Some(seat) = self.seat.as_mut() else { return };
                let (row, col) = (msg["row"].as_u64().unwrap_or(0), msg["col"].as_u64().unwrap_or(0));
                if let Err(e) = seat.game.play(row as usize, col as usize) {
                    panic!("{}: a `moved` that is not a legal move ({e}): {msg}", self.log.name);
                }
                seat.running = !msg["running"].is_null();
                seat.clock_ms = msg["clocks"][usize::from(seat.me - 1)].as_i64().unwrap_or(seat.clock_ms);
                if msg["next"] == u64::from(seat.me) {
                    self.choose().await;
                }
            }
            "state" => self.resumed(ws, &msg).await,
            "game_over" => {
                let game_id = msg["game_id"].as_str().unwrap_or_default().to_owned();
                let reason = msg["reason"].as_str().unwrap_or_default().to_owned();
                self.note(Event::Over { game_id, reason });
                self.seat = None;
            }
            "room_closed" => {
                self.note(Event::Closed { reason: msg["reason"].as_str().unwrap_or_default().to_owned() });
                self.in_room = false;
                self.seat = None;
            }
            "error" => {
                if msg["code"] == "invalid_token" && self.join_after_resume {
                    // Its game ended while it was away (or was lost with the last moments before a crash).
                    if let Some(game_id) = msg["game_id"].as_str() {
                        let over = Event::Over { game_id: game_id.to_owned(), reason: "while away".into() };
                        self.note(over);
                    }
                    self.seat = None;
                    self.in_room = false;
                    self.join_after_resume = false;
                    self.join(ws).await;
                }
                self.note(Event::Refused(msg));
            }
            _ => {}
        }
    }

    /// The `state` after a `resume`: the game as the server has it.
    async fn resumed(&mut self, ws: &mut Ws, msg: &Value) {
        let Some(seat) = self.seat.as_mut() else { return };
        self.log.events.push((now_ms(), Event::Resumed));
        let size = msg["size"].as_u64().unwrap_or(3) as usize;
        let win = msg["win"].as_u64().unwrap_or(3) as usize;
        let mut game = Game::with_win(size, win).expect("a board the server plays");
        let moves: Vec<[usize; 2]> = serde_json::from_value(msg["moves"].clone()).unwrap_or_default();
        for [r, c] in moves {
            game.play(r, c).expect("the server's moves are legal");
        }
        seat.game = game;
        seat.due = None;
        seat.running = !msg["running"].is_null();
        seat.clock_ms = msg["clocks"][usize::from(seat.me - 1)].as_i64().unwrap_or(seat.clock_ms);
        let mine = msg["turn"] == u64::from(seat.me);
        if self.join_after_resume {
            self.join_after_resume = false;
            self.join(ws).await;
        }
        if mine {
            self.choose().await;
        }
    }

    /// Chooses its move with its strategy and sets when to send it: after
    /// a human-like pause, or held long when thinking slowly.
    async fn choose(&mut self) {
        let Some(seat) = self.seat.as_ref() else { return };
        if seat.game.status().is_over() {
            return;
        }
        let (mut strategy, game) = (self.strategy.take().expect("the strategy"), seat.game.clone());
        let (strategy, choice) = tokio::task::spawn_blocking(move || {
            let choice = strategy.choose(&game, Duration::from_millis(200));
            (strategy, choice)
        })
        .await
        .expect("the strategy's thread");
        self.strategy = Some(strategy);
        let (row, col) = choice.unwrap_or_else(|e| panic!("{}: no move: {e}", self.log.name));
        let now = now_ms();
        let mut hold = self.rng.random_range(self.plan.think_ms.clone());
        if self.plan.slow_from.is_some_and(|from| now >= from) {
            let seat = self.seat.as_ref().expect("the seat");
            // Before each side has moved no clock runs: the first move has 30 s of its own.
            let left = if seat.running { seat.clock_ms - 2_500 } else { 25_000 };
            hold = (self.ends_at + 1_500 - now).clamp(1_000, 10_000).min(left).max(0);
        }
        if let Some(seat) = self.seat.as_mut() {
            seat.due = Some((Instant::now() + Duration::from_millis(hold as u64), row, col));
        }
    }
}
