//! An organised room: its host watches and does not play, its seats may be
//! reserved for two names (X and O as listed), every game starts from its
//! opening (replayed with the seats swapped on the rematch, so a room's
//! first two games are a pair), and it may close after a number of games.
//! Its games are unrated; their records name the opening and the host.

use std::sync::Arc;

use tictactoe_protocol::{ClosedReason, ErrorCode, Player, RequestId};

use super::seats::Seat;
use super::{Output, Phase, Room};
use crate::cmd::Organise;
use crate::core::account::{Identity, name_key};
use crate::core::ids::ConnId;

/// What an organised room holds beyond a private room's.
#[derive(Debug)]
pub struct Organised {
    /// The host's connection and name; `None` when the creator plays.
    pub host: Option<(ConnId, Arc<str>)>,
    /// The names the seats are reserved for, X then O.
    pub reserved: Option<[Arc<str>; 2]>,
    /// Moves played at the start of every game.
    pub opening: Vec<[u16; 2]>,
    /// The room closes after this many games.
    pub games: Option<u32>,
}

impl Organised {
    /// The room's set-up as the lobby checked it, with its creator.
    pub fn new(organise: Organise, creator: (ConnId, &Arc<Identity>)) -> Organised {
        let host = organise.host.then(|| (creator.0, creator.1.name.clone()));
        Organised { host, reserved: organise.players, opening: organise.opening, games: organise.games }
    }
}

impl Room {
    /// How many of the game's moves are the room's opening.
    pub(super) fn opening_len(&self) -> usize {
        self.organised.as_ref().map_or(0, |o| o.opening.len())
    }

    /// Moves made by the players in the game in progress (the opening's not counted).
    pub(super) fn played(&self) -> usize {
        self.game.moves().len().saturating_sub(self.opening_len())
    }

    /// The organiser's name, when the room has a host.
    pub(super) fn host_name(&self) -> Option<Arc<str>> {
        self.organised.as_ref()?.host.as_ref().map(|(_, name)| name.clone())
    }

    /// Whether `conn` is the room's host.
    pub(super) fn is_host(&self, conn: ConnId) -> bool {
        self.organised.as_ref().and_then(|o| o.host.as_ref()).is_some_and(|(c, _)| *c == conn)
    }

    /// Plays the room's opening into a fresh game (and its open lines).
    pub(super) fn play_opening(&mut self) {
        let Some(opening) = self.organised.as_ref().map(|o| o.opening.clone()) else { return };
        for [r, c] in opening {
            let player = self.game.turn().unwrap_or(Player::X);
            // Checked when the room was set up: every move is in play.
            if self.game.play_as(player, usize::from(r), usize::from(c)).is_err() {
                break;
            }
            if let Some(lines) = self.lines.as_mut() {
                lines.play(player, usize::from(r), usize::from(c));
            }
        }
    }

    /// A player takes a seat of a room whose host does not play: the seat
    /// reserved for their name, or the first free one (X first). The game
    /// starts once both seats are taken.
    pub(super) fn join_hosted(
        &mut self,
        conn: ConnId,
        who: Arc<Identity>,
        id: Option<RequestId>,
        now: std::time::Instant,
    ) {
        let reserved = self.organised.as_ref().and_then(|o| o.reserved.clone());
        // Reserved seats as listed in the room's even games, swapped in its
        // odd ones (the second game of a pair).
        let swapped = self.counts.finished() % 2 == 1;
        let seat = match &reserved {
            Some(names) => {
                let listed = names.iter().position(|n| name_key(n) == name_key(&who.name));
                listed.map(|i| if swapped { 1 - i } else { i })
            }
            None => self.seats.iter().position(Option::is_none),
        };
        let free = seat.filter(|&i| self.phase == Phase::Waiting && self.seats[i].is_none());
        let Some(i) = free else {
            let msg = match reserved {
                Some([x, o]) => {
                    format!("this room's seats are reserved for {x} and {o}; spectate it instead")
                }
                None => "both seats of this room are taken; spectate it, or create your own room".to_owned(),
            };
            self.refuse(conn, ErrorCode::RoomFull, msg, id);
            return self.out.push(Output::Release { to: conn });
        };
        self.seats[i] = Some(Seat::new(conn, who));
        if self.seats.iter().all(Option::is_some) {
            self.start(now);
        }
    }

    /// The host leaves: with no game running the room closes; during one
    /// it only stops watching.
    pub(super) fn host_leaves(&mut self, conn: ConnId) {
        self.spectators.retain(|&c| c != conn);
        self.out.push(Output::Release { to: conn });
        if self.phase != Phase::Playing {
            self.close_because(ClosedReason::Left, Some(conn));
        }
    }

    /// A player leaves a hosted room (a game in progress has ended as a
    /// leave ends it): the seat is free again for its player, whose next
    /// game is the rematch's (the seats swapped); the room closes once both
    /// players have left.
    pub(super) fn player_leaves(&mut self, seat: usize, conn: ConnId) {
        if self.closed {
            return;
        }
        self.seats[seat] = None;
        self.rematch = [false; 2];
        self.out.push(Output::Release { to: conn });
        if self.seats.iter().all(Option::is_none) {
            return self.close_because(ClosedReason::Left, Some(conn));
        }
        self.seats.swap(0, 1);
        self.phase = Phase::Waiting;
    }

    /// After a game: the room closes once the organiser's games are played
    /// (a tournament's room plays one).
    pub(super) fn close_if_done(&mut self) {
        let games = self.organised.as_ref().and_then(|o| o.games).or(self.tournament.as_ref().map(|_| 1));
        if games.is_some_and(|n| self.counts.finished() >= u64::from(n)) {
            self.close_because(ClosedReason::Finished, None);
        }
    }
}
