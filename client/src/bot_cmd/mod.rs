//! `ttt bot`: play N games with a strategy and print a summary.

mod state;

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tictactoe_protocol::ClientMessage;

use crate::bot::{Budget, Mover, MoverError};
use crate::net::{Link, SendError};
use crate::request::Start;
use crate::session::SessionError;
use crate::view::View;
use state::{Bot, Do};

/// Why a bot's run ended before its games were played.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    /// The session failed: no connection, a refusal, the connection gone.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The bot's mover cannot go on.
    #[error("the strategy gave up: {0}")]
    StrategyGaveUp(MoverError),
    /// A rematch went unanswered in a private room.
    #[error("the opponent did not answer the rematch after {games} games; {tally}")]
    RematchUnanswered { games: u32, tally: Tally },
    /// The opponent left the private room.
    #[error("the opponent left the private room after {games} games; {tally}")]
    OpponentLeft { games: u32, tally: Tally },
    /// A challenge ended unplayed.
    #[error("{why}; {tally}")]
    ChallengeOver {
        /// The challenge's end, in a person's words.
        why: String,
        /// The results so far.
        tally: Tally,
    },
}

impl From<SendError> for BotError {
    fn from(e: SendError) -> BotError {
        BotError::Session(e.into())
    }
}

/// Wins, draws and losses so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub wins: u32,
    /// Games drawn (or ended with no winner).
    pub draws: u32,
    pub losses: u32,
}

impl Tally {
    /// Games played.
    fn played(&self) -> u32 {
        self.wins + self.draws + self.losses
    }
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

/// How a bot plays its run.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// How many games; 0: every game of the room until it closes.
    pub games: u32,
    /// The most a move may take (`--think-ms`).
    pub think: Option<Duration>,
    /// The board sizes accepted from challengers.
    pub sizes: Sizes,
    /// In a tournament: go berserk in every game.
    pub berserk: bool,
}

/// Plays `games` games, rematching in the same room. With quick match, a new
/// opponent is found whenever the room closes or a rematch goes unanswered;
/// in a private room either ends the run. It never waits silently: every
/// wait has a message that ends it or a deadline. Waiting for challenges
/// ([`Start::Await`]), it accepts those on `sizes` and declines the rest,
/// agrees to rematches, and otherwise waits for the next challenge. In a
/// tournament ([`Start::Tournament`], as `name`), it plays every pairing
/// until the tournament ends, and prints a summary with its rank.
pub async fn run(
    mut link: Link,
    start: &Start,
    name: &str,
    mover: Mover,
    plan: &Plan,
) -> Result<Tally, BotError> {
    let think = plan.think;
    let mut bot = Bot::new(start, plan.games, plan.sizes.clone(), &link.limits);
    if let Start::Tournament(id) = start {
        bot = bot.in_tournament(id, name, plan.berserk);
    }
    if matches!(mover, Mover::Gomocup(_)) {
        bot = bot.five_only();
    }
    let mut idle = Some(mover);
    // The move being chosen, and the number of moves on the board it was asked for.
    let mut thinking: Option<(Thinking, usize)> = None;
    loop {
        let deadline = bot.rematch_deadline();
        let poke = bot.poke_at();
        let mut todo: VecDeque<Do> = tokio::select! {
            event = link.next() => bot.on_event(event, &link.limits, Instant::now()),
            _ = sleep_until(poke) => bot.on_poke(Instant::now()),
            chosen = think_done(&mut thinking) => match chosen {
                Ok((mover, cell, asked_at)) => {
                    idle = Some(mover);
                    bot.on_chosen(cell, asked_at)
                }
                Err(MoverError::Forfeit(lost)) => {
                    idle = Some(Mover::Gomocup(lost.brain));
                    bot.on_forfeit(lost.why)
                }
                Err(why) => bot.on_gave_up(why),
            },
            _ = sleep_until(deadline) => bot.on_rematch_timeout(),
        }
        .into();
        while let Some(step) = todo.pop_front() {
            match step {
                Do::Send(request) => send(&mut link, request).await?,
                Do::Quietly(request) => {
                    let _ = link.send(request).await;
                }
                Do::Think => {
                    if thinking.is_none() {
                        let budget = bot.budget(think, Instant::now());
                        thinking = idle.take().map(|m| think_about(m, bot.view(), budget, bot.serial()));
                    }
                }
                Do::Vet { challenge, size } => {
                    // A brain still busy with the last game is not asked: its first move in this game finds out.
                    let refusal = match idle.as_mut() {
                        Some(Mover::Gomocup(brain)) => brain.vet(size).await.err(),
                        _ => None,
                    };
                    for next in bot.on_vetted(challenge, refusal).into_iter().rev() {
                        todo.push_front(next);
                    }
                }
                Do::Print(line) => println!("{line}"),
                Do::Say(line) => eprintln!("{line}"),
                Do::Invite(room) => {
                    eprintln!(
                        "ttt bot: an opponent joins with: {}",
                        crate::servers::invite(&link.servers(), &room)
                    );
                }
                Do::Done(tally) => {
                    if let Some(mover) = idle.take() {
                        mover.quit().await;
                    }
                    return Ok(tally);
                }
                Do::Fail(error) => return Err(error),
            }
        }
    }
}

/// A move being chosen off the client's task.
type Thinking = Pin<Box<dyn Future<Output = Result<(Mover, (usize, usize)), MoverError>>>>;

/// Starts choosing a move for the position in `view` (game `serial` of the
/// run), within `budget`.
fn think_about(mover: Mover, view: &View, budget: Budget, serial: u64) -> (Thinking, usize) {
    (Box::pin(mover.choose(view.game.clone(), budget, serial)), view.game.moves().len())
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

/// Sends `request`. While the connection is being re-established nothing
/// is sent, and that is no failure: the room's `state` after the resume
/// says what to do (a move is chosen again).
async fn send(link: &mut Link, request: ClientMessage) -> Result<(), SendError> {
    match link.send(request).await {
        Ok(()) | Err(SendError::NotConnected) => Ok(()),
        Err(lost) => Err(lost),
    }
}

/// Completes at `until`, or never.
pub async fn sleep_until(until: Option<Instant>) {
    match until {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}
