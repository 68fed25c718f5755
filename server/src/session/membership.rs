//! Where one connection is — nowhere, on its way through the lobby, in the
//! matchmaking queue, or in a room (seated or watching) — as a plain state
//! machine. The connection's I/O loop asks it what a request may do and tells
//! it the signals that the lobby and rooms send; it answers with what to do.

use std::sync::Arc;

use crate::cmd::{Outbound, RoomLink};
use crate::core::presence::Status;
use crate::room::Rules;

/// The refusal for a room request from a connection that is in no room.
pub const NOT_IN_GAME: &str = "not in a game; send quick_match, create_room or join_room first";

/// Where the connection stands.
#[derive(Debug, Default)]
enum Place {
    #[default]
    Idle,
    /// A request is with the lobby, or (`queued` holds the size of a quick
    /// match) the connection waits in the matchmaking queue.
    Lobby {
        queued: Option<Rules>,
        /// `leave` arrived before the lobby answered.
        leave: bool,
        /// The request was `spectate`: the room it enters is free to leave.
        spectate: bool,
    },
    /// In a room; `free` when leaving it for another would lose nothing
    /// (spectating, or the game is over); `live` while a game it plays in
    /// is in progress (seated, not free, not live: waiting for an opponent).
    Room { code: Arc<str>, tx: RoomLink, free: bool, live: bool },
}

/// What the connection must do after a signal, a `leave` or its end.
#[derive(Debug)]
pub enum Effect {
    /// Nothing.
    None,
    /// Tell the lobby to take it out of the queue for this size.
    Cancel(Rules),
    /// Send `leave` to this room.
    Leave(RoomLink),
    /// Tell this room the connection is gone.
    Disconnect(RoomLink),
    /// Close with 4000: another connection took the seat.
    Replaced,
}

/// A connection's membership.
#[derive(Debug, Default)]
pub struct Membership {
    place: Place,
    /// The room left implicitly by the last `enter`: its `Released` is
    /// still on the way and must not end a stay in the same room that the
    /// lobby may have granted first (`spectate R`, then `join_room R`).
    leaving: Option<Arc<str>>,
}

