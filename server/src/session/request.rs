//! A connection's requests: each checked (names, sizes, where the connection
//! is, whether the store can keep what it starts) and turned into what the
//! lobby, the room or the store must do, or refused with a reason.

use std::sync::Arc;
use std::time::Duration;

use tictactoe_protocol::{ClientMessage, ErrorCode, HouseLevel, PROTOCOL_VERSION, RequestId, ServerMessage};

use super::organise::{Asked, organise};
use super::{Action, Actions, Session, World, one, refuse};
use crate::cmd::{Ask, Request as RoomRequest, RoomCmd};
use crate::core::account::{self, Identity, TokenHash, name_key};
use crate::core::presence::Status;
use crate::core::text::look_alike_key;
use crate::room::HOUSE_NAME;
use crate::store::{Account, StoreError};
use crate::tournament::TournamentAsk;
use tictactoe_protocol::tournament::Terms;
use tictactoe_protocol::{Fischer, Rules};

/// When a client refused with `unavailable` should ask again.
const RETRY_UNAVAILABLE_MS: u64 = 2000;

impl Session {
    /// Handles one decoded request.
    pub(super) fn on_request(
        &mut self,
        msg: ClientMessage,
        id: Option<RequestId>,
        world: &dyn Fn() -> World,
    ) -> Actions {
        if needs_store(&msg) && !world().can_write {
            return one(Action::Reply(unavailable(id)));
        }
        match msg {
            ClientMessage::Hello { name, protocol, token } => self.hello(name, protocol, token, id, world()),
            ClientMessage::Register { name, bot } => {
                let name = name.trim();
                if let Err(text) = crate::core::text::check_name(name) {
                    return refuse(ErrorCode::InvalidName, text, id);
                }
                if is_house(name) {
                    return refuse(ErrorCode::NameTaken, HOUSE_TAKEN, id);
                }
                if !world().store_enabled {
                    return refuse(ErrorCode::AuthFailed, NO_ACCOUNTS, id);
                }
                one(Action::Register { name: name.to_owned(), bot, id })
            }
            ClientMessage::QuickMatch { size, win, house_after_ms, level, clock } => {
                let rules = match self.rules(size, win, clock) {
                    Ok(rules) => rules,
                    Err((code, text)) => return refuse(code, text, id),
                };
                let after = house_after_ms.map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(0)));
                let house = after.map(|after| (after, level.unwrap_or_default()));
                let ask = Ask::QuickMatch { who: self.who.clone(), rules, house, id: id.clone() };
                self.lobby_request(id, Some(rules), false, ask)
            }
            ClientMessage::CreateRoom { size, win, mark, clock, host, players, opening, games } => {
                let rules = match self.rules(size, win, clock) {
                    Ok(rules) => rules,
                    Err((code, text)) => return refuse(code, text, id),
                };
                let organise = match organise(rules, Asked { host, players, opening, games }) {
                    Ok(organise) => organise.map(Box::new),
                    Err((code, text)) => return refuse(code, text, id),
                };
                let ask = Ask::CreateRoom { who: self.who.clone(), rules, mark, organise, id: id.clone() };
                // A host watches its room, and stays with it as a creator
                // waiting in its own room does: it leaves only by `leave`.
                self.lobby_request(id, None, false, ask)
            }
            ClientMessage::JoinRoom { room } => {
                let ask = Ask::JoinRoom { who: self.who.clone(), room, id: id.clone() };
                self.lobby_request(id, None, false, ask)
            }
            ClientMessage::Spectate { room } => {
                self.lobby_request(id.clone(), None, true, Ask::Spectate { room, id })
            }
            ClientMessage::Resume { token } => {
                self.lobby_request(id.clone(), None, false, Ask::Resume { token, id })
            }
            ClientMessage::Move { row, col } => {
                self.to_room(RoomRequest::Move { row, col, lag_ms: self.lag_ms }, id)
            }
            ClientMessage::Resign {} => self.to_room(RoomRequest::Resign, id),
            ClientMessage::Rematch {} => self.to_room(RoomRequest::Rematch, id),
            ClientMessage::Sync {} => self.to_room(RoomRequest::Sync, id),
            ClientMessage::Leave {} => {
                let effect = self.membership.leave();
                self.effect(effect)
            }
            ClientMessage::Ping {} => one(Action::Reply(ServerMessage::Pong { id })),
            ClientMessage::Who {} => one(Action::Lobby(Ask::Who { id })),
            ClientMessage::Challenge { name, size, win, clock } => self.challenge(name, size, win, clock, id),
            ClientMessage::Accept { challenge } => {
                let mut actions = Actions::new();
                // Waiting for a game is no bar to accepting: the wait ends.
                if self.membership.status() == Status::Queued {
                    let effect = self.membership.leave();
                    actions.extend(self.effect(effect));
                    actions.extend(self.sync_presence());
                }
                let ask = Ask::Accept { who: self.who.clone(), challenge, id: id.clone() };
                actions.extend(self.lobby_request(id, None, false, ask));
                actions
            }
            ClientMessage::Decline { challenge, reason } => {
                one(Action::Lobby(Ask::Decline { challenge, reason, id }))
            }
            ClientMessage::PlayHouse { size, win, level, clock } => {
                let rules = match self.rules(size, win, clock) {
                    Ok(rules) => rules,
                    Err((code, text)) => return refuse(code, text, id),
                };
                let level = level.unwrap_or_default();
                let ask = Ask::PlayHouse { who: self.who.clone(), rules, level, id: id.clone() };
                self.lobby_request(id, None, false, ask)
            }
            ClientMessage::TournamentCreate { name, size, win, clock, duration_ms, starts_in_ms } => {
                let checked = Terms::checked(&name, size, win, clock, duration_ms, &self.limits.sizes)
                    .and_then(|terms| {
                        Ok(TournamentAsk::Create { terms, starts_in_ms: Terms::starts_in(starts_in_ms)? })
                    });
                match checked {
                    Err(text) => refuse(ErrorCode::InvalidTournament, text, id),
                    Ok(ask) => self.tournament(ask, id),
                }
            }
            ClientMessage::Tournaments {} => one(Action::Tournament(TournamentAsk::List, id)),
            ClientMessage::TournamentJoin { tournament } => {
                self.tournament(TournamentAsk::Join(tournament), id)
            }
            ClientMessage::TournamentLeave { tournament } => {
                self.tournament(TournamentAsk::Leave(tournament), id)
            }
            ClientMessage::TournamentWatch { tournament } => {
                one(Action::Tournament(TournamentAsk::Watch(tournament), id))
            }
            ClientMessage::Berserk {} => self.to_room(RoomRequest::Berserk, id),
        }
    }

    /// A request for the connection's room, or its refusal.
    fn to_room(&self, request: RoomRequest, id: Option<RequestId>) -> Actions {
        match self.membership.room() {
            Ok(_) => one(Action::InRoom(RoomCmd::Request { conn: self.id, request, id })),
            Err(text) => refuse(ErrorCode::NotInGame, text, id),
        }
    }

    /// A tournament request that needs a signed-in account.
    fn tournament(&self, ask: TournamentAsk, id: Option<RequestId>) -> Actions {
        if self.who.account.is_none() {
            let text = "tournaments are for accounts: register, then hello with your token";
            return refuse(ErrorCode::AccountRequired, text, id);
        }
        one(Action::Tournament(ask, id))
    }

    /// `challenge`: a board, a free challenger, then the lobby finds the
    /// player. Challenging the house is playing it.
    fn challenge(
        &mut self,
        name: String,
        size: Option<i64>,
        win: Option<i64>,
        clock: Option<Fischer>,
        id: Option<RequestId>,
    ) -> Actions {
        let rules = match self.rules(size, win, clock) {
            Ok(rules) => rules,
            Err((code, text)) => return refuse(code, text, id),
        };
        if name_key(name.trim()) == HOUSE_NAME {
            let level = HouseLevel::default();
            let ask = Ask::PlayHouse { who: self.who.clone(), rules, level, id: id.clone() };
            return self.lobby_request(id, None, false, ask);
        }
        if self.presence.is_none() {
            let text = "say hello with your name first: a challenge says who it is from";
            return refuse(ErrorCode::InvalidName, text, id);
        }
        if self.membership.status() != Status::Idle {
            let text = "you are in a game or waiting for one; challenge when you are free (leave first)";
            return refuse(ErrorCode::Busy, text, id);
        }
        one(Action::Lobby(Ask::Challenge { who: self.who.clone(), ip: self.ip, name, rules, id }))
    }

    /// `hello`: the protocol version, the name, then a guest or a sign-in.
    fn hello(
        &mut self,
        name: String,
        protocol: Option<i64>,
        token: Option<String>,
        id: Option<RequestId>,
        world: World,
    ) -> Actions {
        if protocol.is_some_and(|p| p != i64::from(PROTOCOL_VERSION)) {
            let text = format!("this server speaks protocol {PROTOCOL_VERSION}");
            return refuse(ErrorCode::UnsupportedProtocol, text, id);
        }
        let name = name.trim();
        if let Err(text) = crate::core::text::check_name(name) {
            return refuse(ErrorCode::InvalidName, text, id);
        }
        if is_house(name) {
            return refuse(ErrorCode::NameTaken, HOUSE_TAKEN, id);
        }
        match token {
            Some(token) => one(Action::SignIn { name: name.to_owned(), token, id }),
            None if world.store_enabled => one(Action::CheckGuest { name: name.to_owned(), id }),
            None => self.guest_checked(name, Ok(None), id),
        }
    }

    /// The store's answer to [`Action::CheckGuest`]: a guest, unless an
    /// account owns the name.
    pub fn guest_checked(
        &mut self,
        name: &str,
        found: Result<Option<(Account, TokenHash)>, StoreError>,
        id: Option<RequestId>,
    ) -> Actions {
        match found {
            Ok(None) | Err(StoreError::Disabled) => {}
            Ok(Some((account, _))) => {
                let text = format!(
                    "the account {:?} owns this name or one that looks like it; sign in with hello \
                     and its token, or choose another name",
                    account.name
                );
                return self.listed(refuse(ErrorCode::NameTaken, text, id));
            }
            Err(_) => return self.listed(one(Action::Reply(unavailable(id)))),
        }
        self.who = Identity::guest(name);
        self.listed(Actions::new())
    }

    /// The store's answer to [`Action::SignIn`]: this connection becomes the
    /// account, with its ratings as the store has them, or `auth_failed` and
    /// it stays as it was.
    pub fn signed_in(
        &mut self,
        name: &str,
        token: &str,
        found: Result<Option<(Account, TokenHash)>, StoreError>,
        id: Option<RequestId>,
        world: World,
    ) -> Actions {
        let found = match found {
            Ok(found) => found,
            Err(StoreError::Disabled) => None,
            Err(_) => return self.listed(one(Action::Reply(unavailable(id)))),
        };
        // The name must be the account's own (ignoring case), not a look-alike.
        let found = found.filter(|(account, _)| name_key(&account.name) == name_key(name));
        let Some((account, _)) = found.filter(|(_, hash)| account::matches(token, hash)) else {
            let text = if world.store_enabled {
                "no account has this name and token; check both, or register the name"
            } else {
                NO_ACCOUNTS_GUEST
            };
            return self.listed(refuse(ErrorCode::AuthFailed, text, id));
        };
        let ratings = account.standings.iter().map(|(rules, s)| (*rules, s.shown())).collect();
        let who =
            Identity { name: account.name.clone(), account: Some(account.id), bot: account.bot, ratings };
        self.who = Arc::new(who);
        let msg = ServerMessage::Authenticated { name: account.name, bot: account.bot, id };
        self.listed(one(Action::Reply(msg)))
    }

    /// After a `hello`: listed in the lobby's directory under its current
    /// name, once it has one (a refused first hello leaves it unnamed).
    fn listed(&mut self, mut actions: Actions) -> Actions {
        if Arc::ptr_eq(&self.who, &Identity::anonymous()) {
            return actions;
        }
        let presence = self.presence.get_or_insert_with(Default::default).clone();
        self.shown = presence.status();
        actions.extend(self.sync_presence());
        actions.push(Action::Online { who: self.who.clone(), presence });
        actions
    }

    /// The account a signed-in connection is.
    #[cfg(test)]
    pub fn account(&self) -> Option<account::AccountId> {
        self.who.account
    }

    /// The terms a `quick_match`, `create_room`, `challenge` or
    /// `play_house` asks for, within the server's sizes (the decoder
    /// checked the clock); else the refusal.
    fn rules(
        &self,
        size: Option<i64>,
        win: Option<i64>,
        clock: Option<Fischer>,
    ) -> Result<Rules, (ErrorCode, String)> {
        Ok(Rules::checked(size, win, self.limits.sizes.clone())?.with_clock(clock))
    }

    /// A request that puts the connection somewhere new (`ask`), if it is
    /// free to go.
    fn lobby_request(
        &mut self,
        id: Option<RequestId>,
        queued: Option<Rules>,
        spectate: bool,
        ask: Ask,
    ) -> Actions {
        let mut actions = Actions::new();
        // Claimed for this request before anything else: the lobby may be
        // claiming it for a challenge it sent (see `presence`).
        if !spectate && !self.claim(&mut actions) {
            let text = "a game was just made for you (a challenge you sent was accepted, or a tournament paired you); its game_started is on the way";
            actions.extend(refuse(ErrorCode::Busy, text, id));
            return actions;
        }
        match self.membership.enter(queued, spectate) {
            Err(busy) => actions.extend(refuse(ErrorCode::Busy, busy, id)),
            Ok(leaving) => {
                // A room that closed meanwhile needs no leaving.
                if let Some(link) = leaving {
                    let leave = RoomCmd::Request { conn: self.id, request: RoomRequest::Leave, id: None };
                    actions.push(Action::Room(link, leave));
                }
                actions.push(Action::Lobby(ask));
            }
        }
        actions
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
            | ClientMessage::TournamentCreate { .. }
            | ClientMessage::TournamentJoin { .. }
            | ClientMessage::TournamentLeave { .. }
    )
}

/// The `unavailable` refusal: the store cannot write (or answer) now.
pub(crate) fn unavailable(id: Option<RequestId>) -> ServerMessage {
    ServerMessage::Error {
        code: ErrorCode::Unavailable,
        message: "the server cannot save games or accounts right now (its database is not writable); \
                  games in progress go on; try again in a moment"
            .into(),
        id,
        retry_after_ms: Some(RETRY_UNAVAILABLE_MS),
        game_id: None,
    }
}

/// The `name_taken` refusal of `register`.
pub(crate) fn taken(name: &str) -> String {
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

/// `register` on a server without a database.
pub(crate) const NO_ACCOUNTS: &str = "this server keeps no accounts (it runs with --database none)";

/// `hello` with a token on a server without a database.
const NO_ACCOUNTS_GUEST: &str =
    "this server keeps no accounts (it runs with --database none); play as a guest";
