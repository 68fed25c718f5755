//! What the router does with a message from another instance: hands a
//! ghost here its connection's words, and a connection here what its room
//! there said.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::Router;
use crate::cluster::relay::{self, Envelope, GhostCmd, Outgoing, Wire};
use crate::cmd::{LobbyCmd, Outbound};
use crate::core::ids::{ALONE, ConnId};

impl Router {
    /// Handles one message from another instance.
    pub(super) fn incoming(&mut self, env: Envelope) {
        let Envelope { from, run, msgs } = env;
        if self.runs.get(&from).is_some_and(|known| *known != run) {
            tracing::info!(instance = %from, "an instance restarted; what its last run had here is let go");
            self.let_go(&from, true);
        }
        self.runs.insert(from.clone(), run);
        self.stopped.remove(&from);
        self.heard(&from);
        for msg in msgs {
            self.message(&from, msg);
        }
    }

    /// Handles one of the messages of an envelope from `from`.
    fn message(&mut self, from: &Arc<str>, msg: Wire) {
        let from = from.clone();
        match msg {
            Wire::Ask { conn, ask } => {
                let key = (from.clone(), conn);
                let (queue_len, lobby, out) = (self.queue_len, &self.lobby, &self.out);
                let ghost = self.ghosts.entry(key).or_insert_with(|| {
                    relay::ghost(from.clone(), conn, queue_len, lobby.clone(), out.clone())
                });
                if let Err(mpsc::error::SendError(GhostCmd::Ask(ask))) = ghost.send(GhostCmd::Ask(ask)) {
                    // Its ghost had ended: a new one takes it.
                    let ghost = relay::ghost(from.clone(), conn, queue_len, lobby.clone(), out.clone());
                    let _ = ghost.send(GhostCmd::Ask(ask));
                    self.ghosts.insert((from, conn), ghost);
                }
            }
            Wire::Request { conn, request, id } => {
                let key = (from, conn);
                if let Some(ghost) = self.ghosts.get(&key) {
                    if ghost.send(GhostCmd::Request { request, id }).is_err() {
                        self.ghosts.remove(&key);
                    }
                }
            }
            Wire::Gone { conn } => {
                if let Some(ghost) = self.ghosts.remove(&(from, conn)) {
                    let _ = ghost.send(GhostCmd::Gone);
                }
            }
            Wire::Heal { conn } => {
                if let Some(ghost) = self.ghosts.get(&(from, conn)) {
                    let _ = ghost.send(GhostCmd::Heal);
                }
            }
            Wire::Pair { conn, rules, host } => {
                let conn = ConnId::new(ALONE, conn);
                self.outputs.push(super::Output::Lobby(LobbyCmd::Paired { conn, rules, host }));
            }
            Wire::TournamentPair(pairing) => {
                self.outputs.push(super::Output::Lobby(LobbyCmd::TournamentPaired(pairing)));
            }
            Wire::Out { conn, item } => self.out_item(from, conn, item),
            // Each connection's copy shares the frame's bytes.
            Wire::Fanout { conns, frame } => {
                for conn in conns {
                    self.out_item(from.clone(), conn, Outbound::Frame(frame.clone()));
                }
            }
        }
    }

    /// An item of connection `conn`'s queue, from its ghost on `from`.
    fn out_item(&mut self, from: Arc<str>, conn: u64, item: Outbound<()>) {
        // Only from an instance it has a ghost on: one it forgot (gone,
        // then back with a stale copy) says nothing to it any more.
        let delivered = match self.relayed.get_mut(&conn).filter(|a| a.ghosts.contains(&from)) {
            Some(away) => {
                match &item {
                    Outbound::Frame(text) => {
                        if text.as_str().starts_with(relay::GAME_OVER) {
                            away.over = true;
                        } else if text.as_str().starts_with(relay::GAME_STARTED) {
                            away.over = false;
                        }
                    }
                    Outbound::Live { .. } | Outbound::Rated { .. } | Outbound::Restart => {}
                    // In a room there: its instance's end concerns it.
                    Outbound::Entered { .. } | Outbound::Drafted { .. } => {
                        away.over = false;
                        away.asked = None;
                        away.unsure = None;
                        away.at = Some(from.clone());
                    }
                    // Its ask there went nowhere.
                    Outbound::Refused => {
                        away.asked = None;
                        away.unsure = None;
                        if away.at.as_ref() == Some(&from) {
                            away.at = None;
                        }
                    }
                    // Out of its room (unless it asked for more meanwhile).
                    Outbound::Released { .. } | Outbound::Replaced { .. } => {
                        if away.asked.is_none() && away.at.as_ref() == Some(&from) {
                            away.at = None;
                        }
                    }
                }
                away.conn.send(relay::outbound(item, &from, &self.out))
            }
            None => false,
        };
        if !delivered {
            // Nobody here to take it: its ghost there can go.
            if let Some(away) = self.relayed.get_mut(&conn) {
                away.ghosts.retain(|g| *g != from);
            }
            let _ = self.out.try_send(Outgoing { to: from, msg: Wire::Gone { conn } });
        }
    }
}
