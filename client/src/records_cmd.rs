//! `ttt register`, `history`, `replay`, `top` and `profile`: accounts and
//! what the server remembers, over the protocol and the HTTP API.

use std::io::{BufRead, IsTerminal};
use std::time::Duration;

use serde_json::Value;
use tictactoe_protocol::{ClientMessage, EndReason, Line, Player, ServerMessage};

use crate::accounts::{self, Saved};
use crate::api::{self, segment};
use crate::net::{Event, Link};
use crate::say::clean;
use crate::ui::board::render;
use crate::ui::input::cell_name;
use crate::view::View;

/// Creates an account on the server and saves its token for this server.
pub async fn register(url: &str, name: &str, bot: bool) -> Result<(), String> {
    let mut link = Link::connect(url).await?;
    link.send(ClientMessage::Register { name: name.to_owned(), bot }).await?;
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
                return Err(crate::say::refusal(code, &message, None, None));
            }
            Event::Msg(_) => {}
            Event::Down { .. } | Event::Resumed => {}
            Event::Closed(why) => return Err(why),
        }
    }
}

/// The name a records command is about: the one given, or the one account
/// saved for this server.
fn who(url: &str, name: Option<String>) -> Result<String, String> {
    name.or_else(|| accounts::only_name(url))
        .ok_or_else(|| "whose? give a name (no single account is saved for this server)".to_owned())
}

/// The pool a record's rules belong to, as players read it.
fn rules(game: &Value) -> String {
    let (size, win) = (game["size"].as_u64().unwrap_or(0), game["win"].as_u64().unwrap_or(0));
    if size == win { format!("{size}x{size}") } else { format!("{size}x{size}, {win} in a row") }
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
fn how(reason: &str) -> &'static str {
    match reason {
        "resign" => " by resignation",
        "timeout" => " on time",
        "disconnect" => " by disconnection",
        _ => "",
    }
}

/// A game with no winner, in words.
fn no_winner(reason: &str) -> &'static str {
    match reason {
        "draw" => "draw",
        "shutdown" => "no result (the server shut down)",
        "aborted" => "aborted (ended before both players had moved)",
        _ => "no result",
    }
}

