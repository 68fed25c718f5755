//! What a connection's shell does for its session: each [`Action`] carried
//! out (frames written, requests handed to the lobby or a room, questions
//! to the store), never waiting on the path of a move.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tracing::debug;

use tictactoe_protocol::{ErrorCode, RequestId, ServerMessage};

use super::Connection;
use crate::cmd::{LobbyCmd, RoomCmd, RoomLink, encode};
use crate::core::account;
use crate::core::queue::TrySendError;
use crate::session::{Action, Actions, End, Shared};
use crate::store::StoreError;

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// Carries out what the session said. A lone in-game request (every
    /// move) is handed over here without waiting; anything else runs boxed,
    /// since every byte of this future is paid by every idle connection.
    pub(super) async fn carry_out(&mut self, mut actions: Actions) -> Option<End> {
        if actions.is_empty() {
            return None;
        }
        if actions.len() == 1 {
            if let Action::InRoom(_) = &actions[0] {
                let Some(Action::InRoom(cmd)) = actions.pop() else { return None };
                return match self.to_room_now(cmd) {
                    // The usual case, on the path of every move: nothing to wait for.
                    Some(Ok(())) => None,
                    refused => Box::pin(self.in_room_refused(refused)).await,
                };
            }
        }
        Box::pin(self.carry_out_all(actions)).await
    }

    pub(super) async fn carry_out_all(&mut self, actions: Actions) -> Option<End> {
        for action in actions {
            if let Some(end) = self.act(action).await {
                return Some(end);
            }
        }
        None
    }

    /// Carries out one action.
    pub(super) async fn act(&mut self, action: Action) -> Option<End> {
        match action {
            Action::Reply(msg) => self.reply(&msg).await,
            Action::Throttled(msg) => self.write(Message::Text(encode(&msg))).await,
            Action::Lobby(ask) => {
                let conn = self.me.clone()?;
                send_lobby(&self.shared.lobby, LobbyCmd::Ask { conn, ask }).await;
                None
            }
            Action::LobbyIfRoom(ask) => {
                let conn = self.me.clone()?;
                let _ = self.shared.lobby.try_send(LobbyCmd::Ask { conn, ask });
                None
            }
            Action::Online { who, presence } => {
                let conn = self.me.clone()?;
                send_lobby(&self.shared.lobby, LobbyCmd::Online { conn, who, presence }).await;
                None
            }
            Action::InRoom(cmd) => {
                let sent = self.to_room_now(cmd);
                self.in_room_refused(sent).await
            }
            Action::Room(link, cmd) => {
                if let Err(refused) = link.try_send(cmd) {
                    let _ = to_room(&link, refused).await;
                }
                None
            }
            Action::RoomLastWord(link, cmd) => {
                let _ = link.force_send(cmd);
                None
            }
            Action::SignIn { name, token, id } => {
                let found = self.shared.store.account(&name).await;
                let actions = self.session.signed_in(&name, &token, found, id, self.world());
                Box::pin(self.carry_out_all(actions)).await
            }
            Action::CheckGuest { name, id } => {
                let found = self.shared.store.account(&name).await;
                let actions = self.session.guest_checked(&name, found, id);
                Box::pin(self.carry_out_all(actions)).await
            }
            Action::Register { name, bot, id } => {
                let answer = register(&self.shared, self.session.ip(), &name, bot, id).await;
                self.reply(&answer).await
            }
            Action::Tournament(ask, id) => {
                let conn = self.me.clone()?;
                let (who, presence) = (self.session.who(), self.session.presence());
                let cmd = crate::tournament::TournamentCmd::Ask { conn, who, presence, ask, id: id.clone() };
                if self.shared.tournaments.try_send(cmd).is_err() {
                    let text = "the server is busy with tournaments; try again in a moment";
                    let mut msg = ServerMessage::error(ErrorCode::Unavailable, text, id);
                    if let ServerMessage::Error { retry_after_ms, .. } = &mut msg {
                        *retry_after_ms = Some(1_000);
                    }
                    return self.reply(&msg).await;
                }
                None
            }
            Action::End(end) => Some(end),
        }
    }

    /// Hands an in-game request to the room the session is in, without
    /// waiting: `None` when it is in none.
    pub(super) fn to_room_now(&self, cmd: RoomCmd) -> Option<Result<(), TrySendError<RoomCmd>>> {
        self.session.room().map(|link| link.try_send(cmd))
    }

    /// What became of an in-game request [`Connection::to_room_now`] handed
    /// over: taken, or in a full inbox to wait for, or refused by a closed room.
    pub(super) async fn in_room_refused(
        &mut self,
        refused: Option<Result<(), TrySendError<RoomCmd>>>,
    ) -> Option<End> {
        let id = match refused {
            None | Some(Ok(())) => return None,
            Some(Err(refused)) => {
                let link = self.session.room().cloned()?;
                match to_room(&link, refused).await {
                    Ok(()) => return None,
                    Err(id) => id,
                }
            }
        };
        // The room closed before it read the request; its `room_closed` is on the way.
        let actions = self.session.room_closed(id);
        Box::pin(self.carry_out_all(actions)).await
    }

    /// Carries out what a signal said, never waiting (this runs inside a
    /// write batch): a room's inbox takes a connection's last word past its
    /// capacity, and the lobby hears of a status change only if it has room.
    pub(super) fn signal_actions(&mut self, actions: Actions) -> Option<End> {
        for action in actions {
            match action {
                Action::RoomLastWord(link, cmd) => {
                    let _ = link.force_send(cmd);
                }
                Action::LobbyIfRoom(ask) => {
                    if let Some(conn) = self.me.clone() {
                        let _ = self.shared.lobby.try_send(LobbyCmd::Ask { conn, ask });
                    }
                }
                Action::End(end) => return Some(end),
                other => debug!(?other, "a signal asked for what it never asks"),
            }
        }
        None
    }
}

