//! The bot's decisions, without the socket, the mover or the clock: a link
//! event, a chosen move or a deadline in, what to send or print out.
//! [`super::run`] is the io shell that waits and does them.

use std::time::{Duration, Instant};

use tictactoe_protocol::{ClientMessage, ClosedReason, ErrorCode, Limits, ServerMessage};

use super::{BotError, Sizes, Tally};
use crate::bot::MoverError;
use crate::bot::budget::{Budget, DEFAULT_THINK};
use crate::bot::gomocup::talk::FIVE;
use crate::net::Event;
use crate::request::Start;
use crate::session::{SessionError, challenge_over, fatal};
use crate::tournament::follow::Following;
use crate::view::View;

/// How long a rematch request may go unanswered when the server runs no
/// turn timer: then the bot leaves and looks for another game.
const REMATCH_WAIT_UNTIMED: Duration = Duration::from_secs(30);

/// What the io shell does, in order.
#[derive(Debug)]
pub(super) enum Do {
    /// Send this request; only a connection gone for good ends the run
    /// (while reconnecting, the room's `state` after the resume says what to do).
    Send(ClientMessage),
    /// Send this, whatever comes of it.
    Quietly(ClientMessage),
    /// Start choosing a move for the position in [`Bot::view`], unless one is being chosen.
    Think,
    /// Ask the Gomocup brain whether it plays a `size` board (`START`), then
    /// accept the challenge, or decline it with the brain's words.
    Vet { challenge: String, size: usize },
    /// Print this line on stdout.
    Print(String),
    /// Print this line on stderr.
    Say(String),
    /// Print on stderr how an opponent joins this room (the command and
    /// the web page, which need the servers connected to).
    Invite(String),
    /// The games are played: let the mover go and end with this tally.
    Done(Tally),
    /// End the run with this error.
    Fail(BotError),
}

/// A bot's run: the game in view, the results, and what it waits for.
#[derive(Debug)]
pub(super) struct Bot {
    start: Start,
    /// Waiting for challenges rather than asking for games.
    waiting: bool,
    /// How many games to play.
    games: u32,
    /// Playing every game of the room until it closes (`--games 0`, the
    /// arena's players): its closing ends the run, not a failure.
    until_closed: bool,
    /// The board sizes accepted from challengers.
    sizes: Sizes,
    /// Only five-in-a-row games are played (a Gomocup brain chooses the moves).
    five_only: bool,
    /// Games started so far: which game a move is asked for.
    started: u64,
    view: View,
    tally: Tally,
    /// The last request sent, to send again if it was rate-limited.
    last: Option<ClientMessage>,
    /// While a rematch is asked for: when to give up on it.
    rematch_until: Option<Instant>,
    /// How long a rematch may go unanswered.
    rematch_wait: Duration,
    /// The tournament it plays in, if it does.
    tournament: Option<Following>,
    /// Going berserk in every tournament game.
    berserk: bool,
}

impl Bot {
    /// A run of `games` games (0: every game until the room closes) asked
    /// for by `start`, on a server with `limits`.
    pub(super) fn new(start: &Start, games: u32, sizes: Sizes, limits: &Limits) -> Bot {
        Bot {
            start: start.clone(),
            waiting: matches!(start, Start::Await),
            games: if games == 0 { u32::MAX } else { games },
            until_closed: games == 0,
            sizes,
            five_only: false,
            started: 0,
            view: View::default(),
            tally: Tally::default(),
            last: None,
            rematch_until: None,
            rematch_wait: match limits.turn_timeout_ms {
                0 => REMATCH_WAIT_UNTIMED,
                ms => Duration::from_millis(ms),
            },
            tournament: None,
            berserk: false,
        }
    }

    /// Plays only games won by five in a row: challenges for others are
    /// declined, and those it accepts are vetted by the brain first.
    pub(super) fn five_only(mut self) -> Bot {
        self.five_only = true;
        self
    }

    /// Which game of the run is being played (1 for the first).
    pub(super) fn serial(&self) -> u64 {
        self.started
    }

    /// The game as the bot sees it.
    pub(super) fn view(&self) -> &View {
        &self.view
    }

