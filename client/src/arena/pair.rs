//! One game pair: the arena, as host, opens an organised room for the two
//! players (PLAYER1 as X in the first game, O in the rematch) from the
//! pair's opening, starts each player's program, watches both games and
//! reports them. A player whose program dies mid-game loses that game and
//! is started again for the next; one that dies before its first game
//! stops the match.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tictactoe_protocol::Fischer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio_tungstenite::tungstenite::Message;

use super::openings::Opening;
use super::players::Player;
use super::results::{GameResult, result_text};

/// How long a player's program has to leave after its room closed.
const LEAVE: Duration = Duration::from_secs(3);

/// How long the server has to open the room, and the players to join it
/// (for its first game, or the rematch) before the match stops.
const JOIN: Duration = Duration::from_secs(60);

/// What every pair of a match shares.
pub struct Terms {
    /// The server's WebSocket URL.
    pub server: String,
    pub size: usize,
    pub win: usize,
    pub clock: Option<Fischer>,
    /// PLAYER1 and PLAYER2.
    pub players: [Player; 2],
}

/// Why a pair could not be played; each stops the match.
#[derive(Debug, thiserror::Error)]
pub enum PairError {
    /// The server could not be reached or spoke out of turn.
    #[error("{0}")]
    Server(String),
    /// The server refused the room.
    #[error("the server refused the room: {0}")]
    Refused(String),
    /// A player's program failed to start or left before playing.
    #[error("{spec} failed to start: {why}")]
    PlayerFailed { spec: String, why: String },
}

/// A player's running program, with the last lines it wrote on stderr.
struct Running {
    child: Child,
    said: Arc<Mutex<VecDeque<String>>>,
}

impl Running {
    fn start(player: &Player, terms: &Terms, room: &str) -> Result<Running, PairError> {
        let mut child = player
            .start(&terms.server, room)
            .map_err(|e| PairError::PlayerFailed { spec: player.spec.clone(), why: e.to_string() })?;
        let said = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = child.stderr.take() {
            let kept = said.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
                    if kept.len() == 3 {
                        kept.pop_front();
                    }
                    kept.push_back(line);
                }
            });
        }
        Ok(Running { child, said })
    }

    /// Its last words on stderr, or its exit status.
    fn why(&self, status: std::process::ExitStatus) -> String {
        let said = self.said.lock().unwrap_or_else(|p| p.into_inner());
        said.back().cloned().unwrap_or_else(|| format!("it exited ({status})"))
    }
}