/// Hands `cmd` to the lobby, waiting only when its inbox is full.
pub(super) async fn send_lobby(lobby: &mpsc::Sender<LobbyCmd>, cmd: LobbyCmd) {
    if let Err(mpsc::error::TrySendError::Full(cmd)) = lobby.try_send(cmd) {
        // Boxed: every connection's future would otherwise carry the wait.
        let _ = Box::pin(lobby.send(cmd)).await;
    }
}

/// Finishes handing a request to a room whose inbox refused it at once:
/// waits for space in a full inbox; gives the request's id back if the room
/// has closed.
async fn to_room(link: &RoomLink, refused: TrySendError<RoomCmd>) -> Result<(), Option<RequestId>> {
    let gone = match refused {
        // Boxed: every connection's future would otherwise carry the wait.
        TrySendError::Full(cmd) => Box::pin(link.send(cmd)).await.err(),
        TrySendError::Closed(cmd) => Some(cmd),
    };
    match gone {
        Some(RoomCmd::Request { id, .. }) => Err(id),
        _ => Ok(()),
    }
}

/// `register`: a new account, whose token is shown this once. Limited per
/// address; a name that turns out taken does not count.
async fn register(
    shared: &Shared,
    ip: std::net::IpAddr,
    name: &str,
    bot: bool,
    id: Option<RequestId>,
) -> ServerMessage {
    use crate::session::{NO_ACCOUNTS, taken, unavailable};
    if let Err(wait) = shared.registrations.take(ip, std::time::Instant::now()) {
        // A name that is taken is refused as such, limited or not: it costs nothing.
        if let Ok(Some(_)) = shared.store.account(name).await {
            return ServerMessage::error(ErrorCode::NameTaken, taken(name), id);
        }
        return ServerMessage::Error {
            code: ErrorCode::RateLimited,
            message: "too many accounts registered from your address; try again later".into(),
            id,
            retry_after_ms: Some(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
            game_id: None,
        };
    }
    let token = account::new_secret("ttt_");
    match shared.store.register(name, bot, account::hash(&token)).await {
        Ok(account) => ServerMessage::Registered { name: account.name, token, bot, id },
        Err(StoreError::NameTaken) => {
            shared.registrations.refund(ip);
            ServerMessage::error(ErrorCode::NameTaken, taken(name), id)
        }
        Err(StoreError::Disabled) => ServerMessage::error(ErrorCode::AuthFailed, NO_ACCOUNTS, id),
        Err(StoreError::Busy | StoreError::Unavailable) => {
            shared.registrations.refund(ip);
            unavailable(id)
        }
    }
}