    /// The time the bot's move may take at `now`: by the game's Fischer
    /// clock when it has one (`cap`, `--think-ms`, bounding it when given),
    /// else `cap` or [`DEFAULT_THINK`].
    pub(super) fn budget(&self, cap: Option<Duration>, now: Instant) -> Budget {
        let view = &self.view;
        let (Some(fischer), Some(clocks), Some(me)) = (view.fischer, view.clocks, view.you) else {
            return Budget::fixed(cap.unwrap_or(DEFAULT_THINK));
        };
        // No clock runs during each side's first move: its own time does.
        let first_move = clocks.running.is_none().then(|| view.clock_ms()).flatten();
        Budget::fischer(fischer, clocks.left(me, now), first_move, cap)
    }

    /// When to give up on the rematch asked for, if one is.
    pub(super) fn rematch_deadline(&self) -> Option<Instant> {
        self.rematch_until
    }

    /// What a link event asks for at `now`; `limits` are the server's.
    pub(super) fn on_event(&mut self, event: Event, limits: &Limits, now: Instant) -> Vec<Do> {
        if let Some(out) = self.tournament_event(&event, now) {
            return out;
        }
        let msg = match event {
            Event::Msg(msg) => msg,
            Event::Down { restart } => {
                let what = if restart { "the server is restarting" } else { "the connection dropped" };
                return vec![Do::Say(format!("ttt bot: {what}; reconnecting…"))];
            }
            Event::Resumed => return Vec::new(),
            Event::Closed(why) => return vec![Do::Fail(SessionError::Closed(why).into())],
        };
        if let Some(why) = fatal(&msg, &self.start, limits) {
            return vec![Do::Fail(SessionError::Refused(why).into())];
        }
        let in_game = self.view.you.is_some() && self.view.over.is_none();
        if let Some(why) =
            matches!(self.start, Start::Challenge(..)).then(|| challenge_over(&msg, in_game)).flatten()
        {
            return vec![Do::Fail(BotError::ChallengeOver { why, tally: self.tally })];
        }
        self.view.apply(&msg);
        let mut out = Vec::new();
        match &msg {
            ServerMessage::RoomCreated { room, .. } => {
                out.push(Do::Print(format!("room: {}", crate::say::clean(room))));
                out.push(Do::Invite(room.to_string()));
            }
            ServerMessage::GameStarted { clock, .. } => {
                self.rematch_until = None;
                self.started += 1;
                if self.berserk && self.tournament.is_some() {
                    // Before anything else: berserk is only allowed before the first move.
                    out.push(Do::Quietly(ClientMessage::Berserk {}));
                }
                if let Some(clock) = clock {
                    out.push(Do::Say(format!("ttt bot: playing at {clock}, spending its time by the clock")));
                }
            }
            ServerMessage::Challenged { challenge, size, win, from, clock, .. } if self.waiting => {
                let challenge = challenge.to_string();
                let free = self.view.over.is_some() || self.view.you.is_none();
                let reply = if !free {
                    ClientMessage::Decline { challenge, reason: Some("in a game; try again after it".into()) }
                } else if self.five_only && *win != FIVE {
                    let reason = format!("this bot plays five in a row, not {win}");
                    ClientMessage::Decline { challenge, reason: Some(reason) }
                } else if self.sizes.accepts(*size) {
                    let clock = clock.map_or(String::new(), |c| format!(", {c}"));
                    let verdict = if self.five_only { "asking the brain" } else { "accepted" };
                    out.push(Do::Say(format!(
                        "ttt bot: {} challenges on {size}×{size} ({win} in a row{clock}): {verdict}",
                        crate::say::clean(&from.name)
                    )));
                    if self.five_only {
                        out.push(Do::Vet { challenge, size: *size });
                        return out;
                    }
                    ClientMessage::Accept { challenge }
                } else {
                    let reason = format!("this bot plays {}", self.sizes);
                    ClientMessage::Decline { challenge, reason: Some(reason.chars().take(100).collect()) }
                };
                out.push(self.send(reply));
                return out;
            }
            ServerMessage::RematchOffered {} if self.waiting => {
                return vec![self.send(ClientMessage::Rematch {})];
            }
            ServerMessage::GameOver { winner, .. } => {
                match winner {
                    None => self.tally.draws += 1,
                    Some(w) if self.view.you == Some(*w) => self.tally.wins += 1,
                    Some(_) => self.tally.losses += 1,
                }
                if self.tournament.is_some() {
                    // No rematch: the room closes and the server pairs again.
                    return self.if_over(now);
                }
                if self.tally.played() >= self.games {
                    return vec![Do::Quietly(ClientMessage::Leave {}), Do::Done(self.tally)];
                }
                // Waiting for challenges, a rematch comes from the challenger.
                if self.view.closed.is_none() && !self.waiting {
                    // Until the room closes, its closing ends the wait.
                    self.rematch_until = (!self.until_closed).then(|| now + self.rematch_wait);
                    return vec![self.send(ClientMessage::Rematch {})];
                }
                return Vec::new();
            }
            ServerMessage::RoomClosed { reason, .. } => {
                // The opponent is gone: find another, or stop.
                self.rematch_until = None;
                // The organiser's games are played, or every game asked for.
                if self.until_closed || *reason == ClosedReason::Finished {
                    return vec![Do::Done(self.tally)];
                }
                return match (&self.start, again(&self.start)) {
                    (Start::Await, _) => Vec::new(),
                    (_, Some(request)) => vec![self.send(request)],
                    (_, None) => {
                        vec![Do::Fail(BotError::OpponentLeft {
                            games: self.tally.played(),
                            tally: self.tally,
                        })]
                    }
                };
            }
            ServerMessage::Error { code: ErrorCode::RateLimited, .. } => {
                // Not acted on: the link holds off for `retry_after_ms`, then
                // the same request goes again.
                return self.last.clone().map(|request| self.send(request)).into_iter().collect();
            }
            _ => {}
        }
        let cue = matches!(
            msg,
            ServerMessage::GameStarted { .. }
                | ServerMessage::Moved { .. }
                | ServerMessage::State { .. }
                | ServerMessage::Error { .. }
        );
        if cue && self.view.my_turn() {
            out.push(Do::Think);
        }
        out
    }

