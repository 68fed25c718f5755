//! Starting a session: connect, say hello, and ask for a game or a room.

use tictactoe_protocol::{ClientMessage, ErrorCode, Limits, Player, ServerMessage};

use crate::net::{ConnectError, Gone, Link, SendError};
use crate::request::Start;

/// Why a session ended before its command was done: what every command
/// that talks over a connection (play, watch, bot, who) can end with.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No connection to the server.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A request could not be sent: the connection is gone.
    #[error(transparent)]
    Send(#[from] SendError),
    /// The connection ended for good.
    #[error(transparent)]
    Closed(Gone),
    /// The server refused what the session is for, in a person's words.
    #[error("{0}")]
    Refused(String),
}

/// Connects to the first of `servers` (the `--server` list) that answers,
/// as `name`, and sends the request that `start` asks for.
pub async fn open(servers: &str, name: &str, start: &Start) -> Result<Link, SessionError> {
    let mut link = Link::connect(servers).await?;
    // Signed in when this name has an account saved for this server (or
    // TTT_TOKEN is set); a guest otherwise.
    let token = crate::accounts::token_for(servers, name);
    let hello = ClientMessage::Hello { name: name.to_owned(), protocol: Some(1), token };
    link.send(hello).await?;
    match start.request() {
        Some(request) => link.send(request).await?,
        // Waiting to be challenged: listed again on every new connection.
        None => link.stay_listed(),
    }
    // A tournament's player, free between games, reconnects too (and joins again).
    if matches!(start, Start::Tournament(_)) {
        link.stay_listed();
    }
    Ok(link)
}

/// A seat kept on disk by an earlier run, being taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakingBack {
    /// The mark it plays, when the earlier run knew it.
    pub mark: Option<Player>,
}

/// Like [`open`] for a player whose seats are kept on disk: a seat kept
/// under this name and command from a game this client did not see end (a
/// crash, a kill) is asked back first (and returned); otherwise `start` is sent.
pub async fn open_kept(
    servers: &str,
    name: &str,
    start: &Start,
) -> Result<(Link, Option<TakingBack>), SessionError> {
    let Some(seats) = crate::seats::Seats::for_player(servers, name, &start.key()) else {
        return Ok((open(servers, name, start).await?, None));
    };
    let Some((token, mark)) = seats.take_back() else {
        let mut link = open(servers, name, start).await?;
        link.keep_seats(seats);
        return Ok((link, None));
    };
    let mut link = Link::connect(servers).await?;
    let account = crate::accounts::token_for(servers, name);
    link.send(ClientMessage::Hello { name: name.to_owned(), protocol: Some(1), token: account }).await?;
    link.keep_seats(seats);
    link.resume_seat(token).await?;
    Ok((link, Some(TakingBack { mark })))
}

/// What ends a challenger's session before its game: the challenge ended
/// (declined, expired, cancelled) or was refused (`busy`) while no game has
/// started.
pub fn challenge_over(msg: &ServerMessage, in_game: bool) -> Option<String> {
    match msg {
        // The message carries the other player's decline reason: their text.
        ServerMessage::ChallengeEnded { message, .. } if !in_game => Some(crate::say::clean(message)),
        ServerMessage::Error { code: ErrorCode::Busy, message, .. } if !in_game => {
            Some(crate::say::clean(message))
        }
        _ => None,
    }
}

/// Errors after which the session cannot go on (the request `start` itself
/// failed), in a person's words; `limits` are the server's.
pub fn fatal(msg: &ServerMessage, start: &Start, limits: &Limits) -> Option<String> {
    match msg {
        ServerMessage::Error {
            code:
                code @ (ErrorCode::RoomNotFound
                | ErrorCode::RoomFull
                | ErrorCode::InvalidSize
                | ErrorCode::InvalidWin
                | ErrorCode::InvalidClock
                | ErrorCode::InvalidName
                | ErrorCode::PlayerNotFound
                | ErrorCode::UnsupportedProtocol),
            message,
            ..
        } => Some(crate::say::refusal(*code, message, Some(start), Some(limits))),
        _ => None,
    }
}
