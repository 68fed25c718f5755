//! One connection's logic as a state machine: a frame read, a signal from
//! the lobby or a room, an answer from the store, or the end, in; what to do
//! out ([`Action`]). It holds who the connection is, where it is
//! ([`membership`]), its rate limit and its published status; it sends
//! nothing and waits for nothing. Its shell, [`crate::net::ws`], owns the
//! socket and carries the actions out.

pub(crate) mod admission;
pub(crate) mod membership;
mod organise;
pub(crate) mod rate;
pub(crate) mod registrations;
mod request;
pub(crate) mod shared;

pub(crate) use request::{NO_ACCOUNTS, taken, unavailable};
pub(crate) use shared::Shared;

use std::net::IpAddr;
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use smallvec::SmallVec;
use tokio::time::Instant;

use tictactoe_protocol::{ClientFrame, ErrorCode, RequestId, ServerMessage, peek_id};

use crate::cmd::{Ask, Outbound, Request as RoomRequest, RoomCmd, RoomLink};
use crate::core::account::Identity;
use crate::core::ids::ConnId;
use crate::core::presence::{Presence, Status};
use crate::session::rate::{RateLimit, RateVerdict};
use membership::{Effect, Membership};

/// Why a connection ends, as the session or its shell decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The socket failed or ended without a close frame.
    Gone,
    /// The client sent a close frame: it is answered with its own code.
    Closed,
    /// Server shutdown: deliver what is queued, then close with 1012 (games
    /// saved, come back) or, without a database, 1001.
    Shutdown,
    /// Close with this code and reason.
    Close(u16, &'static str),
    /// Drop without ceremony (slow or silent client).
    Drop,
}

impl End {
    /// The words for the log.
    pub fn describe(&self) -> &'static str {
        match self {
            End::Gone => "client left",
            End::Closed => "client closed",
            End::Shutdown => "server shutdown",
            End::Close(_, reason) => reason,
            End::Drop => "client too slow or silent",
        }
    }
}

/// One thing the shell does for the session, in order.
#[derive(Debug)]
#[allow(missing_docs)] // fields named for what they hold: the docs say the rest
pub enum Action {
    /// Send this message to the client (an `error` is counted by its code).
    Reply(ServerMessage),
    /// Send this `rate_limited` refusal of a frame, uncounted: a flood would
    /// otherwise be counted frame by frame.
    Throttled(ServerMessage),
    /// Hand the lobby what the connection asks or says, waiting only while
    /// its inbox is full.
    Lobby(Ask),
    /// Hand the lobby this if its inbox has room (lost only when the
    /// lobby is overwhelmed; an accept then finds the challenger busy).
    LobbyIfRoom(Ask),
    /// List the connection in the lobby's directory under `who`.
    Online {
        /// Its name and account.
        who: Arc<Identity>,
        /// Where it is, as it keeps it up to date.
        presence: Arc<Presence>,
    },
    /// Hand the room the connection is in this request, waiting for room in
    /// its inbox; a room that has closed is reported with
    /// [`Session::room_closed`]. The path of every move: the link is the
    /// session's own ([`Session::room`]), not a copy.
    InRoom(RoomCmd),
    /// Hand this room the request, waiting for room in its inbox; a room
    /// that has closed needs nothing.
    Room(RoomLink, RoomCmd),
    /// Hand the room the connection's last word even over its inbox's bound.
    RoomLastWord(RoomLink, RoomCmd),
    /// `hello` with a token: look up the account named `name`, then
    /// [`Session::signed_in`].
    SignIn { name: String, token: String, id: Option<RequestId> },
    /// `hello` as a guest: look up whether an account owns `name`, then
    /// [`Session::guest_checked`].
    CheckGuest { name: String, id: Option<RequestId> },
    /// `register`: make the account (under the per-address limit) and
    /// answer; nothing about the session changes.
    Register {
        /// The name, checked.
        name: String,
        /// Whether it is a bot's.
        bot: bool,
        id: Option<RequestId>,
    },
    /// Hand the tournament task this request of a signed-in player.
    Tournament(crate::tournament::TournamentAsk, Option<RequestId>),
    /// End the connection.
    End(End),
}

/// What one input asks for: usually nothing or one thing.
pub type Actions = SmallVec<[Action; 1]>;

/// What the session reads about the world with each request.
#[derive(Debug, Clone, Copy)]
pub struct World {
    /// The store can write: requests that start games or accounts are taken.
    pub can_write: bool,
    /// The server keeps accounts and records at all.
    pub store_enabled: bool,
}