impl Membership {
    /// A request that goes to the lobby (`quick_match` with the size it
    /// queues for, `create_room`, `join_room`, `spectate`, `resume`). Allowed
    /// when the connection is free to go: then it is on its way, and the
    /// room it is leaving implicitly, if any, is returned. Refused with the
    /// `busy` text otherwise.
    pub fn enter(&mut self, queued: Option<Rules>, spectate: bool) -> Result<Option<RoomLink>, &'static str> {
        let leaving = match &self.place {
            Place::Idle => None,
            // A finished game or a watched room is left implicitly.
            Place::Room { free: true, tx, code, .. } => {
                self.leaving = Some(code.clone());
                Some(tx.clone())
            }
            Place::Lobby { queued: Some(_), .. } => {
                return Err("already waiting in the matchmaking queue; send leave first");
            }
            Place::Lobby { .. } => return Err("a previous request is still being handled"),
            Place::Room { .. } => {
                return Err(
                    "already in a room with a game in progress or waiting for an opponent; send leave first, or sync for its state",
                );
            }
        };
        self.place = Place::Lobby { queued, leave: false, spectate };
        Ok(leaving)
    }

    /// Where the connection is, as `who` lists it.
    pub fn status(&self) -> Status {
        match &self.place {
            Place::Idle | Place::Room { free: true, .. } => Status::Idle,
            Place::Lobby { spectate: true, .. } => Status::Idle,
            Place::Lobby { queued: Some(_), .. } => Status::Queued,
            Place::Lobby { .. } => Status::Pending,
            Place::Room { live: true, .. } => Status::Playing,
            Place::Room { .. } => Status::Queued,
        }
    }

    /// The room a request such as `move` goes to, or the `not_in_game` text.
    pub fn room(&self) -> Result<&RoomLink, &'static str> {
        match &self.place {
            Place::Room { tx, .. } => Ok(tx),
            Place::Lobby { queued: Some(_), .. } => {
                Err("still waiting for an opponent; wait for game_started")
            }
            _ => Err(NOT_IN_GAME),
        }
    }

    /// The room turned out to be closed when a request was sent to it.
    pub fn room_gone(&mut self) {
        if matches!(self.place, Place::Room { .. }) {
            self.place = Place::Idle;
        }
    }

    /// `leave`: out of the queue or the room now, or as soon as the lobby answers.
    pub fn leave(&mut self) -> Effect {
        match &mut self.place {
            Place::Idle => Effect::None,
            Place::Lobby { queued: Some(rules), .. } => {
                let rules = *rules;
                self.place = Place::Idle;
                Effect::Cancel(rules)
            }
            Place::Lobby { leave, .. } => {
                *leave = true;
                Effect::None
            }
            Place::Room { .. } => match std::mem::take(&mut self.place) {
                Place::Room { tx, .. } => Effect::Leave(tx),
                _ => Effect::None,
            },
        }
    }

    /// A signal from the lobby or a room (a frame changes nothing here).
    pub fn signal(&mut self, item: Outbound) -> Effect {
        match item {
            Outbound::Frame(_) | Outbound::Rated { .. } | Outbound::Restart => Effect::None,
            Outbound::Refused => {
                if matches!(self.place, Place::Lobby { .. }) {
                    self.place = Place::Idle;
                }
                Effect::None
            }
            Outbound::Entered { room, link: tx } => match self.place {
                Place::Lobby { leave: false, spectate, .. } => {
                    self.place = Place::Room { code: room, tx, free: spectate, live: false };
                    Effect::None
                }
                _ => {
                    // Entered a room it no longer wants: leave at once.
                    if matches!(self.place, Place::Lobby { .. }) {
                        self.place = Place::Idle;
                    }
                    Effect::Leave(tx)
                }
            },
            Outbound::Drafted { room, link: tx } => {
                // The lobby drafts only a connection that is free to go
                // (see `presence`): its free room, if any, is left; a
                // spectate still on its way is left when it arrives.
                let leaving = match &self.place {
                    Place::Idle | Place::Lobby { spectate: true, .. } => None,
                    Place::Room { free: true, tx, .. } => Some(tx.clone()),
                    _ => return Effect::Leave(tx),
                };
                self.place = Place::Room { code: room, tx, free: false, live: false };
                leaving.map_or(Effect::None, Effect::Leave)
            }
            Outbound::Live { room, live } => {
                if let Place::Room { code, free, live: playing, .. } = &mut self.place {
                    if *code == room {
                        *free = !live;
                        *playing = live;
                    }
                }
                Effect::None
            }
            Outbound::Released { room } => {
                if self.leaving.as_deref() == Some(&*room) {
                    self.leaving = None;
                } else if self.in_room(&room) {
                    self.place = Place::Idle;
                }
                Effect::None
            }
            Outbound::Replaced { room } => {
                if self.in_room(&room) {
                    // The seat lives on in the other connection: no disconnect.
                    self.place = Place::Idle;
                    return Effect::Replaced;
                }
                Effect::None
            }
        }
    }

    /// The connection ends: what the room or the lobby must be told.
    pub fn close(&mut self) -> Effect {
        match std::mem::take(&mut self.place) {
            Place::Room { tx, .. } => Effect::Disconnect(tx),
            Place::Lobby { queued: Some(rules), .. } => Effect::Cancel(rules),
            _ => Effect::None,
        }
    }

    fn in_room(&self, room: &str) -> bool {
        matches!(&self.place, Place::Room { code, .. } if **code == *room)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::RoomCmd;
    use crate::core::queue;

    fn room(code: &str) -> (Arc<str>, RoomLink, queue::Receiver<RoomCmd>) {
        let (tx, rx) = queue::channel(4);
        (Arc::from(code), RoomLink::local(tx), rx)
    }

    fn entered(m: &mut Membership, code: &Arc<str>, tx: &RoomLink) -> Effect {
        m.signal(Outbound::Entered { room: code.clone(), link: tx.clone() })
    }

    #[test]
    fn a_quick_match_queues_then_enters_a_room_and_plays() {
        let mut m = Membership::default();
        assert!(m.room().is_err());
        assert!(matches!(m.enter(Some(Rules::classic(3)), false), Ok(None)));
        // Still with the lobby: another request is busy, a move is not in a game.
        assert_eq!(
            m.enter(None, false).unwrap_err(),
            "already waiting in the matchmaking queue; send leave first"
        );
        assert_eq!(m.room().unwrap_err(), "still waiting for an opponent; wait for game_started");
        let (code, tx, _rx) = room("R1");
        assert!(matches!(entered(&mut m, &code, &tx), Effect::None));
        m.signal(Outbound::Live { room: code.clone(), live: true });
        assert!(m.room().is_ok());
        // A game in progress: no leaving implicitly.
        assert!(m.enter(Some(Rules::classic(3)), false).unwrap_err().starts_with("already in a room"));
        // Over: free to go, leaving the room on the way.
        m.signal(Outbound::Live { room: code.clone(), live: false });
        assert!(matches!(m.enter(None, false), Ok(Some(_))));
    }

    #[test]
    fn leave_before_the_lobby_answers_is_carried_out_when_it_does() {
        let mut m = Membership::default();
        // A join whose room arrives after leave: left at once.
        m.enter(None, false).unwrap();
        assert!(matches!(m.leave(), Effect::None));
        let (code, tx, _rx) = room("R2");
        assert!(matches!(entered(&mut m, &code, &tx), Effect::Leave(_)));
        assert_eq!(m.room().unwrap_err(), NOT_IN_GAME, "idle again");
        // A quick match left before the pairing: the room is left on arrival too.
        m.enter(Some(Rules::classic(3)), false).unwrap();
        assert!(matches!(m.leave(), Effect::Cancel(r) if r == Rules::classic(3)));
        assert!(matches!(entered(&mut m, &code, &tx), Effect::Leave(_)));
    }

    #[test]
    fn leaving_the_queue_or_a_room_and_refusals() {
        let mut m = Membership::default();
        m.enter(Some(Rules::classic(4)), false).unwrap();
        assert!(matches!(m.leave(), Effect::Cancel(r) if r == Rules::classic(4)));
        assert!(matches!(m.leave(), Effect::None), "nothing left to leave");
        m.enter(None, false).unwrap();
        m.signal(Outbound::Refused);
        assert!(matches!(m.enter(None, false), Ok(None)), "a refusal frees the connection");
        let (code, tx, _rx) = room("R3");
        entered(&mut m, &code, &tx);
        assert!(matches!(m.leave(), Effect::Leave(_)));
        assert!(m.room().is_err());
    }

    #[test]
    fn a_spectator_is_free_to_go_and_release_frees_anyone() {
        let mut m = Membership::default();
        m.enter(None, true).unwrap();
        let (code, tx, _rx) = room("R4");
        entered(&mut m, &code, &tx);
        assert!(matches!(m.enter(None, false), Ok(Some(_))), "watching is left implicitly");
        let (code, tx, _rx) = room("R5");
        entered(&mut m, &code, &tx);
        // A signal about another room changes nothing.
        m.signal(Outbound::Released { room: Arc::from("OTHER") });
        assert!(m.room().is_ok());
        m.signal(Outbound::Released { room: code });
        assert!(m.room().is_err());
    }

    #[test]
    fn a_replaced_seat_closes_without_telling_the_room() {
        let mut m = Membership::default();
        m.enter(None, false).unwrap();
        let (code, tx, _rx) = room("R6");
        entered(&mut m, &code, &tx);
        assert!(matches!(m.signal(Outbound::Replaced { room: code }), Effect::Replaced));
        assert!(matches!(m.close(), Effect::None), "the seat is the other connection's now");
    }

    #[test]
    fn statuses_follow_the_queue_and_the_game() {
        let mut m = Membership::default();
        assert_eq!(m.status(), Status::Idle);
        m.enter(Some(Rules::classic(3)), false).unwrap();
        assert_eq!(m.status(), Status::Queued);
        let (code, tx, _rx) = room("R9");
        entered(&mut m, &code, &tx);
        assert_eq!(m.status(), Status::Queued, "in the room, its game not started");
        m.signal(Outbound::Live { room: code.clone(), live: true });
        assert_eq!(m.status(), Status::Playing);
        m.signal(Outbound::Live { room: code.clone(), live: false });
        assert_eq!(m.status(), Status::Idle);
        m.enter(None, false).unwrap();
        assert_eq!(m.status(), Status::Pending);
        m.signal(Outbound::Refused);
        m.enter(None, true).unwrap();
        assert_eq!(m.status(), Status::Idle, "on the way to watch");
    }

    #[test]
    fn a_drafted_connection_leaves_its_finished_room_for_the_new_game() {
        let mut m = Membership::default();
        m.enter(None, false).unwrap();
        let (old, old_tx, _rx) = room("OLD");
        entered(&mut m, &old, &old_tx);
        m.signal(Outbound::Live { room: old.clone(), live: true });
        m.signal(Outbound::Live { room: old.clone(), live: false });
        let (new, tx, _rx2) = room("NEW");
        assert!(matches!(
            m.signal(Outbound::Drafted { room: new.clone(), link: tx.clone() }),
            Effect::Leave(_)
        ));
        m.signal(Outbound::Live { room: new.clone(), live: true });
        assert_eq!(m.status(), Status::Playing);
        // A spectate on its way when the draft came: its room is left on arrival.
        let mut w = Membership::default();
        w.enter(None, true).unwrap();
        assert!(matches!(w.signal(Outbound::Drafted { room: new.clone(), link: tx.clone() }), Effect::None));
        let (watched, wtx, _rx3) = room("WATCHED");
        assert!(matches!(entered(&mut w, &watched, &wtx), Effect::Leave(_)));
        assert!(w.room().is_ok());
    }

    #[test]
    fn closing_tells_the_room_or_the_queue() {
        let mut m = Membership::default();
        m.enter(None, false).unwrap();
        let (code, tx, _rx) = room("R7");
        entered(&mut m, &code, &tx);
        assert!(matches!(m.close(), Effect::Disconnect(_)));
        let mut q = Membership::default();
        q.enter(Some(Rules::classic(3)), false).unwrap();
        assert!(matches!(q.close(), Effect::Cancel(r) if r == Rules::classic(3)));
        let mut gone = Membership::default();
        gone.enter(None, false).unwrap();
        gone.signal(Outbound::Entered { room: Arc::from("R8"), link: room("R8").1 });
        gone.room_gone();
        assert!(matches!(gone.close(), Effect::None));
    }

    /// `spectate R` then `join_room R`: the lobby's `Entered` for the seat
    /// may come before the room's `Released` for the spectator who left; that
    /// `Released` must not take the connection out of the room it just entered.
    #[test]
    fn the_release_of_a_room_left_for_the_same_room_does_not_end_the_new_stay() {
        let mut m = Membership::default();
        let (code, tx, _rx) = room("R1");
        assert!(matches!(m.enter(None, true), Ok(None)));
        entered(&mut m, &code, &tx);
        assert!(matches!(m.enter(None, false), Ok(Some(_))), "watching is left implicitly");
        entered(&mut m, &code, &tx);
        m.signal(Outbound::Released { room: code.clone() });
        assert!(m.room().is_ok(), "still seated after the spectator's release");
        // A later release of that room is a real one.
        m.signal(Outbound::Released { room: code.clone() });
        assert!(m.room().is_err());
    }
}