/// A number of things, in the singular for one: `1 loss`, `2 losses`.
fn count(n: &Value, one: &str, many: &str) -> String {
    match n.as_u64().unwrap_or(0) {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// A player of a record as listings show them.
fn player(p: &Value) -> String {
    let mut out = clean(p["name"].as_str().unwrap_or("?"));
    if p["bot"] == true {
        out.push_str(" (bot)");
    }
    out
}

/// `ttt history`: a player's recent games, newest first.
pub async fn history(url: &str, name: Option<String>, limit: usize) -> Result<(), String> {
    let name = who(url, name)?;
    let path = format!("/api/players/{}/games?limit={limit}", segment(&name));
    let body = api::ok(api::get(url, &path).await?)?;
    let games = body["games"].as_array().cloned().unwrap_or_default();
    if games.is_empty() {
        println!("{name} has no recorded games yet.");
        return Ok(());
    }
    println!("Games of {name}, newest first:");
    for g in &games {
        let players = g["players"].as_array().cloned().unwrap_or_default();
        let seat =
            players.iter().position(|p| p["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(&name)));
        let winner = g["winner"].as_u64().unwrap_or(0);
        let reason = g["reason"].as_str().unwrap_or("");
        let result = match (seat, winner) {
            (_, 0) => no_winner(reason).to_owned(),
            (Some(s), w) if w == s as u64 + 1 => format!("won{}", how(reason)),
            (Some(_), _) => format!("lost{}", how(reason)),
            (None, w) => format!("{} won{}", if w == 1 { "X" } else { "O" }, how(reason)),
        };
        let change = match (seat, g["ratings"].as_array()) {
            (Some(s), Some(r)) => {
                let (b, a) = (r[s]["before"].as_i64().unwrap_or(0), r[s]["after"].as_i64().unwrap_or(0));
                format!("  {b} → {a} ({:+})", a - b)
            }
            _ => String::new(),
        };
        let when = local_time(g["ended_at"].as_str().unwrap_or(""));
        let x = players.first().map(player).unwrap_or_default();
        let o = players.get(1).map(player).unwrap_or_default();
        println!(
            "{}  {when}  {:<18} X {x} vs O {o}: {result}{change}",
            clean(g["id"].as_str().unwrap_or("?")),
            rules(g)
        );
    }
    println!("Replay one with: {} replay GAME_ID", crate::say::invoked_as());
    Ok(())
}

/// `ttt profile`: a player's ratings and results.
pub async fn profile(url: &str, name: Option<String>) -> Result<(), String> {
    let name = who(url, name)?;
    let p = api::ok(api::get(url, &format!("/api/players/{}", segment(&name))).await?)?;
    let bot = if p["bot"] == true { " (bot)" } else { "" };
    println!(
        "{}{bot}, registered {}",
        clean(p["name"].as_str().unwrap_or("?")),
        local_time(p["created_at"].as_str().unwrap_or("?"))
    );
    let r = &p["results"];
    println!(
        "Results: {}, {}, {}",
        count(&r["wins"], "win", "wins"),
        count(&r["draws"], "draw", "draws"),
        count(&r["losses"], "loss", "losses")
    );
    match p["ratings"].as_object().filter(|m| !m.is_empty()) {
        None => println!("No rated games yet."),
        Some(pools) => {
            println!("Ratings (Glicko-2, per board):");
            for (pool, s) in pools {
                println!(
                    "  {pool:<8} {} ± {}  ({})",
                    s["rating"],
                    s["rd"],
                    count(&s["games"], "game", "games")
                );
            }
        }
    }
    Ok(())
}

/// `ttt top`: the leaderboard of one pool.
pub async fn top(url: &str, size: usize, win: Option<usize>, limit: usize) -> Result<(), String> {
    let win = win.unwrap_or(size);
    let path = format!("/api/leaderboard?size={size}&win={win}&limit={limit}");
    let body = api::ok(api::get(url, &path).await?)?;
    let pool = if win == size { format!("{size}x{size}") } else { format!("{size}x{size}, {win} in a row") };
    let players = body["players"].as_array().cloned().unwrap_or_default();
    if players.is_empty() {
        println!("No rated games on {pool} yet.");
        return Ok(());
    }
    println!("Leaderboard, {pool}:");
    println!("  #  {:<24} {:>6} {:>5} {:>6}", "name", "rating", "±", "games");
    for (i, p) in players.iter().enumerate() {
        let [rating, rd, games] = [&p["rating"], &p["rd"], &p["games"]].map(Value::to_string);
        println!("{:>3}  {:<24} {rating:>6} {rd:>5} {games:>6}", i + 1, player(p));
    }
    Ok(())
}

/// `ttt replay`: a recorded game move by move — stepped with Enter at a
/// terminal, played back every `delay` with `--delay`, or printed whole
/// through a pipe.
pub async fn replay(url: &str, id: &str, delay: Option<Duration>) -> Result<(), String> {
    let g = api::ok(api::get(url, &format!("/api/games/{}", segment(id))).await?)?;
    let size = g["size"].as_u64().unwrap_or(3) as usize;
    let win = g["win"].as_u64().unwrap_or(size as u64) as usize;
    let moves: Vec<[usize; 2]> =
        serde_json::from_value(g["moves"].clone()).map_err(|e| format!("a bad record: {e}"))?;
    let mut view = View::new(size, win);
    let players = g["players"].as_array().cloned().unwrap_or_default();
    view.names = players.iter().map(player).collect();
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
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    for (i, &[r, c]) in moves.iter().enumerate() {
        let mover = Player::for_move(i);
        view.game.play(r, c).map_err(|e| format!("move {} of the record is illegal: {e:?}", i + 1))?;
        view.last = Some((r, c));
        println!();
        println!("Move {}/{}: {} plays {}", i + 1, moves.len(), mover.mark(), cell_name(r, c));
        if i + 1 == moves.len() {
            let winner = match g["winner"].as_u64() {
                Some(1) => Some(Player::X),
                Some(2) => Some(Player::O),
                _ => None,
            };
            let reason: EndReason = serde_json::from_value(g["reason"].clone()).unwrap_or(EndReason::Draw);
            let line: Option<Line> = serde_json::from_value(g["line"].clone()).ok();
            view.over = Some((winner, reason, line));
        }
        for l in render(&view, None, colour) {
            println!("{l}");
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
    let result = match (g["winner"].as_u64(), g["reason"].as_str()) {
        (Some(0), Some(r)) => {
            let said = no_winner(r);
            format!("{}{}.", said[..1].to_uppercase(), &said[1..])
        }
        (Some(w @ (1 | 2)), Some(r)) => {
            let mover = if w == 1 { Player::X } else { Player::O };
            format!("{} wins{}.", view.player(mover), how(r))
        }
        _ => String::new(),
    };
    let rated = match g["ratings"].as_array() {
        Some(r) => format!(
            " Rated: X {} → {}, O {} → {}.",
            r[0]["before"], r[0]["after"], r[1]["before"], r[1]["after"]
        ),
        None => " Unrated.".to_owned(),
    };
    println!("{result}{rated}");
    Ok(())
}
