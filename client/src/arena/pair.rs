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

/// Plays the pair from `opening`: its games in order, PLAYER1 X in the
/// first. When the room closes after one game (the server closes it when a
/// player's program dies between games), the rematch is played in a room
/// of its own; a pair that still lacks a game has fewer than two.
pub async fn play(terms: &Terms, opening: &Opening) -> Result<Vec<GameResult>, PairError> {
    let mut games = Room { terms, opening, order: [0, 1], wanted: 2 }.play().await?;
    if games.len() == 1 {
        games.extend(Room { terms, opening, order: [1, 0], wanted: 1 }.play().await?);
    }
    Ok(games)
}

/// An organised room of the pair.
struct Room<'a> {
    terms: &'a Terms,
    opening: &'a Opening,
    /// The players (0: PLAYER1) as X and O in its first game; swapped in the next.
    order: [usize; 2],
    /// Its games.
    wanted: usize,
}

/// What the host has seen of a room so far.
#[derive(Default)]
struct Seen {
    /// The room's code, once created.
    room: String,
    games: Vec<GameResult>,
    in_game: bool,
    /// The programs, by player, that died during the game being played, and why.
    crashed: [Option<String>; 2],
}

impl Room<'_> {
    /// Opens the room, starts the players' programs, and watches its games.
    async fn play(&self) -> Result<Vec<GameResult>, PairError> {
        let terms = self.terms;
        let (mut ws, _) =
            crate::net::open_ws(&terms.server).await.map_err(|e| PairError::Server(e.to_string()))?;
        let names = self.order.map(|i| terms.players[i].name.as_str());
        let mut create = json!({"type": "create_room", "size": terms.size, "win": terms.win, "host": true,
            "players": names, "opening": self.opening, "games": self.wanted});
        if let Some(clock) = terms.clock {
            create["clock"] = json!({"initial_ms": clock.initial_ms, "increment_ms": clock.increment_ms});
        }
        for request in [json!({"type": "hello", "name": "arena", "protocol": 1}), create] {
            ws.send(Message::text(request.to_string()))
                .await
                .map_err(|e| PairError::Server(e.to_string()))?;
        }
        // The programs playing, by player (0: PLAYER1).
        let mut seats: [Option<Running>; 2] = [None, None];
        let mut seen = Seen::default();
        // Until when a game must start: the players are joining.
        let mut joining = Some(tokio::time::Instant::now() + JOIN);
        loop {
            tokio::select! {
                _ = sleep_until(joining) => {
                    let what = match seen.room.as_str() {
                        "" => "open the room".to_owned(),
                        room => format!("start a game in room {room}"),
                    };
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
                            seen.room = msg["room"].as_str().unwrap_or_default().to_owned();
                            joining = Some(tokio::time::Instant::now() + JOIN);
                            for (seat, player) in seats.iter_mut().zip(&terms.players) {
                                *seat = Some(Running::start(player, terms, &seen.room)?);
                            }
                        }
                        "error" if seen.room.is_empty() => {
                            return Err(PairError::Refused(msg["message"].as_str().unwrap_or("").to_owned()));
                        }
                        // A game starts: the host is sent its `state`.
                        "state" | "game_started" if !seen.in_game && msg["turn"].is_number() => {
                            seen.in_game = true;
                            joining = None;
                        }
                        "game_over" => {
                            seen.in_game = false;
                            joining = Some(tokio::time::Instant::now() + JOIN);
                            let game = self.judged(&msg, seen.games.len(), &seen.crashed);
                            seen.games.push(game);
                            seen.crashed = [None, None];
                            // Programs gone during the game are started again for the next.
                            for (seat, player) in seats.iter_mut().zip(&terms.players) {
                                if seat.is_none() && seen.games.len() < self.wanted {
                                    *seat = Some(Running::start(player, terms, &seen.room)?);
                                }
                            }
                        }
                        "room_closed" => break,
                        _ => {}
                    }
                }
                (seat, status) = exited(&mut seats) => self.on_exit(seat, status, &mut seats, &mut seen)?,
            }
        }
        for mut running in seats.into_iter().flatten() {
            let _ = tokio::time::timeout(LEAVE, running.child.wait()).await;
        }
        Ok(seen.games)
    }

    /// A player's program exited while the room is open: before any game,
    /// the match stops; failing during a game, it loses it (once the game
    /// ends) and is started again; between the games, it is started again
    /// at once. One that ended well during a game saw the room close (the
    /// host may not have read the last `game_over` yet): it lost nothing.
    fn on_exit(
        &self,
        seat: usize,
        status: std::process::ExitStatus,
        seats: &mut [Option<Running>; 2],
        seen: &mut Seen,
    ) -> Result<(), PairError> {
        let Some(running) = seats[seat].take() else { return Ok(()) };
        let why = running.why(status);
        let player = &self.terms.players[seat];
        if seen.games.is_empty() && !seen.in_game {
            return Err(PairError::PlayerFailed { spec: player.spec.clone(), why });
        }
        if seen.in_game {
            if !status.success() {
                seen.crashed[seat] = Some(why);
            }
        } else if seen.games.len() < self.wanted {
            seats[seat] = Some(Running::start(player, self.terms, &seen.room)?);
        }
        Ok(())
    }

    /// Game `index` of the room, as `game_over` says, as the results keep
    /// it. A player whose program died during it lost it, whatever the
    /// server made of its leaving.
    fn judged(&self, msg: &Value, index: usize, crashed: &[Option<String>; 2]) -> GameResult {
        let x = self.order[index % 2];
        let o = 1 - x;
        let mut winner = msg["winner"].as_u64().filter(|w| *w == 1 || *w == 2).map(|w| w as u8);
        let mut reason = msg["reason"].as_str().unwrap_or("unknown").to_owned();
        for (player, loser) in [(x, 1u8), (o, 2u8)] {
            if let Some(why) = &crashed[player] {
                winner = Some(3 - loser);
                reason = format!("{} crashed: {why}", self.terms.players[player].name);
            }
        }
        GameResult {
            game_id: msg["game_id"].as_str().map(str::to_owned),
            opening: self.opening.clone(),
            x: self.terms.players[x].spec.clone(),
            o: self.terms.players[o].spec.clone(),
            result: result_text(winner),
            reason,
        }
    }
}
