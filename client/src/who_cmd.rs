//! `ttt who`: who is online, and whether each is idle, queued or playing.

use tictactoe_protocol::{ClientMessage, OnlinePlayer, OnlineStatus, ServerMessage};

use crate::net::{Event, Link};
use crate::session::SessionError;

/// Asks the server who is online and prints one player per line.
pub async fn run(url: &str) -> Result<(), SessionError> {
    let mut link = Link::connect(url).await?;
    link.send(ClientMessage::Who {}).await?;
    loop {
        match link.next().await {
            Event::Msg(ServerMessage::Online { players, .. }) => {
                print!("{}", table(&players));
                return Ok(());
            }
            Event::Msg(ServerMessage::Error { message, .. }) => return Err(SessionError::Refused(message)),
            Event::Msg(_) | Event::Down { .. } | Event::Resumed => {}
            Event::Closed(why) => return Err(SessionError::Closed(why)),
        }
    }
}

/// One line per player: the name, its kind and its status, in columns.
fn table(players: &[OnlinePlayer]) -> String {
    let names: Vec<String> = players.iter().map(|p| crate::say::clean(&p.name)).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(4);
    let mut out = format!("{:width$}  {:12}  status\n", "name", "kind");
    for (p, name) in players.iter().zip(&names) {
        let kind = match (p.bot, p.account) {
            (true, true) => "bot account",
            (true, false) => "bot",
            (false, true) => "account",
            (false, false) => "guest",
        };
        let status = match p.status {
            OnlineStatus::Idle => "idle",
            OnlineStatus::Queued => "queued",
            OnlineStatus::Playing => "playing",
        };
        let pad = width - name.chars().count();
        out.push_str(&format!("{name}{}  {kind:12}  {status}\n", " ".repeat(pad)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_line_up_in_columns() {
        let p = |name: &str, account, bot, status| OnlinePlayer { name: name.into(), account, bot, status };
        let text = table(&[
            p("house", false, true, OnlineStatus::Idle),
            p("Zoë", true, false, OnlineStatus::Playing),
        ]);
        assert_eq!(
            text,
            "name   kind          status\nhouse  bot           idle\nZoë    account       playing\n"
        );
    }
}
