//! Starting a session: connect, say hello, and ask for a game or a room.

use tictactoe_protocol::{ClientMessage, ErrorCode, HouseLevel, Limits, Player, ServerMessage};

use crate::net::{ConnectError, Link, SendError};

/// Why a session could not start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// No connection was made.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The first requests could not be sent.
    #[error(transparent)]
    Send(#[from] SendError),
}

/// The board a game is asked for: its size, and the win length (the server's
/// default, a whole line, when `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Board size.
    pub size: usize,
    /// Marks in a row that win.
    pub win: Option<usize>,
}

impl Rules {
    /// A `quick_match` for these rules.
    pub fn quick_match(self) -> ClientMessage {
        let (size, win) = self.wire();
        ClientMessage::QuickMatch { size, win, house_after_ms: None, level: None }
    }

    /// Refuses, in words, a win length that does not fit the board (the
    /// server would refuse it too, after connecting).
    pub fn check(self) -> Result<(), crate::say::BadWin> {
        match self.win.and_then(|win| crate::say::bad_win(self.size, win)) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// The `size` and `win` fields of a request for these rules.
    pub fn wire(self) -> (Option<i64>, Option<i64>) {
        (Some(self.size as i64), self.win.map(|w| w as i64))
    }
}

/// How to get into a game.
#[derive(Debug, Clone)]
pub enum Start {
    /// Quick match with these rules.
    Quick(Rules),
    /// Open a private room with these rules, playing this mark in its first
    /// game (random when `None`).
    Create(Rules, Option<Player>),
    /// Take the free seat of this room.
    Join(String),
    /// Watch this room.
    Watch(String),
    /// Play the server's house bot at once.
    House(Rules, HouseLevel),
    /// Challenge the player of this name, and play them if they accept.
    Challenge(String, Rules),
    /// Ask for nothing: stay listed and wait for challenges.
    Await,
}

impl Start {
    /// What is asked for, as a seat kept on disk records it: the same for
    /// the same command line (a room code in any case, a win length left
    /// out or given as the size), different for different ones.
    pub fn key(&self) -> String {
        let rules = |r: &Rules| format!("{} {}", r.size, r.win.unwrap_or(r.size));
        match self {
            Start::Quick(r) => format!("quick {}", rules(r)),
            Start::Create(r, mark) => {
                format!("create {} {}", rules(r), mark.map_or("random".to_owned(), |m| format!("{m:?}")))
            }
            Start::Join(room) => format!("join {}", room.trim().to_ascii_uppercase()),
            Start::Watch(room) => format!("watch {}", room.trim().to_ascii_uppercase()),
            Start::House(r, level) => format!("house {} {level:?}", rules(r)),
            Start::Challenge(name, r) => format!("challenge {} {}", name.to_lowercase(), rules(r)),
            Start::Await => "await".to_owned(),
        }
    }
}

/// Connects to the first of `servers` (the `--server` list) that answers,
/// as `name`, and sends the request that `start` asks for.
pub async fn open(servers: &str, name: &str, start: &Start) -> Result<Link, OpenError> {
    let mut link = Link::connect(servers).await?;
    // Signed in when this name has an account saved for this server (or
    // TTT_TOKEN is set); a guest otherwise.
    let token = crate::accounts::token_for(servers, name);
    let hello = ClientMessage::Hello { name: name.to_owned(), protocol: Some(1), token };
    link.send(hello).await?;
    match request(start) {
        Some(request) => link.send(request).await?,
        // Waiting to be challenged: listed again on every new connection.
        None => link.stay_listed(),
    }
    Ok(link)
}

/// The request that `start` sends, if any.
pub fn request(start: &Start) -> Option<ClientMessage> {
    Some(match start {
        Start::Quick(rules) => rules.quick_match(),
        Start::Create(rules, mark) => {
            let (size, win) = rules.wire();
            ClientMessage::CreateRoom { size, win, mark: *mark }
        }
        Start::Join(room) => ClientMessage::JoinRoom { room: room.clone() },
        Start::Watch(room) => ClientMessage::Spectate { room: room.clone() },
        Start::House(rules, level) => {
            let (size, win) = rules.wire();
            ClientMessage::PlayHouse { size, win, level: Some(*level) }
        }
        Start::Challenge(name, rules) => {
            let (size, win) = rules.wire();
            ClientMessage::Challenge { name: name.clone(), size, win }
        }
        Start::Await => return None,
    })
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
) -> Result<(Link, Option<TakingBack>), OpenError> {
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
                | ErrorCode::InvalidName
                | ErrorCode::PlayerNotFound
                | ErrorCode::UnsupportedProtocol),
            message,
            ..
        } => Some(crate::say::refusal(*code, message, Some(start), Some(limits))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_command_line_asks_for_the_same_seat_and_others_do_not() {
        let rules = |size, win| Rules { size, win };
        // A room code in any case; a win length left out or given as the size.
        assert_eq!(Start::Join("abc ".into()).key(), Start::Join("ABC".into()).key());
        assert_eq!(Start::Quick(rules(4, None)).key(), Start::Quick(rules(4, Some(4))).key());
        let different = [
            Start::Quick(rules(3, None)),
            Start::Quick(rules(4, Some(3))),
            Start::Create(rules(3, None), None),
            Start::Create(rules(3, None), Some(Player::X)),
            Start::Join("ABC".into()),
            Start::Join("ABD".into()),
            Start::House(rules(3, None), HouseLevel::Perfect),
            Start::House(rules(3, None), HouseLevel::Random),
            Start::Challenge("ann".into(), rules(3, None)),
            Start::Challenge("bob".into(), rules(3, None)),
            Start::Await,
        ];
        let keys: std::collections::HashSet<String> = different.iter().map(Start::key).collect();
        assert_eq!(keys.len(), different.len(), "{keys:?}");
    }
}
