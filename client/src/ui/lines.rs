//! Play as plain lines, for pipes and scripts: the board as text after every
//! move, one prompt per move, one move read per line.

use tokio::io::{AsyncBufReadExt, BufReader};

use tictactoe_protocol::{ClientMessage, Player, ServerMessage};

use super::board::{render, status};
use super::input::{cell_name, parse_cell};
use crate::error::Error;
use crate::net::{Event, Link, NOT_CONNECTED, SendError};
use crate::say::{clean, refusal};
use crate::session::{Start, challenge_over, fatal};
use crate::view::View;

/// What the next stdin line answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaiting {
    Nothing,
    Move,
    /// y: rematch, n: new quick match, else quit.
    Rematch,
    /// The room closed after the game: n: new quick match, else quit.
    NewGame,
    /// A challenge is open: a: accept, d: decline, else as before.
    Answer,
}

/// Runs a game (or a watch) in line mode until it ends; `start` is what was
/// asked for (a challenge not accepted ends it).
pub async fn run(mut link: Link, start: &Start) -> Result<(), Error> {
    let watch = matches!(start, Start::Watch(_));
    let challenging = matches!(start, Start::Challenge(..));
    let mut view = View::default();
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut awaiting = Awaiting::Nothing;
    loop {
        tokio::select! {
            event = link.next() => match event {
                Event::Msg(msg) => {
                    if let Some(why) = fatal(&msg, start, &link.limits) {
                        return Err(Error::Refused(why));
                    }
                    if let Some(why) = challenging.then(|| challenge_over(&msg, view.you.is_some())).flatten() {
                        return Err(Error::Refused(why));
                    }
                    view.apply(&msg);
                    awaiting = show(&view, &msg, awaiting, watch, &link);
                    // A watcher stays for rematches, until the room closes.
                    if watch && matches!(msg, ServerMessage::RoomClosed { .. }) {
                        return Ok(());
                    }
                }
                Event::Down { restart: true } => println!("Server restarting, reconnecting…"),
                Event::Down { restart: false } => println!("Connection lost; reconnecting…"),
                Event::Resumed if view.you.is_some() && view.over.is_none() => {
                    println!("Reconnected; the game goes on.")
                }
                Event::Resumed => println!("Reconnected."),
                Event::Closed(why) => return if view.over.is_some() { Ok(()) } else { Err(Error::Closed(why)) },
            },
            line = stdin.next_line(), if awaiting != Awaiting::Nothing => {
                let Ok(Some(line)) = line else {
                    let _ = link.send(ClientMessage::Leave {}).await;
                    // Leaving a game in progress resigns it: say so, and fail.
                    if !watch && view.you.is_some() && view.over.is_none() && view.game.turn().is_some() {
                        return Err(Error::InputEnded);
                    }
                    return Ok(());
                };
                match awaiting {
                    Awaiting::Move => match parse_cell(&line, view.game.size()) {
                        Ok((r, c)) if view.game.is_occupied(r, c) => {
                            println!("! {} is taken; choose an empty cell", cell_name(r, c));
                            prompt();
                        }
                        Ok((row, col)) => {
                            match link.send(ClientMessage::Move { row: row as i64, col: col as i64 }).await {
                                Err(SendError::NotConnected) => {
                                    println!("! {NOT_CONNECTED}");
                                    prompt();
                                }
                                sent => {
                                    sent?;
                                    awaiting = Awaiting::Nothing;
                                }
                            }
                        }
                        Err(e) => {
                            println!("! {e}");
                            prompt();
                        }
                    },
                    Awaiting::Rematch | Awaiting::NewGame => {
                        let answer = line.trim().to_ascii_lowercase();
                        if answer == "y" && awaiting == Awaiting::Rematch {
                            link.send(ClientMessage::Rematch {}).await?;
                            println!("Waiting for the opponent to accept…");
                            awaiting = Awaiting::Nothing;
                        } else if answer == "n" {
                            let (size, win) = (view.game.size() as i64, view.game.win() as i64);
                            link.send(ClientMessage::QuickMatch { size: Some(size), win: Some(win), house_after_ms: None, level: None }).await?;
                            awaiting = Awaiting::Nothing;
                        } else {
                            let _ = link.send(ClientMessage::Leave {}).await;
                            return Ok(());
                        }
                    }
                    Awaiting::Answer => {
                        let id = view.offer.as_ref().map(|o| o.id.clone()).unwrap_or_default();
                        match line.trim() {
                            "a" => link.send(ClientMessage::Accept { challenge: id }).await?,
                            "d" => {
                                link.send(ClientMessage::Decline { challenge: id, reason: None }).await?;
                                view.offer = None;
                                println!("Declined.");
                            }
                            _ => println!("! a: accept, d: decline"),
                        }
                        awaiting = Awaiting::Nothing;
                    }
                    Awaiting::Nothing => {}
                }
            }
        }
    }
}

