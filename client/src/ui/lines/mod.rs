//! Play as plain lines, for pipes and scripts: the board as text after every
//! move, one prompt per move, one move read per line.

mod state;

use std::collections::VecDeque;

use tokio::io::{AsyncBufReadExt, BufReader};

use tictactoe_protocol::ClientMessage;

use super::PlayError;
use crate::net::{Link, SendError};
use crate::request::Start;
use state::{Do, Lines};

/// Runs a game (or a watch) in line mode until it ends; `name` is who plays,
/// `start` what was asked for (a challenge not accepted ends it).
pub async fn run(mut link: Link, name: &str, start: &Start) -> Result<(), PlayError> {
    let mut lines = Lines::new(start);
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    loop {
        let out = tokio::select! {
            event = link.next() => lines.on_link(event, &link.limits, &link.servers()),
            line = stdin.next_line(), if lines.wants_input() => lines.on_line(line.ok().flatten()),
        };
        let mut out = VecDeque::from(out);
        while let Some(step) = out.pop_front() {
            match step {
                Do::Print(line) => println!("{line}"),
                Do::Send(request) => link.send(request).await?,
                Do::Move(request) => match link.send(request).await {
                    Err(SendError::NotConnected) => out.extend(lines.move_not_sent()),
                    sent => sent?,
                },
                Do::Leave => {
                    let _ = link.send(ClientMessage::Leave {}).await;
                }
                Do::Ended(game_id) => {
                    let record = crate::api::game_record(&link.servers(), &game_id).await;
                    out.extend(lines.ended(record, name));
                }
                Do::End(result) => return result,
            }
        }
    }
}
