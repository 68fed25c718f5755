//! A connection's requests: each checked (names, sizes, where the connection
//! is) and sent to the lobby or its room, or refused with a reason.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use tictactoe_protocol::{ClientMessage, ErrorCode, HouseLevel, PROTOCOL_VERSION, RequestId, ServerMessage};

use super::io::{Connection, End, refusal};
use crate::cmd::Request as RoomRequest;
use crate::cmd::{ConnHandle, LobbyCmd, RoomCmd, RoomLink, encode};
use crate::lobby::presence::Status;
use crate::net::queue::TrySendError;
use crate::room::HOUSE_NAME;
use crate::room::{ROOM_CLOSED, Rules};
use crate::session::account::{self, Identity, name_key};
use crate::store::StoreError;
use crate::text::look_alike_key;

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// Carries out one decoded request.
    pub(super) async fn on_request(&mut self, msg: ClientMessage, id: Option<RequestId>) -> Option<End> {
        if needs_store(&msg) && !self.shared.store.can_write() {
            return self.reply(unavailable(id)).await;
        }
        match msg {
            // Boxed, like every wait on the store: every connection's future
            // would otherwise carry these requests' state, idle or not.
            ClientMessage::Hello { name, protocol, token } => {
                Box::pin(self.hello(name, protocol, token, id)).await
            }
            ClientMessage::Register { name, bot } => Box::pin(self.register_request(name, bot, id)).await,
            ClientMessage::QuickMatch { size, win, .. } | ClientMessage::CreateRoom { size, win, .. } => {
                let (mark, house) = match &msg {
                    ClientMessage::CreateRoom { mark, .. } => (*mark, None),
                    ClientMessage::QuickMatch { house_after_ms, level, .. } => {
                        let after =
                            house_after_ms.map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(0)));
                        (None, after.map(|after| (after, level.unwrap_or_default())))
                    }
                    _ => (None, None),
                };
                let quick = matches!(msg, ClientMessage::QuickMatch { .. });
                let rules = match self.rules(size, win) {
                    Ok(rules) => rules,
                    Err((code, text)) => return self.reply(refusal(code, text, id)).await,
                };
                let name = self.who.clone();
                let queued = quick.then_some(rules);
                self.lobby_request(id.clone(), queued, false, |conn| match quick {
                    true => LobbyCmd::QuickMatch { conn, name, rules, house, id },
                    false => LobbyCmd::CreateRoom { conn, name, rules, mark, id },
                })
                .await
            }
            ClientMessage::JoinRoom { room } => {
                let name = self.who.clone();
                self.lobby_request(id.clone(), None, false, |conn| LobbyCmd::JoinRoom {
                    conn,
                    name,
                    room,
                    id,
                })
                .await
            }
            ClientMessage::Spectate { room } => {
                self.lobby_request(id.clone(), None, true, |conn| LobbyCmd::Spectate { conn, room, id }).await
            }
            ClientMessage::Resume { token } => {
                self.lobby_request(id.clone(), None, false, |conn| LobbyCmd::Resume { conn, token, id }).await
            }
            ClientMessage::Move { row, col } => self.send_room(RoomRequest::Move { row, col }, id).await,
            ClientMessage::Resign {} => self.send_room(RoomRequest::Resign, id).await,
            ClientMessage::Rematch {} => self.send_room(RoomRequest::Rematch, id).await,
            ClientMessage::Leave {} => {
                let effect = self.membership.leave();
                self.apply(effect).await;
                None
            }
            ClientMessage::Sync {} => self.send_room(RoomRequest::Sync, id).await,
            ClientMessage::Ping {} => self.reply(encode(&ServerMessage::Pong { id })).await,
            ClientMessage::Who {} => {
                let me = self.me.clone()?;
                self.send_lobby(LobbyCmd::Who { conn: me, id }).await;
                None
            }
            // Boxed: every connection's future would otherwise carry its state.
            ClientMessage::Challenge { name, size, win } => {
                Box::pin(self.challenge(name, size, win, id)).await
            }
            ClientMessage::Accept { challenge } => {
                // Waiting for a game is no bar to accepting: the wait ends.
                if self.membership.status() == Status::Queued {
                    let effect = self.membership.leave();
                    self.apply(effect).await;
                    self.sync_presence();
                }
                let who = self.who.clone();
                self.lobby_request(id.clone(), None, false, |conn| LobbyCmd::Accept {
                    conn,
                    who,
                    challenge,
                    id,
                })
                .await
            }
            ClientMessage::Decline { challenge, reason } => {
                let me = self.me.clone()?;
                self.send_lobby(LobbyCmd::Decline { conn: me, challenge, reason, id }).await;
                None
            }
            ClientMessage::PlayHouse { size, win, level } => {
                let rules = match self.rules(size, win) {
                    Ok(rules) => rules,
                    Err((code, text)) => return self.reply(refusal(code, text, id)).await,
                };
                let (who, level) = (self.who.clone(), level.unwrap_or_default());
                self.lobby_request(id.clone(), None, false, |conn| LobbyCmd::PlayHouse {
                    conn,
                    who,
                    rules,
                    level,
                    id,
                })
                .await
            }
        }
    }

    /// `challenge`: a board, a free challenger, then the lobby finds the
    /// player. Challenging the house is playing it.
    async fn challenge(
        &mut self,
        name: String,
        size: Option<i64>,
        win: Option<i64>,
        id: Option<RequestId>,
    ) -> Option<End> {
        let rules = match self.rules(size, win) {
            Ok(rules) => rules,
            Err((code, text)) => return self.reply(refusal(code, text, id)).await,
        };
        if name_key(name.trim()) == HOUSE_NAME {
            let who = self.who.clone();
            let level = HouseLevel::default();
            return self
                .lobby_request(id.clone(), None, false, |conn| LobbyCmd::PlayHouse {
                    conn,
                    who,
                    rules,
                    level,
                    id,
                })
                .await;
        }
        if self.presence.is_none() {
            let text = "say hello with your name first: a challenge says who it is from";
            return self.reply(refusal(ErrorCode::InvalidName, text, id)).await;
        }
        if self.membership.status() != Status::Idle {
            let text = "you are in a game or waiting for one; challenge when you are free (leave first)";
            return self.reply(refusal(ErrorCode::Busy, text, id)).await;
        }
        let me = self.me.clone()?;
        self.send_lobby(LobbyCmd::Challenge { conn: me, ip: self.ip, name, rules, id }).await;
        None
    }

    /// Lists the connection in the lobby's directory under its current
    /// name (after each `hello` that gave it one).
    pub(super) async fn list(&mut self) {
        let Some(me) = self.me.clone() else { return };
        let presence = self.presence.get_or_insert_with(Default::default).clone();
        self.shown = presence.status();
        self.sync_presence();
        let who = self.who.clone();
        self.send_lobby(LobbyCmd::Online { conn: me, who, presence }).await;
    }

    /// `hello`: the protocol version, the name, then a guest or a sign-in.
    async fn hello(
        &mut self,
        name: String,
        protocol: Option<i64>,
        token: Option<String>,
        id: Option<RequestId>,
    ) -> Option<End> {
        if protocol.is_some_and(|p| p != i64::from(PROTOCOL_VERSION)) {
            let text = format!("this server speaks protocol {PROTOCOL_VERSION}");
            return self.reply(refusal(ErrorCode::UnsupportedProtocol, text, id)).await;
        }
        let name = name.trim();
        if let Err(text) = crate::text::check_name(name) {
            return self.reply(refusal(ErrorCode::InvalidName, text, id)).await;
        }
        if is_house(name) {
            return self.reply(refusal(ErrorCode::NameTaken, HOUSE_TAKEN, id)).await;
        }
        let end = match token {
            Some(token) => self.sign_in(name, &token, id).await,
            None => self.guest(name, id).await,
        };
        // Listed once it has a name (a refused first hello leaves it unnamed).
        if !Arc::ptr_eq(&self.who, &Identity::anonymous()) {
            self.list().await;
        }
        end
    }

    /// `register`: a valid name, then the account.
    async fn register_request(&mut self, name: String, bot: bool, id: Option<RequestId>) -> Option<End> {
        let name = name.trim();
        if let Err(text) = crate::text::check_name(name) {
            return self.reply(refusal(ErrorCode::InvalidName, text, id)).await;
        }
        if is_house(name) {
            return self.reply(refusal(ErrorCode::NameTaken, HOUSE_TAKEN, id)).await;
        }
        self.register(name, bot, id).await
    }

    /// `hello` without a token: a guest, unless an account owns the name.
    async fn guest(&mut self, name: &str, id: Option<RequestId>) -> Option<End> {
        if self.shared.store.enabled() {
            match self.shared.store.account(name).await {
                Ok(None) => {}
                Ok(Some((account, _))) => {
                    let text = format!(
                        "the account {:?} owns this name or one that looks like it; sign in with hello \
                         and its token, or choose another name",
                        account.name
                    );
                    return self.reply(refusal(ErrorCode::NameTaken, text, id)).await;
                }
                Err(_) => return self.reply(unavailable(id)).await,
            }
        }
        self.who = Identity::guest(name);
        None
    }

    /// `hello` with a token: this connection becomes the account, whose
    /// ratings join the book; or `auth_failed`, and it stays as it was.
    async fn sign_in(&mut self, name: &str, token: &str, id: Option<RequestId>) -> Option<End> {
        let found = match self.shared.store.account(name).await {
            Ok(found) => found,
            Err(StoreError::Disabled) => None,
            Err(_) => return self.reply(unavailable(id)).await,
        };
        // The name must be the account's own (ignoring case), not a look-alike.
        let found = found.filter(|(account, _)| name_key(&account.name) == name_key(name));
        let Some((account, _)) = found.filter(|(_, hash)| account::matches(token, hash)) else {
            let text = if self.shared.store.enabled() {
                "no account has this name and token; check both, or register the name"
            } else {
                "this server keeps no accounts (it runs with --database none); play as a guest"
            };
            return self.reply(refusal(ErrorCode::AuthFailed, text, id)).await;
        };
        self.shared.book.load(account.id, account.standings);
        self.who =
            Arc::new(Identity { name: account.name.clone(), account: Some(account.id), bot: account.bot });
        let msg = ServerMessage::Authenticated { name: account.name, bot: account.bot, id };
        self.reply(encode(&msg)).await
    }

    /// `register`: a new account, whose token is shown this once. Limited
    /// per address; a name that turns out taken does not count.
    async fn register(&mut self, name: &str, bot: bool, id: Option<RequestId>) -> Option<End> {
        if !self.shared.store.enabled() {
            let text = "this server keeps no accounts (it runs with --database none)";
            return self.reply(refusal(ErrorCode::AuthFailed, text, id)).await;
        }
        if let Err(wait) = self.shared.registrations.take(self.ip, std::time::Instant::now()) {
            // A name that is taken is refused as such, limited or not: it costs nothing.
            if let Ok(Some(_)) = self.shared.store.account(name).await {
                return self.reply(refusal(ErrorCode::NameTaken, taken(name), id)).await;
            }
            let text = "too many accounts registered from your address; try again later";
            let msg = ServerMessage::Error {
                code: ErrorCode::RateLimited,
                message: text.into(),
                id,
                retry_after_ms: Some(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
            };
            crate::net::metrics::refused(ErrorCode::RateLimited);
            return self.reply(encode(&msg)).await;
        }
        let token = account::new_secret("ttt_");
        match self.shared.store.register(name, bot, account::hash(&token)).await {
            Ok(account) => {
                let msg = ServerMessage::Registered { name: account.name, token, bot, id };
                self.reply(encode(&msg)).await
            }
            Err(StoreError::NameTaken) => {
                self.shared.registrations.refund(self.ip);
                self.reply(refusal(ErrorCode::NameTaken, taken(name), id)).await
            }
            Err(StoreError::Disabled) => {
                let text = "this server keeps no accounts (it runs with --database none)";
                self.reply(refusal(ErrorCode::AuthFailed, text, id)).await
            }
            Err(StoreError::Busy | StoreError::Unavailable) => {
                self.shared.registrations.refund(self.ip);
                self.reply(unavailable(id)).await
            }
        }
    }

    /// The rules a `quick_match`, `create_room`, `challenge` or
    /// `play_house` asks for, within the server's sizes; else the refusal.
    fn rules(&self, size: Option<i64>, win: Option<i64>) -> Result<Rules, (ErrorCode, String)> {
        Rules::checked(size, win, self.shared.config.min_size..=self.shared.config.max_size)
    }

    /// Sends a request that puts the connection somewhere new, if it is free
    /// to go; `cmd` builds it around this connection's handle.
    async fn lobby_request(
        &mut self,
        id: Option<RequestId>,
        queued: Option<Rules>,
        spectate: bool,
        cmd: impl FnOnce(ConnHandle) -> LobbyCmd,
    ) -> Option<End> {
        // Gone only while the connection closes at shutdown.
        let me = self.me.clone()?;
        // Claimed for this request before anything else: the lobby may be
        // claiming it for a challenge it sent (see `presence`).
        if !spectate && !self.claim() {
            let text = "a challenge you sent was just accepted; its game_started is on the way";
            return self.reply(refusal(ErrorCode::Busy, text, id)).await;
        }
        match self.membership.enter(queued, spectate) {
            Err(busy) => return self.reply(refusal(ErrorCode::Busy, busy, id)).await,
            // A room that closed meanwhile needs no leaving.
            Ok(Some(leaving)) => {
                let leave = RoomCmd::Request { conn: self.id, request: RoomRequest::Leave, id: None };
                if let Err(refused) = leaving.try_send(leave) {
                    let _ = to_room(&leaving, refused).await;
                }
            }
            Ok(None) => {}
        }
        self.send_lobby(cmd(me)).await;
        None
    }

    /// Hands `cmd` to the lobby, waiting only when its inbox is full.
    pub(super) async fn send_lobby(&self, cmd: LobbyCmd) {
        if let Err(mpsc::error::TrySendError::Full(cmd)) = self.shared.lobby.try_send(cmd) {
            // Boxed: every connection's future would otherwise carry the wait.
            let _ = Box::pin(self.shared.lobby.send(cmd)).await;
        }
    }

    /// Hands a request to the connection's room, or refuses it.
    async fn send_room(&mut self, request: RoomRequest, id: Option<RequestId>) -> Option<End> {
        let refused = match self.membership.room() {
            Ok(tx) => match tx.try_send(RoomCmd::Request { conn: self.id, request, id }) {
                // The usual case, on the path of every move: nothing to wait for.
                Ok(()) => return None,
                Err(refused) => match to_room(tx, refused).await {
                    Ok(()) => return None,
                    // The room closed before it read the request; its
                    // `room_closed` is on the way.
                    Err(id) => {
                        self.membership.room_gone();
                        (ROOM_CLOSED, id)
                    }
                },
            },
            Err(text) => (text, id),
        };
        self.reply(refusal(ErrorCode::NotInGame, refused.0, refused.1)).await
    }
}