fn prompt() {
    println!("Your move (e.g. b2):");
}

/// Prints what changed and returns what the next stdin line answers.
fn show(view: &View, msg: &ServerMessage, awaiting: Awaiting, watch: bool, link: &Link) -> Awaiting {
    let board = || {
        for line in render(view, None, false) {
            println!("{line}");
        }
        println!("{}", status(view));
    };
    match msg {
        ServerMessage::RoomCreated { room, .. } => {
            println!("Room code: {}", clean(room));
            println!("Your friend joins with: {}", link.join_command(room));
            println!("Waiting for an opponent to join…");
        }
        ServerMessage::Queued { .. } => println!("Waiting for an opponent…"),
        ServerMessage::GameStarted { .. } | ServerMessage::State { .. } | ServerMessage::Moved { .. } => {
            match msg {
                ServerMessage::Moved { row, col, player, .. } => {
                    println!("{} played {}", view.player(*player), cell_name(*row, *col));
                }
                ServerMessage::GameStarted { room, .. } => println!(
                    "Game started in room {}: {} against {}",
                    clean(room),
                    view.player(Player::X),
                    view.player(Player::O)
                ),
                _ => {}
            }
            board();
            if view.my_turn() && !watch {
                prompt();
                return Awaiting::Move;
            }
        }
        ServerMessage::GameOver { .. } => {
            // The board, then the result once (the status line would repeat it).
            for line in render(view, None, false) {
                println!("{line}");
            }
            if let Some(result) = view.result_line() {
                println!("{result}");
            }
            if !view.note.is_empty() {
                println!("{}", view.note);
            }
            if !watch && view.closed.is_none() {
                println!("Rematch? [y: rematch, n: new opponent, anything else: quit]");
                return Awaiting::Rematch;
            }
        }
        ServerMessage::Error { code, message, .. } => {
            println!("! {}", refusal(*code, message, None, None));
            if view.my_turn() {
                prompt();
                return Awaiting::Move;
            }
        }
        ServerMessage::OpponentDisconnected { .. }
        | ServerMessage::OpponentReconnected {}
        | ServerMessage::RematchOffered {} => println!("{}", view.note),
        ServerMessage::RoomClosed { .. } => {
            println!("{}", view.note);
            if !watch && view.over.is_some() {
                println!("New game? [n: new quick match, anything else: quit]");
                return Awaiting::NewGame;
            }
        }
        ServerMessage::Challenged { .. } => {
            println!("{}", view.note);
            if view.you.is_none() || view.over.is_some() {
                return Awaiting::Answer;
            }
        }
        ServerMessage::ChallengeSent { .. } | ServerMessage::ChallengeEnded { .. } => {
            println!("{}", view.note)
        }
        ServerMessage::Welcome { .. }
        | ServerMessage::Pong { .. }
        | ServerMessage::Registered { .. }
        | ServerMessage::Authenticated { .. }
        | ServerMessage::Online { .. } => {}
    }
    awaiting
}
