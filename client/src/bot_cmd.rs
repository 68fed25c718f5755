//! `ttt bot`: play N games with a strategy and print a summary.

use std::time::Duration;

use tictactoe_protocol::{ClientMessage, ErrorCode, ServerMessage};

use crate::bot::Strategy;
use crate::net::{Event, Link};
use crate::session::{Start, fatal};
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

/// Plays `games` games, rematching in the same room; with quick match, a new
/// opponent is found when the old one leaves.
pub async fn run(
    mut link: Link,
    start: &Start,
    strategy: &mut dyn Strategy,
    games: u32,
    think: Duration,
) -> Result<Tally, String> {
    let mut view = View::default();
    let mut tally = Tally::default();
    loop {
        let msg = match link.next().await {
            Event::Msg(msg) => msg,
            Event::Reconnecting => continue,
            Event::Closed(why) => return Err(why),
        };
        if let Some(why) = fatal(&msg) {
            return Err(why);
        }
        view.apply(&msg);
        match &msg {
            ServerMessage::RoomCreated { room, .. } => {
                println!("room: {room}");
            }
            ServerMessage::GameOver { winner, .. } => {
                match view.you.map(|p| p.number()) {
                    Some(me) if me == *winner => tally.wins += 1,
                    _ if *winner == 0 => tally.draws += 1,
                    _ => tally.losses += 1,
                }
                if tally.wins + tally.draws + tally.losses >= games {
                    let _ = link.send(ClientMessage::Leave {}).await;
                    return Ok(tally);
                }
                link.send(ClientMessage::Rematch {}).await?;
                continue;
            }
            ServerMessage::Error { code: ErrorCode::RateLimited, .. } => {
                // Our pacing should prevent this; if it happens, back off.
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            ServerMessage::Error { code: ErrorCode::NotInGame, .. } if view.over.is_some() => {
                // The opponent left after the game: find another, or stop.
                match start {
                    Start::Quick(size) => {
                        link.send(ClientMessage::QuickMatch { size: Some(*size as i64) }).await?
                    }
                    _ => {
                        return Err(format!(
                            "the opponent left after {} games; {tally}",
                            tally.wins + tally.draws + tally.losses
                        ));
                    }
                }
                continue;
            }
            _ => {}
        }
        if view.my_turn()
            && matches!(
                msg,
                ServerMessage::GameStarted { .. }
                    | ServerMessage::Moved { .. }
                    | ServerMessage::State { .. }
                    | ServerMessage::Error { .. }
            )
        {
            let (row, col) = match strategy.choose(&view.game, think) {
                Ok(cell) => cell,
                Err(why) => {
                    let _ = link.send(ClientMessage::Resign {}).await;
                    return Err(format!("the strategy gave up: {why}"));
                }
            };
            link.send(ClientMessage::Move { row: row as i64, col: col as i64 }).await?;
        }
    }
}