/// Finishes handing a request to a room whose inbox refused it at once:
/// waits for space in a full inbox; gives the request's id back if the room
/// has closed.
async fn to_room(tx: &RoomLink, refused: TrySendError<RoomCmd>) -> Result<(), Option<RequestId>> {
    let gone = match refused {
        // Boxed: every connection's future would otherwise carry the wait.
        TrySendError::Full(cmd) => Box::pin(tx.send(cmd)).await.err(),
        TrySendError::Closed(cmd) => Some(cmd),
    };
    match gone {
        Some(RoomCmd::Request { id, .. }) => Err(id),
        _ => Ok(()),
    }
}

/// Whether `msg` starts something the store must keep (a game, an account,
/// a sign-in): refused with `unavailable` while the store cannot write.
fn needs_store(msg: &ClientMessage) -> bool {
    matches!(
        msg,
        ClientMessage::QuickMatch { .. }
            | ClientMessage::CreateRoom { .. }
            | ClientMessage::JoinRoom { .. }
            | ClientMessage::Challenge { .. }
            | ClientMessage::Accept { .. }
            | ClientMessage::PlayHouse { .. }
            | ClientMessage::Rematch {}
            | ClientMessage::Register { .. }
            | ClientMessage::Hello { token: Some(_), .. }
    )
}

