//! `ttt`: the tictactoe command-line client.

mod accounts;
mod api;
mod arena;
mod bot;
mod bot_cmd;
mod cli;
mod error;
#[cfg(test)]
mod fixtures;
mod judge_cmd;
mod net;
mod records_cmd;
mod request;
mod say;
mod seats;
mod servers;
mod session;
mod tls;
mod tournament;
mod tournament_cmd;
mod ui;
mod view;
mod who_cmd;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use bot_cmd::BotError;
use cli::{Cli, Command};
use error::Error;
use request::{RequestedRules, Start};
use ui::PlayError;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), Error> = async {
        match cli.command {
            Command::Judge(args) => Ok(judge_cmd::run(&args)?),
            Command::Arena(args) => match args.command {
                Some(arena::args::ArenaCommand::Stats(stats)) => Ok(arena::stats_cmd::run(&stats)?),
                None => arena::run(args).await.map_err(Error::Arena),
            },
            Command::Register { server, name, bot } => {
                records_cmd::register(server.url()?, &name, bot).await.map_err(Error::Records)
            }
            Command::History { server, name, limit } => {
                records_cmd::history(server.url()?, name, limit).await.map_err(Error::Records)
            }
            Command::Replay { server, game_id, delay } => {
                let delay = delay.map(Duration::from_millis);
                records_cmd::replay(server.url()?, &game_id, delay).await.map_err(Error::Records)
            }
            Command::Top { server, size, win, limit } => {
                records_cmd::top(server.url()?, size, win, limit).await.map_err(Error::Records)
            }
            Command::Profile { server, name } => {
                records_cmd::profile(server.url()?, name).await.map_err(Error::Records)
            }
            Command::Play { server, name, game } => {
                let url = server.url()?;
                game.check()?;
                Ok(play(url, &player_name(url, name), &game.start()).await?)
            }
            Command::Watch { server, room } => Ok(play(server.url()?, "watcher", &Start::Watch(room)).await?),
            Command::Challenge { server, player, name, size, win, clock } => {
                let url = server.url()?;
                let rules = RequestedRules { size, win, clock };
                say::check_win(rules)?;
                let name = player_name(url, name);
                if player.to_lowercase() == name.to_lowercase() {
                    return Err(Error::ChallengingYourself { name, ttt: say::invoked_as() });
                }
                Ok(play(url, &name, &Start::Challenge(player, rules)).await?)
            }
            Command::Who { server } => Ok(who_cmd::run(server.url()?).await?),
            Command::Tournament(args) => tournament_cmd(args.command).await,
            Command::Bot {
                server,
                name,
                strategy,
                engine,
                engine_protocol,
                engine_memory_mb,
                games,
                think_ms,
                accept_challenges,
                challenge,
                sizes,
                tournament,
                berserk,
                mut game,
            } => {
                let label = if engine.is_some() { "engine" } else { strategy.as_str() };
                let (mover, about) = match (engine, engine_protocol.as_str()) {
                    (Some(cmd), "gomocup") => {
                        game.five_in_a_row()?;
                        let mut brain = bot::gomocup::Brain::spawn(&cmd, engine_memory_mb).await?;
                        let about = brain.about().await;
                        (bot::Mover::Gomocup(Box::new(brain)), about)
                    }
                    (Some(cmd), _) => {
                        (bot::Mover::Engine(Box::new(bot::engine::Engine::spawn(&cmd).await?)), None)
                    }
                    (None, _) => (
                        bot::Mover::Local(
                            bot::by_name(&strategy)
                                .ok_or_else(|| Error::UnknownStrategy(strategy.clone()))?,
                        ),
                        None,
                    ),
                };
                let name = name.or(about).unwrap_or_else(|| format!("{label}-bot"));
                // Started by a match runner (`ttt arena`): that room's games,
                // on its rules, until it closes.
                let arena = arena_room();
                if arena.is_none() {
                    game.check()?;
                }
                let start = match (accept_challenges, challenge, tournament) {
                    (_, _, Some(id)) => Start::Tournament(id),
                    (true, _, None) => Start::Await,
                    (false, Some(player), None) => Start::Challenge(player, game.rules()),
                    (false, None, None) => game.start(),
                };
                let (start, games) = match (start, arena) {
                    (Start::Quick(_), Some(room)) => (Start::Join(room), 0),
                    (start, _) => (start, games),
                };
                let plan = bot_cmd::Plan {
                    games,
                    think: think_ms.map(Duration::from_millis),
                    sizes: bot_cmd::Sizes(sizes),
                    berserk,
                };
                Ok(run_bot(server.url()?, &name, mover, &start, plan).await?)
            }
        }
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // Errors may quote the server or another player: never raw control characters.
            eprintln!("ttt: {}", say::clean(&message.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// `ttt tournament`'s subcommands.
async fn tournament_cmd(command: tournament_cmd::args::TournamentCommand) -> Result<(), Error> {
    use tournament_cmd::args::TournamentCommand as T;
    match command {
        T::List { server, json } => Ok(tournament_cmd::list(server.url()?, json).await?),
        T::Create { server, name, account, size, win, clock, minutes, starts_in } => {
            let url = server.url()?;
            say::check_win(RequestedRules { size, win, clock: Some(clock) })?;
            // A bot account may create one too, when it is the only one saved.
            let account = account.or_else(|| accounts::only_name(url));
            let account = player_name(url, account);
            let terms = tournament_cmd::Creation {
                name,
                size,
                win,
                clock,
                duration_ms: minutes,
                starts_in_ms: starts_in,
            };
            Ok(tournament_cmd::create(url, &account, terms).await?)
        }
        T::Watch { server, id } => Ok(tournament_cmd::watch(server.url()?, &id).await?),
        T::Join { server, id, name } => {
            let url = server.url()?;
            Ok(play(url, &player_name(url, name), &Start::Tournament(id)).await?)
        }
    }
}

/// The room a match runner started this bot for (`TTT_JOIN`), to play
/// every game of until it closes.
fn arena_room() -> Option<String> {
    std::env::var("TTT_JOIN").ok().filter(|room| !room.trim().is_empty())
}

/// The name to play under: the one given, else the person's account saved
/// for this server, else a guest called "player".
fn player_name(url: &str, name: Option<String>) -> String {
    name.or_else(|| accounts::default_player(url)).unwrap_or_else(|| "player".to_owned())
}

async fn play(url: &str, name: &str, start: &Start) -> Result<(), PlayError> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        // A player's seat is kept on disk while a game lasts, and taken back
        // by the next `ttt play` if this one dies mid-game.
        // A tournament's games come one after another: none is kept to take back.
        let (link, resumed) = if matches!(start, Start::Watch(_) | Start::Tournament(_)) {
            (session::open(url, name, start).await?, None)
        } else {
            session::open_kept(url, name, start).await?
        };
        if let Some(result) = ui::screen::run(link, name, start, resumed).await? {
            println!("{}", say::clean(&result));
        }
        Ok(())
    } else if let Start::Tournament(id) = start {
        let why = format!(
            "playing a tournament needs a terminal; a script plays it with `{} bot --tournament {}`",
            say::invoked_as(),
            say::clean(id)
        );
        Err(session::SessionError::Refused(why).into())
    } else {
        ui::lines::run(session::open(url, name, start).await?, name, start).await
    }
}

async fn run_bot(
    url: &str,
    name: &str,
    mover: bot::Mover,
    start: &Start,
    plan: bot_cmd::Plan,
) -> Result<(), BotError> {
    let link = session::open(url, name, start).await?;
    if matches!(start, Start::Await) {
        eprintln!("ttt bot: {name} is waiting for challenges ({})", plan.sizes);
    }
    let tally = bot_cmd::run(link, start, name, mover, &plan).await?;
    // A tournament's bot has printed its own summary, with its rank.
    if !matches!(start, Start::Tournament(_)) {
        println!("{tally}");
    }
    Ok(())
}