/// The limits a session checks requests against.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Board sizes this server plays.
    pub sizes: RangeInclusive<usize>,
    /// Frames per second a client may send (0: no limit).
    pub rate: u32,
}

/// What a frame read from the socket was.
#[derive(Debug)]
pub enum Frame<'a> {
    /// A text frame.
    Text(&'a str),
    /// A binary frame (refused).
    Binary,
    /// A ping or pong (counted, never answered with an error).
    Control,
}

/// One connection's state.
#[derive(Debug)]
pub struct Session {
    id: ConnId,
    /// The peer's address: challenges are limited per address.
    ip: IpAddr,
    /// Who the connection is: a guest's name, or a signed-in account.
    who: Arc<Identity>,
    membership: Membership,
    /// Where the connection is, for the lobby's directory: made when it is
    /// first listed (its `hello`).
    presence: Option<Arc<Presence>>,
    /// The status last written to `presence`.
    shown: Status,
    rate: RateLimit,
    limits: Arc<Limits>,
    /// The last WebSocket ping's round trip, in ms (0 before one).
    lag_ms: u32,
}

impl Session {
    /// A new connection from `ip`, at `now`.
    pub fn new(id: ConnId, ip: IpAddr, limits: Arc<Limits>, now: Instant) -> Session {
        Session {
            id,
            ip,
            who: Identity::anonymous(),
            membership: Membership::default(),
            presence: None,
            shown: Status::Idle,
            rate: RateLimit::new(limits.rate, now),
            limits,
            lag_ms: 0,
        }
    }

    /// A ping's answer came back after `round_trip`: the lag a Fischer
    /// clock credits this connection's moves (at most 250 ms each).
    pub fn measured(&mut self, round_trip: Duration) {
        self.lag_ms = u32::try_from(round_trip.as_millis()).unwrap_or(u32::MAX);
    }

    /// Who the connection is.
    pub fn who(&self) -> Arc<Identity> {
        self.who.clone()
    }

    /// Where it is, once it said who it is.
    pub fn presence(&self) -> Option<Arc<Presence>> {
        self.presence.clone()
    }

    /// The peer's address: registrations are limited per address.
    pub fn ip(&self) -> IpAddr {
        self.ip
    }

    /// A frame read at `now`.
    /// `world` is asked only by requests that need the store (never by a move).
    pub fn on_frame(&mut self, frame: Frame<'_>, now: Instant, world: impl Fn() -> World) -> Actions {
        let (text, control) = match frame {
            Frame::Text(text) => (Some(text), false),
            Frame::Binary => (None, false),
            Frame::Control => (None, true),
        };
        // Pings and pongs count toward the limit (a ping flood costs as much
        // as any other), but a refused one gets no `error`.
        match self.rate.check(now) {
            RateVerdict::Allow | RateVerdict::Refuse(_) if control => return Actions::new(),
            RateVerdict::Allow => {}
            RateVerdict::Refuse(wait) => {
                let id = text.and_then(peek_id);
                let rate = self.limits.rate;
                let retry_after_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
                let message = format!(
                    "more than {rate} messages per second; wait {retry_after_ms} ms, slow down, or be disconnected"
                );
                let error = ServerMessage::Error {
                    code: ErrorCode::RateLimited,
                    message,
                    id,
                    retry_after_ms: Some(retry_after_ms),
                    game_id: None,
                };
                return one(Action::Throttled(error));
            }
            RateVerdict::Close => return one(Action::End(End::Close(1008, "rate limit exceeded"))),
        }
        let Some(text) = text else {
            let text = "binary frames are not supported; send JSON text frames";
            return refuse(ErrorCode::BadMessage, text, None);
        };
        match ClientFrame::decode(text) {
            Ok(frame) => {
                let mut actions = self.on_request(frame.message, frame.id, &world);
                actions.extend(self.sync_presence());
                actions
            }
            Err(e) => refuse(e.code, e.message, e.id),
        }
    }

    /// The room the connection is in: where [`Action::InRoom`] goes.
    pub fn room(&self) -> Option<&RoomLink> {
        self.membership.room().ok()
    }

    /// A request to the room turned out to find it closed: its
    /// `room_closed` is on the way; the request is refused.
    pub fn room_closed(&mut self, id: Option<RequestId>) -> Actions {
        self.membership.room_gone();
        let mut actions = refuse(ErrorCode::NotInGame, crate::room::ROOM_CLOSED, id);
        actions.extend(self.sync_presence());
        actions
    }

