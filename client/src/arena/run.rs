//! A match from start to end: the players, openings and server set up,
//! game pairs played `--concurrency` at a time, the statistics printed
//! every few pairs and at the end, stopping when the SPRT decides, the
//! pairs are played, or Ctrl-C.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tictactoe_protocol::Game;

use super::args::ArenaArgs;
use super::match_args::MatchArgs;
use super::openings::{self, Openings};
use super::pair::{self, Terms};
use super::players::Player;
use super::progress::Progress;
use super::results::{ResultsFile, Tally};
use super::server::PrivateServer;
use super::stats::{self, Sprt};

/// The statistics are printed every this many pairs.
const REPORT_EVERY: u64 = 10;

/// Plays the match `arena` asks for; the error says why it could not go on.
pub async fn run(arena: ArenaArgs) -> Result<(), String> {
    let [first, second] = arena.players.as_slice() else {
        return Err(format!(
            "a match is between two players (ttt arena PLAYER1 PLAYER2 …), not {}",
            arena.players.len()
        ));
    };
    let players = Player::pair(first, second)?;
    let sprt = arena.sprt.sprt();
    let args = arena.play;
    let size = args.size;
    let win = args.win.unwrap_or(size);
    Game::with_win(size, win).map_err(|e| format!("--size {size} --win {win}: {e}"))?;
    let (mut openings, openings_name) = match (&args.openings, args.random_openings) {
        (Some(path), _) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let list = openings::parse(&text, size, win).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            (Openings::Listed(list), name)
        }
        (None, Some(plies)) => {
            let seed = args.seed.unwrap_or_else(rand::random);
            println!("Random openings of {plies} moves, seed {seed} (--seed {seed} plays them again)");
            (Openings::random(plies, seed), format!("random {plies}-move openings"))
        }
        (None, None) => (Openings::Empty, "no openings".to_owned()),
    };
    let mut results = args.results.as_deref().map(ResultsFile::create).transpose()?;
    let private = match &args.server {
        Some(_) => None,
        None => Some(PrivateServer::start().await?),
    };
    let server = args.server.clone().or_else(|| private.as_ref().map(|p| p.url.clone())).unwrap_or_default();
    let clock = args.clock.map_or("per-move timer".to_owned(), |c| {
        format!("{}+{}", c.initial_ms as f64 / 1000.0, c.increment_ms as f64 / 1000.0)
    });
    let title = format!(
        "{} vs {} ({size}x{size} win {win}, {clock}, {openings_name})",
        players[0].name, players[1].name
    );
    let terms = Terms { server, size, win, clock: args.clock, players };
    let outcome = play_pairs(&args, &terms, &mut openings, sprt.as_ref(), results.as_mut(), &title).await;
    if let Some(private) = private {
        private.stop().await;
    }
    outcome
}

/// Plays pairs until the end, printing the statistics; an error still
/// prints what was played before it.
async fn play_pairs(
    args: &MatchArgs,
    terms: &Terms,
    openings: &mut Openings,
    sprt: Option<&Sprt>,
    mut results: Option<&mut ResultsFile>,
    title: &str,
) -> Result<(), String> {
    let mut tally = Tally::default();
    let mut progress = Progress::new();
    let mut running = FuturesUnordered::new();
    let mut started = 0u64;
    let mut reported = 0u64;
    let mut decision = None;
    let mut failed = None;
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    loop {
        while decision.is_none()
            && failed.is_none()
            && started < args.pairs
            && running.len() < args.concurrency.max(1)
        {
            let opening = openings.next(started as usize, terms.size, terms.win);
            running.push(async move { pair::play(terms, &opening).await });
            started += 1;
        }
        progress.show(&tally, args.pairs, running.len(), sprt);
        if running.is_empty() {
            break;
        }
        tokio::select! {
            Some(done) = running.next() => match done {
                Ok(games) => {
                    for game in &games {
                        if let Some(file) = results.as_deref_mut() {
                            file.write(game).map_err(|e| format!("cannot write the results: {e}"))?;
                        }
                    }
                    if let [first, second] = &games[..] {
                        tally.add_pair(first, second);
                    }
                    decision = sprt.and_then(|t| t.decision(&tally.ptnml));
                    // The last pairs' block is the one printed at the end.
                    let last = tally.ptnml.pairs() >= args.pairs;
                    if tally.ptnml.pairs() >= reported + REPORT_EVERY && decision.is_none() && !last {
                        reported = tally.ptnml.pairs();
                        progress.clear();
                        println!("{}", stats::report(title, &tally.ptnml, &tally.wdl, sprt));
                    }
                }
                Err(e) => failed = Some(e.to_string()),
            },
            _ = &mut interrupt => {
                progress.clear();
                eprintln!("ttt arena: interrupted; the statistics so far:");
                break;
            }
        }
        if decision.is_some() || failed.is_some() {
            // Games in flight are abandoned: the answer is known, or the match cannot go on.
            break;
        }
    }
    drop(running);
    progress.clear();
    print!("{}", stats::report(title, &tally.ptnml, &tally.wdl, sprt));
    if let Some(decision) = decision {
        println!("{decision}");
    }
    failed.map_or(Ok(()), Err)
}
