//! Starting a session: connect, say hello, and ask for a game or a room.

use tictactoe_protocol::{ClientMessage, ErrorCode, ServerMessage};

use crate::net::Link;

/// How to get into a game.
#[derive(Debug, Clone)]
pub enum Start {
    /// Quick match on a board of this size.
    Quick(usize),
    /// Open a private room of this size.
    Create(usize),
    /// Take the free seat of this room.
    Join(String),
    /// Watch this room.
    Watch(String),
}

/// Connects to `url` as `name` and sends the request that `start` asks for.
pub async fn open(url: &str, name: &str, start: &Start) -> Result<Link, String> {
    let mut link = Link::connect(url).await?;
    link.send(ClientMessage::Hello { name: name.to_owned(), protocol: Some(1) }).await?;
    let request = match start {
        Start::Quick(size) => ClientMessage::QuickMatch { size: Some(*size as i64) },
        Start::Create(size) => ClientMessage::CreateRoom { size: Some(*size as i64) },
        Start::Join(room) => ClientMessage::JoinRoom { room: room.clone() },
        Start::Watch(room) => ClientMessage::Spectate { room: room.clone() },
    };
    link.send(request).await?;
    Ok(link)
}

/// Errors after which the session cannot go on: the request itself failed.
pub fn fatal(msg: &ServerMessage) -> Option<String> {
    match msg {
        ServerMessage::Error {
            code:
                ErrorCode::RoomNotFound
                | ErrorCode::RoomFull
                | ErrorCode::InvalidSize
                | ErrorCode::InvalidName
                | ErrorCode::UnsupportedProtocol,
            message,
            ..
        } => Some(message.clone()),
        _ => None,
    }
}
