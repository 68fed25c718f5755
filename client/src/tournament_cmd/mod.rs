//! `ttt tournament list|create|watch`: arena tournaments from the terminal
//! (compete.md, "Arena tournaments"). `join` plays on the full screen
//! (`ui::screen`), `ttt bot --tournament` as a bot (`bot_cmd`).

pub mod args;

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use tictactoe_protocol::tournament::TournamentSummary;
use tictactoe_protocol::{ClientMessage, ServerMessage};

use crate::net::{Event, Link};
use crate::session::SessionError;
use crate::tournament::follow::{self, Following};
use crate::tournament::now_ms;
use crate::tournament::table::{self, Marks};

/// The command that joins tournament `id` on `servers`, as this program was started.
pub fn join_command(servers: &str, id: &str) -> String {
    let server = match servers == crate::servers::DEFAULT_SERVER {
        true => String::new(),
        false => format!(" --server {servers}"),
    };
    format!("{} tournament join {}{server}", crate::say::invoked_as(), crate::say::clean(id))
}

/// The next reply among `wanted` (or the error that refuses the request),
/// skipping the rest; the connection's end is an error.
async fn reply<T>(
    link: &mut Link,
    mut wanted: impl FnMut(ServerMessage) -> Option<T>,
) -> Result<T, SessionError> {
    loop {
        match link.next().await {
            Event::Msg(ServerMessage::Error { code, message, .. }) => {
                let msg = ServerMessage::error(code, message.clone(), None);
                let why = follow::refusal(&msg, false).unwrap_or_else(|| crate::say::clean(&message));
                return Err(SessionError::Refused(why));
            }
            Event::Msg(msg) => {
                if let Some(found) = wanted(msg) {
                    return Ok(found);
                }
            }
            Event::Down { .. } | Event::Resumed => {}
            Event::Closed(why) => return Err(SessionError::Closed(why)),
        }
    }
}

/// `ttt tournament list`: the server's tournaments, as a table or `--json`.
pub async fn list(servers: &str, json: bool) -> Result<(), SessionError> {
    let mut link = Link::connect(servers).await?;
    link.send(ClientMessage::Tournaments {}).await?;
    let tournaments = reply(&mut link, |msg| match msg {
        ServerMessage::Tournaments { tournaments, .. } => Some(tournaments),
        _ => None,
    })
    .await?;
    if json {
        let text =
            serde_json::to_string_pretty(&tournaments).map_err(|e| SessionError::Refused(e.to_string()))?;
        println!("{text}");
    } else {
        print!("{}", table::list(&tournaments, now_ms()));
    }
    Ok(())
}

/// What `ttt tournament create` asks for.
pub struct Creation {
    /// Its name.
    pub name: String,
    pub size: usize,
    /// Marks in a row that win; the size when `None`.
    pub win: Option<usize>,
    pub clock: tictactoe_protocol::Fischer,
    /// How long it runs, in ms.
    pub duration_ms: u64,
    /// How long until it starts, in ms.
    pub starts_in_ms: u64,
}

/// `ttt tournament create`: creates it as `account` and prints its id and
/// the command that joins it.
pub async fn create(servers: &str, account: &str, terms: Creation) -> Result<(), SessionError> {
    let mut link = Link::connect(servers).await?;
    let token = crate::accounts::token_for(servers, account);
    link.send(ClientMessage::Hello { name: account.to_owned(), protocol: Some(1), token }).await?;
    let wire = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    link.send(ClientMessage::TournamentCreate {
        name: terms.name,
        size: Some(terms.size as i64),
        win: terms.win.map(|w| w as i64),
        clock: Some(terms.clock),
        duration_ms: Some(wire(terms.duration_ms)),
        starts_in_ms: Some(wire(terms.starts_in_ms)),
    })
    .await?;
    let created: TournamentSummary = reply(&mut link, |msg| match msg {
        ServerMessage::Tournament { tournament } => Some(*tournament),
        _ => None,
    })
    .await?;
    println!("tournament {}: {}", crate::say::clean(&created.id), table::heading(&created, now_ms()));
    println!("join it with: {}", join_command(&link.servers(), &created.id));
    Ok(())
}

/// `ttt tournament watch`: the standings, redrawn on each change (and each
/// second on a terminal, for the time left), until the tournament
/// finishes; then its final standings.
pub async fn watch(servers: &str, id: &str) -> Result<(), SessionError> {
    let mut link = Link::connect(servers).await?;
    // Following it again after a reconnect, as a player does.
    link.stay_listed();
    let mut follow = Following::new(id, "");
    let watch = ClientMessage::TournamentWatch { tournament: follow.id.clone() };
    link.send(watch.clone()).await?;
    let terminal = std::io::stdout().is_terminal();
    let marks = Marks::for_terminal();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        let poke = follow.next_poke();
        tokio::select! {
            event = link.next() => match event {
                Event::Msg(msg) => {
                    if let Some(why) = follow::refusal(&msg, false) {
                        return Err(SessionError::Refused(why));
                    }
                    let changed = follow.on_msg(&msg, Instant::now(), now_ms());
                    // Without a terminal, a line for each change; the table at the end.
                    if let (false, true, Some(view)) = (terminal, changed, &follow.view) {
                        println!("{}", table::heading(&view.summary, now_ms()));
                    }
                }
                Event::Resumed => { let _ = link.send(watch.clone()).await; }
                Event::Down { .. } => {}
                Event::Closed(why) => return Err(SessionError::Closed(why)),
            },
            _ = tick.tick() => {}
            _ = crate::bot_cmd::sleep_until(poke) => {
                if let Some(ask) = follow.poked(Instant::now()) {
                    let _ = link.send(ask).await;
                }
            }
        }
        let over = follow.over(false, Instant::now());
        let Some(view) = &follow.view else { continue };
        if over {
            if terminal {
                print!("\x1b[H\x1b[2J");
            }
            println!("{}", table::heading(&view.summary, now_ms()));
            println!("final standings:");
            for line in table::standings(view, None, marks) {
                println!("{line}");
            }
            return Ok(());
        }
        if terminal {
            let mut out = format!("\x1b[H\x1b[2J{}\r\n\r\n", table::heading(&view.summary, now_ms()));
            for line in table::standings(view, None, marks) {
                out.push_str(&line);
                out.push_str("\r\n");
            }
            let mut stdout = std::io::stdout();
            let _ = stdout.write_all(out.as_bytes());
            let _ = stdout.flush();
        }
    }
}
