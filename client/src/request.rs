//! What a session asks the server for: the rules of the game wanted (the
//! win length left to the server when not given) and how to get into it,
//! as the requests that say so.

use tictactoe_protocol::{ClientMessage, Fischer, HouseLevel, Player};

/// The rules a game is asked for. Unlike the protocol's `Rules` (the rules
/// a game has), the win length may be left out: the server then plays a
/// whole line, and nothing is sent for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedRules {
    pub size: usize,
    /// Marks in a row that win; `None` leaves it to the server.
    pub win: Option<usize>,
    /// The Fischer clock asked for; `None` plays on the per-move timer.
    pub clock: Option<Fischer>,
}

impl RequestedRules {
    /// A `quick_match` for these rules.
    pub fn quick_match(self) -> ClientMessage {
        let (size, win) = self.wire();
        ClientMessage::QuickMatch { clock: self.clock, size, win, house_after_ms: None, level: None }
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
    Quick(RequestedRules),
    /// Open a private room with these rules, playing this mark in its first
    /// game (random when `None`).
    Create(RequestedRules, Option<Player>),
    /// Take the free seat of this room.
    Join(String),
    /// Watch this room.
    Watch(String),
    /// Play the server's house bot at once.
    House(RequestedRules, HouseLevel),
    /// Challenge the player of this name, and play them if they accept.
    Challenge(String, RequestedRules),
    /// Ask for nothing: stay listed and wait for challenges.
    Await,
    /// Join the arena tournament of this id and play every pairing.
    Tournament(String),
}

impl Start {
    /// What is asked for, as a seat kept on disk records it: the same for
    /// the same command line (a room code in any case, a win length left
    /// out or given as the size), different for different ones.
    pub fn key(&self) -> String {
        let rules = |r: &RequestedRules| {
            let clock = r.clock.map_or(String::new(), |c| format!(" {c}"));
            format!("{} {}{clock}", r.size, r.win.unwrap_or(r.size))
        };
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
            Start::Tournament(id) => format!("tournament {}", id.trim()),
        }
    }

    /// The rules asked for, when a game of new rules is.
    pub fn rules(&self) -> Option<RequestedRules> {
        match self {
            Start::Quick(r) | Start::Create(r, _) | Start::House(r, _) | Start::Challenge(_, r) => Some(*r),
            Start::Join(_) | Start::Watch(_) | Start::Await | Start::Tournament(_) => None,
        }
    }

    /// The request this sends, if any.
    pub fn request(&self) -> Option<ClientMessage> {
        Some(match self {
            Start::Quick(rules) => rules.quick_match(),
            Start::Create(rules, mark) => {
                let (size, win) = rules.wire();
                ClientMessage::CreateRoom {
                    players: None,
                    games: None,
                    host: false,
                    opening: None,
                    clock: rules.clock,
                    size,
                    win,
                    mark: *mark,
                }
            }
            Start::Join(room) => ClientMessage::JoinRoom { room: room.clone() },
            Start::Watch(room) => ClientMessage::Spectate { room: room.clone() },
            Start::House(rules, level) => {
                let (size, win) = rules.wire();
                ClientMessage::PlayHouse { clock: rules.clock, size, win, level: Some(*level) }
            }
            Start::Challenge(name, rules) => {
                let (size, win) = rules.wire();
                ClientMessage::Challenge { clock: rules.clock, name: name.clone(), size, win }
            }
            Start::Tournament(id) => ClientMessage::TournamentJoin { tournament: id.clone() },
            Start::Await => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_command_line_asks_for_the_same_seat_and_others_do_not() {
        let rules = |size, win| RequestedRules { size, win, clock: None };
        // A room code in any case; a win length left out or given as the size.
        assert_eq!(Start::Join("abc ".into()).key(), Start::Join("ABC".into()).key());
        assert_eq!(Start::Quick(rules(4, None)).key(), Start::Quick(rules(4, Some(4))).key());
        let different = [
            Start::Quick(rules(3, None)),
            Start::Quick(rules(4, Some(3))),
            Start::Quick(RequestedRules { clock: "3+2".parse().ok(), ..rules(3, None) }),
            Start::Quick(RequestedRules { clock: "3+0".parse().ok(), ..rules(3, None) }),
            Start::Create(rules(3, None), None),
            Start::Create(rules(3, None), Some(Player::X)),
            Start::Join("ABC".into()),
            Start::Join("ABD".into()),
            Start::House(rules(3, None), HouseLevel::Perfect),
            Start::House(rules(3, None), HouseLevel::Random),
            Start::Challenge("ann".into(), rules(3, None)),
            Start::Challenge("bob".into(), rules(3, None)),
            Start::Await,
            Start::Tournament("T1".into()),
            Start::Tournament("T2".into()),
        ];
        let keys: std::collections::HashSet<String> = different.iter().map(Start::key).collect();
        assert_eq!(keys.len(), different.len(), "{keys:?}");
    }

    #[test]
    fn the_clock_asked_for_goes_on_every_request_for_a_new_game() {
        let clock: Option<Fischer> = "3+2".parse().ok();
        let rules = RequestedRules { size: 3, win: None, clock };
        let asked = |start: Start| match start.request() {
            Some(
                ClientMessage::QuickMatch { clock, .. }
                | ClientMessage::CreateRoom { clock, .. }
                | ClientMessage::PlayHouse { clock, .. }
                | ClientMessage::Challenge { clock, .. },
            ) => clock,
            other => panic!("not a request for a new game: {other:?}"),
        };
        let want = Some(Fischer { initial_ms: 180_000, increment_ms: 2_000 });
        assert_eq!(asked(Start::Quick(rules)), want);
        assert_eq!(asked(Start::Create(rules, None)), want);
        assert_eq!(asked(Start::House(rules, HouseLevel::Perfect)), want);
        assert_eq!(asked(Start::Challenge("ann".into(), rules)), want);
        assert_eq!(asked(Start::Quick(RequestedRules { clock: None, ..rules })), None);
    }
}