/// When a client refused with `unavailable` should ask again.
pub(crate) const RETRY_UNAVAILABLE_MS: u64 = 2000;

/// The `unavailable` refusal: the store cannot write (or answer) now.
fn unavailable(id: Option<RequestId>) -> tokio_tungstenite::tungstenite::Utf8Bytes {
    crate::net::metrics::refused(ErrorCode::Unavailable);
    encode(&ServerMessage::Error {
        code: ErrorCode::Unavailable,
        message: "the server cannot save games or accounts right now (its database is not writable); \
                  games in progress go on; try again in a moment"
            .into(),
        id,
        retry_after_ms: Some(RETRY_UNAVAILABLE_MS),
    })
}

/// The `name_taken` refusal of `register`.
fn taken(name: &str) -> String {
    format!(
        "an account already has the name {name:?} or one that looks like it (names ignore case and \
         look-alike characters); choose another"
    )
}

/// Whether `name` is the house bot's, or looks like it.
fn is_house(name: &str) -> bool {
    name_key(name) == HOUSE_NAME || look_alike_key(name) == look_alike_key(HOUSE_NAME)
}

/// The `name_taken` refusal for the house bot's name.
const HOUSE_TAKEN: &str = "\"house\" is the house bot's name (and names that look like it); choose another";
