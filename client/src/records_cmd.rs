//! `ttt register`, `history`, `replay`, `top` and `profile`: accounts and
//! what the server remembers, over the protocol and the HTTP API.

use std::io::{BufRead, IsTerminal};
use std::time::{Duration, Instant};

use tictactoe_protocol::api::{GamePlayer, GameRecord, Leaderboard, PlayerGames, PlayerProfile};
use tictactoe_protocol::{ClientMessage, EndReason, MoveError, Player, ServerMessage};

use crate::accounts::{self, Saved};
use crate::api::{self, ApiError};
use crate::net::{Event, Link};
use crate::say::clean;
use crate::servers::segment;
use crate::ui::board::render;
use crate::ui::clocks::clock_line;
use crate::ui::input::cell_name;
use crate::view::{Clocks, View};

/// Why a records command failed, in words for the user.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    /// The HTTP API did not answer as asked.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// No name was given and no single account is saved for the server.
    #[error("whose? give a name (no single account is saved for this server)")]
    Whose,
    /// The server refused, the connection failed, or the token could not be
    /// saved: in the words of the part that failed.
    #[error("{0}")]
    Said(String),
    /// A recorded move cannot be replayed.
    #[error("move {n} of the record is illegal: {error:?}")]
    IllegalMove {
        /// The move's number, from 1.
        n: usize,
        /// Why the board refuses it.
        error: MoveError,
    },
}

impl From<String> for RecordsError {
    fn from(words: String) -> RecordsError {
        RecordsError::Said(words)
    }
}

impl From<crate::net::ConnectError> for RecordsError {
    fn from(e: crate::net::ConnectError) -> RecordsError {
        RecordsError::Said(e.to_string())
    }
}

impl From<crate::accounts::AccountsError> for RecordsError {
    fn from(e: crate::accounts::AccountsError) -> RecordsError {
        RecordsError::Said(e.to_string())
    }
}

/// Creates an account on the server and saves its token for this server.
pub async fn register(url: &str, name: &str, bot: bool) -> Result<(), RecordsError> {
    let mut link = Link::connect(url).await?;
    link.send(ClientMessage::Register { name: name.to_owned(), bot }).await.map_err(String::from)?;
    loop {
        match link.next().await {
            Event::Msg(ServerMessage::Registered { name, token, bot, .. }) => {
                let path = accounts::save(url, &Saved { name: name.to_string(), token, bot })?;
                let kind = if bot { "bot account" } else { "account" };
                let name = clean(&name);
                let ttt = crate::say::invoked_as();
                println!("Registered the {kind} {name} on {url}.");
                println!("Its token is saved in {} (readable only by you).", path.display());
                if bot {
                    println!("`{ttt} bot --name {name}` signs in with it.");
                } else {
                    println!("`{ttt} play` and `{ttt} challenge` now play as {name}, signed in with it.");
                }
                return Ok(());
            }
            Event::Msg(ServerMessage::Error { code, message, .. }) => {
                return Err(crate::say::refusal(code, &message, None, None).into());
            }
            Event::Msg(_) => {}
            Event::Down { .. } | Event::Resumed => {}
            Event::Closed(why) => return Err(RecordsError::Said(why.to_string())),
        }
    }
}

/// The name a records command is about: the one given, or the one account
/// saved for this server.
fn who(url: &str, name: Option<String>) -> Result<String, RecordsError> {
    name.or_else(|| accounts::only_name(url)).ok_or(RecordsError::Whose)
}

/// The pool a record's rules belong to, as players read it.
fn rules(game: &GameRecord) -> String {
    let (size, win) = (game.size, game.win);
    let board = if size == win { format!("{size}x{size}") } else { format!("{size}x{size}, {win} in a row") };
    match game.clock {
        Some(clock) => format!("{board}, {clock}"),
        None => board,
    }
}