    /// A signal from the lobby or a room, from the connection's queue.
    pub fn on_signal(&mut self, item: Outbound) -> Actions {
        if let Outbound::Restart = item {
            // Its room went on elsewhere (or will): the player resumes there.
            return one(Action::End(End::Close(1012, "the instance running this game restarted; resume")));
        }
        if let Outbound::Rated { account, rules, shown } = item {
            if self.who.account != Some(account) {
                return Actions::new();
            }
            self.who = Arc::new(self.who.rated(rules, shown));
            // The lobby lists it with its rating (a challenge shows it).
            let listed = self.presence.is_some();
            return listed.then_some(Action::LobbyIfRoom(Ask::Rated { rules, shown })).into_iter().collect();
        }
        let effect = self.membership.signal(item);
        let mut actions: Actions = self.sync_presence().into_iter().collect();
        match effect {
            Effect::Replaced => actions.push(Action::End(End::Close(4000, "replaced"))),
            effect => actions.extend(self.room_word(effect)),
        }
        actions
    }

    /// The connection ends: what the room and the lobby must hear.
    pub fn close(&mut self) -> Actions {
        let effect = self.membership.close();
        let mut actions = self.effect(effect);
        if self.presence.is_some() {
            actions.push(Action::Lobby(Ask::Offline));
        }
        actions
    }

    /// Carries out an effect of `leave` or of the connection's end.
    fn effect(&self, effect: Effect) -> Actions {
        match effect {
            Effect::Cancel(rules) => one(Action::Lobby(Ask::Cancel { rules })),
            effect => self.room_word(effect).into_iter().collect(),
        }
    }

    /// A room's part of an effect: the connection's last word to it.
    fn room_word(&self, effect: Effect) -> Option<Action> {
        let conn = self.id;
        match effect {
            Effect::Leave(link) => {
                let leave = RoomCmd::Request { conn, request: RoomRequest::Leave, id: None };
                Some(Action::RoomLastWord(link, leave))
            }
            Effect::Disconnect(link) => Some(Action::RoomLastWord(link, RoomCmd::Disconnected { conn })),
            Effect::None | Effect::Replaced | Effect::Cancel(_) => None,
        }
    }

    /// Claims the connection for a request of its own that puts it in a
    /// game; false when the lobby has just claimed it for a challenge it
    /// sent. Unlisted connections cannot be claimed by the lobby.
    fn claim(&mut self, actions: &mut Actions) -> bool {
        let Some(p) = &self.presence else { return true };
        if self.membership.status() != Status::Idle {
            return true;
        }
        match p.swap(Status::Idle, Status::Pending) {
            Ok(()) => {
                self.shown = Status::Pending;
                actions.extend(self.report(Status::Idle, Status::Pending));
                true
            }
            Err(found) => {
                self.shown = found;
                found != Status::Drafted
            }
        }
    }

    /// The connection moved from `old` to `new`: with open challenges, the
    /// lobby hears it and ends those that cannot be played now: all of
    /// them when a game starts, those it sent when it leaves idle (a
    /// challenger is drafted only from idle; a player waiting for a game
    /// may still accept). Statuses are written before the count is read,
    /// as the lobby counts a challenge before it reads statuses.
    fn report(&self, old: Status, new: Status) -> Option<Action> {
        use tictactoe_protocol::OnlineStatus::Playing;
        let all = new.shown() == Playing && old.shown() != Playing;
        let left_idle = old == Status::Idle && new != Status::Idle;
        if !all && !left_idle {
            return None;
        }
        let challenged = self.presence.as_ref().is_some_and(|p| p.challenges() > 0);
        challenged.then_some(Action::LobbyIfRoom(Ask::Engaged { all }))
    }

    /// Writes where the connection now is for the lobby; one that left idle
    /// with open challenges tells the lobby, which ends them.
    fn sync_presence(&mut self) -> Option<Action> {
        let p = self.presence.as_ref()?;
        let now = self.membership.status();
        if now == self.shown {
            return None;
        }
        match p.swap(self.shown, now) {
            Ok(()) => {
                let old = std::mem::replace(&mut self.shown, now);
                self.report(old, now)
            }
            // Drafted: the room's signal is on its way, and this runs again.
            Err(found) => {
                self.shown = found;
                None
            }
        }
    }
}

/// One action.
fn one(action: Action) -> Actions {
    let mut actions = Actions::new();
    actions.push(action);
    actions
}

/// An `error` reply.
fn refuse(code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) -> Actions {
    one(Action::Reply(ServerMessage::error(code, message, id)))
}

#[cfg(test)]
mod tests;
