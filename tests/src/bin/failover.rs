//! `failover`: how long a cluster takes to adopt a dead instance's games.
//! Two instances of the real binary on a throwaway Postgres and Redis (from
//! Debian's packages); each round starts a fresh instance, plays `--games`
//! games on it to their second move, SIGKILLs it, and times (from the kill)
//! the other instance's adopting them and the first player's resuming
//! there. Prints the p50 and the max over `--kills` rounds. The binary is
//! this checkout's (built), or `$TTT_SERVER_BIN`.

use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};
use tictactoe_tests::TempDir;
use tictactoe_tests::postgres::shared;
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::redis::{Redis, instance_flags};

/// Times adoption after SIGKILLs in a cluster of two.
#[derive(Parser)]
#[command(name = "failover")]
struct Args {
    /// Rounds: instances killed.
    #[arg(long, default_value_t = 10)]
    kills: usize,
    /// Games in progress on the instance at each kill.
    #[arg(long, default_value_t = 20)]
    games: usize,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let pg = shared();
    let url = pg.database("failover");
    let redis = Redis::start();
    let spill = TempDir::new("failover");
    let start = |name: &str| {
        let flags = instance_flags(&url, &redis, name, &spill.path, &["--reconnect-grace-ms", "60000"]);
        ServerProcess::start(&flags.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let survivor = start("survivor");
    let (mut adopted, mut resumed) = (Vec::new(), Vec::new());
    for k in 0..args.kills {
        let doomed = start(&format!("doomed{k}"));
        let mut tokens = Vec::new();
        let mut players = Vec::new();
        for _ in 0..args.games {
            match game(&doomed).await {
                Ok((token, pair)) => {
                    tokens.push(token);
                    players.push(pair);
                }
                Err(e) => {
                    eprintln!("failover: a game could not be set up: {e}");
                    return std::process::ExitCode::FAILURE;
                }
            }
        }
        // Past the 100 ms a crash may lose.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let seen = adoptions(&survivor);
        doomed.signal("KILL");
        let killed = Instant::now();
        let deadline = killed + Duration::from_secs(30);
        let mut resume_took = None;
        let mut adopt_took = None;
        while (resume_took.is_none() || adopt_took.is_none()) && Instant::now() < deadline {
            if adopt_took.is_none() && adoptions(&survivor) > seen {
                adopt_took = Some(killed.elapsed());
            }
            if resume_took.is_none() {
                let mut c = survivor.client().await;
                c.send(json!({"type": "resume", "token": tokens[0]})).await;
                if c.recv_any(&["state", "error"]).await["type"] == "state" {
                    resume_took = Some(killed.elapsed());
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (Some(a), Some(r)) = (adopt_took, resume_took) else {
            eprintln!("failover: round {k}: the games were not adopted within 30 s");
            return std::process::ExitCode::FAILURE;
        };
        println!(
            "failover: round {k}: adopted {} ms, a player resumed {} ms after the kill",
            a.as_millis(),
            r.as_millis()
        );
        adopted.push(a);
        resumed.push(r);
        drop(players);
        drop(doomed);
    }
    let summary = |xs: &mut Vec<Duration>| {
        xs.sort();
        (xs[xs.len() / 2].as_millis(), xs.last().map_or(0, |x| x.as_millis()))
    };
    let (ap50, amax) = summary(&mut adopted);
    let (rp50, rmax) = summary(&mut resumed);
    println!(
        "failover: {} kills, {} games in progress at each: kill -> adopted p50 {ap50} ms, max {amax} ms; \
         kill -> a player resumed on the other instance p50 {rp50} ms, max {rmax} ms",
        args.kills, args.games
    );
    std::process::ExitCode::SUCCESS
}

/// How many adoptions `server` has logged.
fn adoptions(server: &ServerProcess) -> usize {
    server.log().iter().filter(|l| l.contains("adopted the games")).count()
}

/// A game on `server` played to its second move: X's resume token, and both players.
async fn game(server: &ServerProcess) -> Result<(Value, [tictactoe_tests::Client; 2]), String> {
    let (mut a, mut b) = (server.client().await, server.client().await);
    a.send(json!({"type": "create_room"})).await;
    let room = a.recv_type("room_created").await["room"].clone();
    b.send(json!({"type": "join_room", "room": room})).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    let (mut x, mut o, token) = match sa["you"] == 1 {
        true => (a, b, sa["resume_token"].clone()),
        false => (b, a, sb["resume_token"].clone()),
    };
    x.play(0, 0).await;
    o.recv_type("moved").await;
    o.play(1, 1).await;
    x.recv_type("moved").await;
    Ok((token, [x, o]))
}