/// A time from the records (RFC 3339, UTC) in the user's own time zone,
/// to the minute (`2026-11-23 16:04`); as it came when it is not one.
fn local_time(when: &str) -> String {
    match when.parse::<jiff::Timestamp>() {
        Ok(t) => t.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M").to_string(),
        Err(_) => clean(when),
    }
}

/// How a game was won or lost, after "won" or "lost": nothing for a line.
fn how(reason: EndReason) -> &'static str {
    match reason {
        EndReason::Resign => " by resignation",
        EndReason::Timeout => " on time",
        EndReason::Disconnect => " by disconnection",
        _ => "",
    }
}

/// A game with no winner, in words.
fn no_winner(reason: EndReason) -> &'static str {
    match reason {
        EndReason::Draw => "draw",
        EndReason::Shutdown => "no result (the server shut down)",
        EndReason::Aborted => "aborted (ended before both players had moved)",
        _ => "no result",
    }
}

/// A number of things, in the singular for one: `1 loss`, `2 losses`.
fn count(n: u64, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// A player as listings show them.
fn player(name: &str, bot: bool) -> String {
    let mut out = clean(name);
    if bot {
        out.push_str(" (bot)");
    }
    out
}

/// A seat of a record as listings show it.
fn seat(p: &GamePlayer) -> String {
    player(&p.name, p.bot)
}

/// `ttt history`: a player's recent games, newest first.
pub async fn history(url: &str, name: Option<String>, limit: usize) -> Result<(), RecordsError> {
    let name = who(url, name)?;
    let path = format!("/api/players/{}/games?limit={limit}", segment(&name));
    let PlayerGames { games } = api::get(url, &path).await?;
    if games.is_empty() {
        println!("{name} has no recorded games yet.");
        return Ok(());
    }
    println!("Games of {name}, newest first:");
    for g in &games {
        let seat_of = g.players.iter().position(|p| p.name.eq_ignore_ascii_case(&name));
        let result = match (seat_of, g.winner) {
            (_, 0) => no_winner(g.reason).to_owned(),
            (Some(s), w) if usize::from(w) == s + 1 => format!("won{}", how(g.reason)),
            (Some(_), _) => format!("lost{}", how(g.reason)),
            (None, w) => format!("{} won{}", if w == 1 { "X" } else { "O" }, how(g.reason)),
        };
        let change = match (seat_of, &g.ratings) {
            (Some(s), Some(r)) => {
                let (b, a) = (r[s].before, r[s].after);
                format!("  {b} → {a} ({:+})", a - b)
            }
            _ => String::new(),
        };
        let when = local_time(&g.ended_at);
        let [x, o] = g.players.each_ref().map(seat);
        println!("{}  {when}  {:<18} X {x} vs O {o}: {result}{change}", clean(&g.id), rules(g));
    }
    println!("Replay one with: {} replay GAME_ID", crate::say::invoked_as());
    Ok(())
}

/// `ttt profile`: a player's ratings and results.
pub async fn profile(url: &str, name: Option<String>) -> Result<(), RecordsError> {
    let name = who(url, name)?;
    let p: PlayerProfile = api::get(url, &format!("/api/players/{}", segment(&name))).await?;
    let bot = if p.bot { " (bot)" } else { "" };
    println!("{}{bot}, registered {}", clean(&p.name), local_time(&p.created_at));
    let r = &p.results;
    println!(
        "Results: {}, {}, {}",
        count(r.wins, "win", "wins"),
        count(r.draws, "draw", "draws"),
        count(r.losses, "loss", "losses")
    );
    if p.ratings.is_empty() {
        println!("No rated games yet.");
    } else {
        println!("Ratings (Glicko-2, per board):");
        for (pool, s) in &p.ratings {
            println!("  {pool:<8} {} ± {}  ({})", s.rating, s.rd, count(s.games, "game", "games"));
        }
    }
    Ok(())
}

/// `ttt top`: the leaderboard of one pool.
pub async fn top(url: &str, size: usize, win: Option<usize>, limit: usize) -> Result<(), RecordsError> {
    let win = win.unwrap_or(size);
    let path = format!("/api/leaderboard?size={size}&win={win}&limit={limit}");
    let board: Leaderboard = api::get(url, &path).await?;
    let pool = if win == size { format!("{size}x{size}") } else { format!("{size}x{size}, {win} in a row") };
    if board.players.is_empty() {
        println!("No rated games on {pool} yet.");
        return Ok(());
    }
    println!("Leaderboard, {pool}:");
    println!("  #  {:<24} {:>6} {:>5} {:>6}", "name", "rating", "±", "games");
    for (i, p) in board.players.iter().enumerate() {
        let (rating, rd, games) = (p.rating, p.rd, p.games);
        println!("{:>3}  {:<24} {rating:>6} {rd:>5} {games:>6}", i + 1, player(&p.name, p.bot));
    }
    Ok(())
}

/// `ttt replay`: a recorded game move by move — stepped with Enter at a
/// terminal, played back every `delay` with `--delay`, or printed whole
/// through a pipe.
pub async fn replay(url: &str, id: &str, delay: Option<Duration>) -> Result<(), RecordsError> {
    let g: GameRecord = api::get(url, &format!("/api/games/{}", segment(id))).await?;
    let moves: Vec<[usize; 2]> = g.moves.iter().map(|&[r, c]| [usize::from(r), usize::from(c)]).collect();
    let mut view = View::new(g.size, g.win);
    view.names = g.players.iter().map(seat).collect();
    println!(
        "Game {id}: X {} vs O {} on {}, {} moves.",
        view.names.first().cloned().unwrap_or_default(),
        view.names.get(1).cloned().unwrap_or_default(),
        rules(&g),
        moves.len()
    );
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let step = delay.is_none() && std::io::stdin().is_terminal();
    if step {
        println!("Enter: next move, q then Enter: stop.");
    }
    let winner = match g.winner {
        1 => Some(Player::X),
        2 => Some(Player::O),
        _ => None,
    };
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    for (i, &[r, c]) in moves.iter().enumerate() {
        let mover = Player::for_move(i);
        view.game.play(r, c).map_err(|error| RecordsError::IllegalMove { n: i + 1, error })?;
        view.last = Some((r, c));
        println!();
        println!("Move {}/{}: {} plays {}", i + 1, moves.len(), mover.mark(), cell_name(r, c));
        if i + 1 == moves.len() {
            view.over = Some((winner, g.reason, g.line));
        }
        for l in render(&view, None, colour) {
            println!("{l}");
        }
        // On a Fischer clock, each side's time left after this move.
        if let (Some(fischer), Some(left)) = (g.clock, g.clocks.as_ref().and_then(|c| c.get(i))) {
            view.fischer = Some(fischer);
            view.clocks = Some(Clocks::new(*left, None, Instant::now()));
            let line = clock_line(&view, Instant::now(), colour).unwrap_or_default();
            println!("Clocks: {}", line.trim());
        }
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        } else if step && i + 1 < moves.len() {
            match lines.next() {
                Some(Ok(l)) if l.trim() == "q" => return Ok(()),
                None => return Ok(()),
                _ => {}
            }
        }
    }
    let result = match winner {
        None if g.winner == 0 => {
            let said = no_winner(g.reason);
            format!("{}{}.", said[..1].to_uppercase(), &said[1..])
        }
        Some(w) => format!("{} wins{}.", view.player(w), how(g.reason)),
        None => String::new(),
    };
    let rated = match &g.ratings {
        Some(r) => format!(" Rated: X {} → {}, O {} → {}.", r[0].before, r[0].after, r[1].before, r[1].after),
        None => " Unrated.".to_owned(),
    };
    println!("{result}{rated}");
    Ok(())
}
