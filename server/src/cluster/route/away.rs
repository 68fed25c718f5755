//! This instance's connections with ghosts elsewhere: what each asked
//! where, sent on and answered here when the other instance cannot.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tictactoe_protocol::{ErrorCode, RequestId, ServerMessage};

use super::{Output, Router};
use crate::cluster::relay::{Outgoing, Wire};
use crate::cmd::{Ask, ConnHandle, LobbyCmd, Outbound, encode};
use crate::core::codes;

/// A connection here with a ghost on other instances: in a room (or a
/// queue) there, or with challenges there.
pub(super) struct Away {
    pub(super) conn: ConnHandle,
    /// The instance of its room, queue or entry on its way, if elsewhere.
    pub(super) at: Option<Arc<str>>,
    /// What it asked there, until the first answer (or, for a queue, until
    /// it is paired): if that instance goes meanwhile, it is answered here.
    pub(super) asked: Option<Ask>,
    /// Every instance with a ghost of it.
    pub(super) ghosts: Vec<Arc<str>>,
    /// Whether the game it played there ended and it heard so (nothing to
    /// heal after Redis was away).
    pub(super) over: bool,
    /// Since when its ask waits on an instance that restarted meanwhile:
    /// it may have reached the new run (which answers) or the old one
    /// (which never will: answered here after [`UNSURE`]).
    pub(super) unsure: Option<Instant>,
}

/// How long an ask that may have reached an instance's old run waits for
/// its new run's answer before it is answered here.
pub(super) const UNSURE: Duration = Duration::from_secs(2);

impl Away {
    fn new(conn: ConnHandle) -> Away {
        Away { conn, at: None, asked: None, ghosts: Vec::new(), over: false, unsure: None }
    }

    fn ghost_at(&mut self, instance: &Arc<str>) {
        if !self.ghosts.contains(instance) {
            self.ghosts.push(instance.clone());
        }
    }
}

impl Router {
    /// What a connection here says to the instances it went to: leaving a
    /// queue it moved to, leaving idle (its challenges there end), closing.
    pub(super) fn follow(&mut self, conn: ConnHandle, ask: Ask) {
        let seq = conn.id.seq();
        let Some(away) = self.relayed.get_mut(&seq) else { return };
        match ask {
            Ask::Cancel { .. } => {
                if let (Some(at), Some(Ask::Requeue { .. })) = (&away.at, &away.asked) {
                    let _ = self.out.try_send(Outgoing { to: at.clone(), msg: Wire::Ask { conn: seq, ask } });
                    away.asked = None;
                    away.at = None;
                }
            }
            Ask::Offline => {
                for to in away.ghosts.clone() {
                    let _ = self.out.try_send(Outgoing { to, msg: Wire::Gone { conn: seq } });
                }
                // Without the bus the word is lost: kept, the connection's
                // ghosts hear of its end from the sweep once the bus is back.
                if self.up {
                    self.relayed.remove(&seq);
                }
            }
            ask => {
                for to in away.ghosts.clone() {
                    let msg = Wire::Ask { conn: seq, ask: ask.clone() };
                    let _ = self.out.try_send(Outgoing { to, msg });
                }
            }
        }
    }

    /// Sends the connection's `ask` to instance `to`, where its room (or
    /// queue) will be, keeping it until answered.
    pub(super) fn send_enter(&mut self, conn: ConnHandle, to: Arc<str>, ask: Ask) {
        if !self.alive(&to) {
            return self.answer_here(conn, ask);
        }
        let seq = conn.id.seq();
        let away = self.relayed.entry(seq).or_insert_with(|| Away::new(conn.clone()));
        away.conn = conn;
        away.at = Some(to.clone());
        away.asked = Some(ask.clone());
        away.unsure = None;
        away.ghost_at(&to);
        let _ = self.out.try_send(Outgoing { to, msg: Wire::Ask { conn: seq, ask } });
    }

    /// Sends the connection's `ask` about challenges to instance `to`.
    pub(super) fn send_aside(&mut self, conn: ConnHandle, to: Arc<str>, ask: Ask) {
        if !self.alive(&to) {
            return self.answer_here(conn, ask);
        }
        let seq = conn.id.seq();
        let away = self.relayed.entry(seq).or_insert_with(|| Away::new(conn.clone()));
        away.ghost_at(&to);
        let _ = self.out.try_send(Outgoing { to, msg: Wire::Ask { conn: seq, ask } });
    }

    /// Answers here what another instance cannot: a `resume` waits for
    /// adoption here, a moved queue entry comes back to this instance's
    /// queue, `join_room` and `spectate` find no room, a challenge no
    /// player, a `decline` no challenge.
    pub(super) fn answer_here(&mut self, conn: ConnHandle, ask: Ask) {
        match ask {
            Ask::Resume { token, id } => {
                self.outputs.push(Output::Lobby(LobbyCmd::Park { conn, token, id, looks: 0 }))
            }
            ask @ Ask::Requeue { .. } => self.outputs.push(Output::Lobby(LobbyCmd::Ask { conn, ask })),
            Ask::JoinRoom { room, id, .. } | Ask::Spectate { room, id } => {
                let code = codes::normalize_room_code(&room);
                refuse_here(&conn, ErrorCode::RoomNotFound, codes::no_room(&code), id);
                conn.send(Outbound::Refused);
            }
            Ask::Challenge { name, id, .. } => {
                let (code, text) = crate::cmd::player_not_found(&name);
                refuse_here(&conn, code, text, id);
            }
            Ask::Decline { challenge, id, .. } => {
                let shown: String = challenge.chars().take(40).collect();
                refuse_here(&conn, ErrorCode::ChallengeNotFound, format!("no open challenge {shown:?}"), id);
            }
            _ => {}
        }
    }

    /// A message that cannot go out while Redis is down: a request that
    /// waits for an answer is answered here.
    pub(super) fn undeliverable(&mut self, msg: Outgoing) {
        let Wire::Ask { conn, .. } = msg.msg else { return };
        let Some(away) = self.relayed.get_mut(&conn) else { return };
        if let Some(ask) = away.asked.take() {
            away.at = None;
            let conn = away.conn.clone();
            self.answer_here(conn, ask);
        }
    }
}

/// Refuses a connection's request here, as its lobby would.
fn refuse_here(conn: &ConnHandle, code: ErrorCode, text: String, id: Option<RequestId>) {
    crate::metrics::refused(code);
    conn.frame(&encode(&ServerMessage::error(code, text, id)));
}