/// Completes at `until`, or never.
async fn sleep_until(until: Option<tokio::time::Instant>) {
    match until {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Waits for either seat's program to exit: which, and how.
async fn exited(seats: &mut [Option<Running>; 2]) -> (usize, std::process::ExitStatus) {
    let [a, b] = seats;
    tokio::select! {
        status = one_exited(a) => (0, status),
        status = one_exited(b) => (1, status),
    }
}

/// Waits for a running program to exit (never, for a seat with none).
async fn one_exited(running: &mut Option<Running>) -> std::process::ExitStatus {
    match running {
        Some(r) => match r.child.wait().await {
            Ok(status) => status,
            Err(_) => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// Plays the pair from `opening`: its games, in order (both, unless the
/// room closed early).
pub async fn play(terms: &Terms, opening: &Opening) -> Result<Vec<GameResult>, PairError> {
    let (mut ws, _) =
        crate::net::open_ws(&terms.server).await.map_err(|e| PairError::Server(e.to_string()))?;
    let names = [terms.players[0].name.as_str(), terms.players[1].name.as_str()];
    let mut create = json!({"type": "create_room", "size": terms.size, "win": terms.win, "host": true,
        "players": names, "opening": opening, "games": 2});
    if let Some(clock) = terms.clock {
        create["clock"] = json!({"initial_ms": clock.initial_ms, "increment_ms": clock.increment_ms});
    }
    for request in [json!({"type": "hello", "name": "arena", "protocol": 1}), create] {
        ws.send(Message::text(request.to_string())).await.map_err(|e| PairError::Server(e.to_string()))?;
    }
    let mut seats: [Option<Running>; 2] = [None, None];
    // The programs that died during the game being played, and why.
    let mut crashed: [Option<String>; 2] = [None, None];
    let mut games = Vec::new();
    let mut in_game = false;
    let mut room = String::new();
    // Until when a game must start: the players are joining.
    let mut joining = Some(tokio::time::Instant::now() + JOIN);
    loop {
        tokio::select! {
            _ = sleep_until(joining) => {
                let what = if room.is_empty() { "open the room".to_owned() } else { format!("start a game in room {room}") };
                return Err(PairError::Server(format!("the server did not {what} within {} s", JOIN.as_secs())));
            }
            frame = ws.next() => {
                let msg: Value = match frame {
                    Some(Ok(Message::Text(text))) => serde_json::from_str(&text).unwrap_or(Value::Null),
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return Err(PairError::Server(format!("the connection failed: {e}"))),
                    None => return Err(PairError::Server("the server closed the connection".into())),
                };
                match msg["type"].as_str().unwrap_or("") {
                    "room_created" => {
                        room = msg["room"].as_str().unwrap_or_default().to_owned();
                        joining = Some(tokio::time::Instant::now() + JOIN);
                        for (seat, player) in seats.iter_mut().zip(&terms.players) {
                            *seat = Some(Running::start(player, terms, &room)?);
                        }
                    }
                    "error" if room.is_empty() => {
                        return Err(PairError::Refused(msg["message"].as_str().unwrap_or("").to_owned()));
                    }
                    // A game starts: the host is sent its `state`.
                    "state" | "game_started" if !in_game && msg["turn"].is_number() => {
                        in_game = true;
                        joining = None;
                    }
                    "game_over" => {
                        in_game = false;
                        joining = Some(tokio::time::Instant::now() + JOIN);
                        let first = games.len() % 2 == 0;
                        games.push(judged(&msg, terms, opening, first, &crashed));
                        // Programs gone during the game are started again for the next.
                        crashed = [None, None];
                        for (seat, player) in seats.iter_mut().zip(&terms.players) {
                            if seat.is_none() && games.len() < 2 {
                                *seat = Some(Running::start(player, terms, &room)?);
                            }
                        }
                    }
                    "room_closed" => break,
                    _ => {}
                }
            }
            (seat, status) = exited(&mut seats) => {
                on_exit(seat, status, &mut seats, &mut crashed, &games, in_game, terms, &room)?;
            }
        }
    }
    for mut running in seats.into_iter().flatten() {
        let _ = tokio::time::timeout(LEAVE, running.child.wait()).await;
    }
    Ok(games)
}

/// A player's program exited while the room is open: before any game, the
/// match stops; failing during a game, it loses it (once the game ends)
/// and is started again; between the games, it is started again at once.
/// One that ended well during a game saw the room close (the host may not
/// have read the last `game_over` yet): it lost nothing.
#[allow(clippy::too_many_arguments)]
fn on_exit(
    seat: usize,
    status: std::process::ExitStatus,
    seats: &mut [Option<Running>; 2],
    crashed: &mut [Option<String>; 2],
    games: &[GameResult],
    in_game: bool,
    terms: &Terms,
    room: &str,
) -> Result<(), PairError> {
    let Some(running) = seats[seat].take() else { return Ok(()) };
    let why = running.why(status);
    let player = &terms.players[seat];
    if games.is_empty() && !in_game {
        return Err(PairError::PlayerFailed { spec: player.spec.clone(), why });
    }
    if in_game {
        if !status.success() {
            crashed[seat] = Some(why);
        }
    } else if games.len() < 2 {
        seats[seat] = Some(Running::start(player, terms, room)?);
    }
    Ok(())
}

/// The game in `game_over` as the results keep it. A player whose
/// program died during it lost it, whatever the server made of its leaving.
fn judged(
    msg: &Value,
    terms: &Terms,
    opening: &Opening,
    first: bool,
    crashed: &[Option<String>; 2],
) -> GameResult {
    // PLAYER1 is X in the first game of the pair, O in the rematch.
    let (x, o) = if first { (0, 1) } else { (1, 0) };
    let mut winner = msg["winner"].as_u64().filter(|w| *w == 1 || *w == 2).map(|w| w as u8);
    let mut reason = msg["reason"].as_str().unwrap_or("unknown").to_owned();
    for (seat, loser_is) in [(x, 1u8), (o, 2u8)] {
        if let Some(why) = &crashed[seat] {
            winner = Some(3 - loser_is);
            reason = format!("{} crashed: {why}", terms.players[seat].name);
        }
    }
    GameResult {
        game_id: msg["game_id"].as_str().map(str::to_owned),
        opening: opening.clone(),
        x: terms.players[x].spec.clone(),
        o: terms.players[o].spec.clone(),
        result: result_text(winner),
        reason,
    }
}