    /// The mover chose `cell` for the position with `asked_at` moves on the board.
    pub(super) fn on_chosen(&mut self, (row, col): (usize, usize), asked_at: usize) -> Vec<Do> {
        // Played only if the position is still the one it was asked for.
        if self.view.my_turn() && self.view.game.moves().len() == asked_at {
            vec![self.send(ClientMessage::Move { row: row as i64, col: col as i64 })]
        } else if self.view.my_turn() {
            vec![Do::Think]
        } else {
            Vec::new()
        }
    }

    /// The brain vetted a challenge's board: accept, or decline with its words.
    pub(super) fn on_vetted(&mut self, challenge: String, refusal: Option<String>) -> Vec<Do> {
        match refusal {
            None => vec![self.send(ClientMessage::Accept { challenge })],
            Some(why) => {
                let reason = Some(why.chars().take(100).collect());
                vec![
                    Do::Say(format!("ttt bot: declined: {}", crate::say::clean(&why))),
                    self.send(ClientMessage::Decline { challenge, reason }),
                ]
            }
        }
    }

    /// The brain lost the game (it failed, or refused the board): resigned,
    /// and the run goes on with the brain started afresh.
    pub(super) fn on_forfeit(&mut self, why: String) -> Vec<Do> {
        let said = format!("ttt bot: the brain lost this game: {}; resigning", crate::say::clean(&why));
        vec![Do::Say(said), Do::Quietly(ClientMessage::Resign {})]
    }

    /// The mover cannot go on: the game is resigned and the run ends.
    pub(super) fn on_gave_up(&mut self, why: MoverError) -> Vec<Do> {
        vec![Do::Quietly(ClientMessage::Resign {}), Do::Fail(BotError::StrategyGaveUp(why))]
    }

    /// The rematch went unanswered: leave and find another game, or stop.
    pub(super) fn on_rematch_timeout(&mut self) -> Vec<Do> {
        self.rematch_until = None;
        let next = match again(&self.start) {
            Some(request) => self.send(request),
            None => Do::Fail(BotError::RematchUnanswered { games: self.tally.played(), tally: self.tally }),
        };
        vec![Do::Quietly(ClientMessage::Leave {}), next]
    }

    /// Sends `request`, remembered to send again if it is rate-limited.
    fn send(&mut self, request: ClientMessage) -> Do {
        self.last = Some(request.clone());
        Do::Send(request)
    }
}

/// What finds the next opponent when the room closes: the queue again, the
/// same challenge again, the house again; none for a private room.
fn again(start: &Start) -> Option<ClientMessage> {
    match start {
        Start::Quick(..) | Start::Challenge(..) | Start::House(..) => start.request(),
        Start::Create(..) | Start::Join(..) | Start::Watch(..) | Start::Await | Start::Tournament(_) => None,
    }
}

mod tournament;

#[cfg(test)]
mod tests;
