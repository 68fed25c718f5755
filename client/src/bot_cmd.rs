//! `ttt bot`: play N games with a strategy and print a summary.

use std::time::Duration;

use tictactoe_protocol::{ClientMessage, ErrorCode, ServerMessage};

use std::pin::Pin;

use crate::bot::{Mover, MoverError};
use crate::error::Error;
use crate::net::{Event, Link, SendError};
use crate::session::{Start, challenge_over, fatal};
use crate::view::View;

/// Wins, draws and losses so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Games won.
    pub wins: u32,
    /// Games drawn (or ended with no winner).
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "wins: {}, draws: {}, losses: {}", self.wins, self.draws, self.losses)
    }
}

/// The board sizes a bot waiting for challenges accepts; empty: any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

impl Sizes {
    /// Whether a challenge to a `size` board is accepted.
    pub fn accepts(&self, size: usize) -> bool {
        self.0.is_empty() || self.0.contains(&size)
    }
}

impl std::fmt::Display for Sizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [] => f.write_str("any board size"),
            sizes => {
                let list: Vec<String> = sizes.iter().map(|n| format!("{n}×{n}")).collect();
                write!(f, "boards {}", list.join(", "))
            }
        }
    }
}

/// How long a rematch request may go unanswered when the server runs no
/// turn timer: then the bot leaves and looks for another game.
const REMATCH_WAIT_UNTIMED: Duration = Duration::from_secs(30);

/// Plays `games` games, rematching in the same room. With quick match, a new
/// opponent is found whenever the room closes or a rematch goes unanswered;
/// in a private room either ends the run. It never waits silently: every
/// wait has a message that ends it or a deadline. Waiting for challenges
/// ([`Start::Await`]), it accepts those on `sizes` and declines the rest,
/// agrees to rematches, and otherwise waits for the next challenge.
pub async fn run(
    mut link: Link,
    start: &Start,
    mover: Mover,
    games: u32,
    think: Duration,
    sizes: &Sizes,
) -> Result<Tally, Error> {
    let waiting = matches!(start, Start::Await);
    let mut idle = Some(mover);
    // The move being chosen, and the number of moves on the board it was asked for.
    let mut thinking: Option<(Thinking, usize)> = None;
    let mut view = View::default();
    let mut tally = Tally::default();
    // The last request sent, to send again if it was rate-limited.
    let mut last: Option<ClientMessage> = None;
    // While a rematch is asked for: when to give up on it.
    let mut rematch_until: Option<tokio::time::Instant> = None;
    let rematch_wait = match link.limits.turn_timeout_ms {
        0 => REMATCH_WAIT_UNTIMED,
        ms => Duration::from_millis(ms),
    };
    let played = |t: &Tally| t.wins + t.draws + t.losses;
    loop {
        let event = tokio::select! {
            event = link.next() => event,
            chosen = think_done(&mut thinking) => {
                let (mover, (row, col), asked_at) = match chosen {
                    Ok(done) => done,
                    Err(why) => {
                        let _ = link.send(ClientMessage::Resign {}).await;
                        return Err(Error::StrategyGaveUp(why));
                    }
                };
                idle = Some(mover);
                // Played only if the position is still the one it was asked for.
                if view.my_turn() && view.game.moves().len() == asked_at {
                    send(&mut link, &mut last, ClientMessage::Move { row: row as i64, col: col as i64 }).await?;
                } else if view.my_turn() {
                    thinking = idle.take().map(|m| think_about(m, &view, think));
                }
                continue;
            }
            _ = sleep_until(rematch_until) => {
                rematch_until = None;
                let _ = link.send(ClientMessage::Leave {}).await;
                match again(start) {
                    Some(request) => {
                        send(&mut link, &mut last, request).await?;
                        continue;
                    }
                    None => return Err(Error::RematchUnanswered { games: played(&tally), tally }),
                }
            }
        };
        let msg = match event {
            Event::Msg(msg) => msg,
            Event::Down { restart } => {
                let what = if restart { "the server is restarting" } else { "the connection dropped" };
                eprintln!("ttt bot: {what}; reconnecting…");
                continue;
            }

            Event::Resumed => continue,
            Event::Closed(why) => return Err(Error::Closed(why)),
        };
        if let Some(why) = fatal(&msg, start, &link.limits) {
            return Err(Error::Refused(why));
        }
        let in_game = view.you.is_some() && view.over.is_none();
        if let Some(why) =
            matches!(start, Start::Challenge(..)).then(|| challenge_over(&msg, in_game)).flatten()
        {
            return Err(Error::ChallengeOver { why, tally });
        }
        view.apply(&msg);
        match &msg {
            ServerMessage::RoomCreated { room, .. } => {
                println!("room: {}", crate::say::clean(room));
            }
            ServerMessage::GameStarted { .. } => rematch_until = None,
            ServerMessage::Challenged { challenge, size, win, from, .. } if waiting => {
                let challenge = challenge.to_string();
                let free = view.over.is_some() || view.you.is_none();
                let reply = if !free {
                    ClientMessage::Decline { challenge, reason: Some("in a game; try again after it".into()) }
                } else if sizes.accepts(*size) {
                    eprintln!(
                        "ttt bot: {} challenges on {size}×{size} ({win} in a row): accepted",
                        crate::say::clean(&from.name)
                    );
                    ClientMessage::Accept { challenge }
                } else {
                    let reason = format!("this bot plays {sizes}");
                    ClientMessage::Decline { challenge, reason: Some(reason.chars().take(100).collect()) }
                };
                send(&mut link, &mut last, reply).await?;
                continue;
            }
            ServerMessage::RematchOffered {} if waiting => {
                send(&mut link, &mut last, ClientMessage::Rematch {}).await?;
                continue;
            }
            ServerMessage::GameOver { winner, .. } => {
                match winner {
                    None => tally.draws += 1,
                    Some(w) if view.you == Some(*w) => tally.wins += 1,
                    Some(_) => tally.losses += 1,
                }
                if played(&tally) >= games {
                    let _ = link.send(ClientMessage::Leave {}).await;
                    if let Some(mover) = idle.take() {
                        mover.quit().await;
                    }
                    return Ok(tally);
                }
                // Waiting for challenges, a rematch comes from the challenger.
                if view.closed.is_none() && !waiting {
                    send(&mut link, &mut last, ClientMessage::Rematch {}).await?;
                    rematch_until = Some(tokio::time::Instant::now() + rematch_wait);
                }
                continue;
            }
            ServerMessage::RoomClosed { .. } => {
                // The opponent is gone: find another, or stop.
                rematch_until = None;
                match (start, again(start)) {
                    (Start::Await, _) => {}
                    (_, Some(request)) => send(&mut link, &mut last, request).await?,
                    (_, None) => {
                        return Err(Error::OpponentLeft { games: played(&tally), tally });
                    }
                }
                continue;
            }
            ServerMessage::Error { code: ErrorCode::RateLimited, .. } => {
                // Not acted on: the link holds off for `retry_after_ms`, then
                // the same request goes again.
                if let Some(request) = last.clone() {
                    send(&mut link, &mut last, request).await?;
                }
                continue;
            }
            _ => {}
        }
        let cue = matches!(
            msg,
            ServerMessage::GameStarted { .. }
                | ServerMessage::Moved { .. }
                | ServerMessage::State { .. }
                | ServerMessage::Error { .. }
        );
        if cue && view.my_turn() && thinking.is_none() {
            thinking = idle.take().map(|m| think_about(m, &view, think));
        }
    }
}

/// What finds the next opponent when the room closes: the queue again, the
/// same challenge again, the house again; none for a private room.
fn again(start: &Start) -> Option<ClientMessage> {
    match start {
        Start::Quick(..) | Start::Challenge(..) | Start::House(..) => crate::session::request(start),
        Start::Create(..) | Start::Join(..) | Start::Watch(..) | Start::Await => None,
    }
}

/// A move being chosen off the client's task.
type Thinking = Pin<Box<dyn Future<Output = Result<(Mover, (usize, usize)), MoverError>>>>;

/// Starts choosing a move for the position in `view`.
fn think_about(mover: Mover, view: &View, think: Duration) -> (Thinking, usize) {
    (Box::pin(mover.choose(view.game.clone(), think)), view.game.moves().len())
}

/// Completes when the move being chosen is ready (never, while none is).
async fn think_done(
    thinking: &mut Option<(Thinking, usize)>,
) -> Result<(Mover, (usize, usize), usize), MoverError> {
    let Some((future, asked_at)) = thinking.as_mut() else {
        return std::future::pending().await;
    };
    let result = future.await;
    let asked_at = *asked_at;
    *thinking = None;
    result.map(|(mover, cell)| (mover, cell, asked_at))
}

/// Sends `request`, remembering it in `last`. While the connection is
/// being re-established nothing is sent, and that is no failure: the room's
/// `state` after the resume says what to do (a move is chosen again).
async fn send(
    link: &mut Link,
    last: &mut Option<ClientMessage>,
    request: ClientMessage,
) -> Result<(), SendError> {
    *last = Some(request.clone());
    match link.send(request).await {
        Ok(()) | Err(SendError::NotConnected) => Ok(()),
        Err(lost) => Err(lost),
    }
}

/// Completes at `until`, or never.
async fn sleep_until(until: Option<tokio::time::Instant>) {
    match until {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
