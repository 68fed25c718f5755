//! The cluster phase's arena tournament: bots spread over both instances
//! play it while the pairs play theirs; the instance killed is the one that
//! directs it (the matchmaker's leader, which pairs every instance's
//! tournament players). Afterwards, asked of the survivor: the games counted
//! before the kill still are, in the same order; games started after it
//! (the tournament went on elsewhere); every game once; the standings are
//! the records'.

use std::net::SocketAddr;

use serde_json::json;
use tictactoe_protocol::tournament::TournamentView;
use tokio::task::JoinHandle;

use super::Fallible;
use crate::arena::check;
use crate::arena::{Log, Plan, bot, now_ms};

/// The tournament and its bots.
pub(super) struct Arena {
    id: String,
    bots: Vec<JoinHandle<Log>>,
    /// Its standings as the directing instance showed them just before the kill.
    before: Option<TournamentView>,
}

/// Runs `checks` (which assert) in a task of its own: a failed assertion is an error.
async fn caught<T: Send + 'static>(checks: impl Future<Output = T> + Send + 'static) -> Fallible<T> {
    tokio::spawn(checks).await.map_err(|e| match e.try_into_panic() {
        Ok(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a check panicked".to_owned()),
        Err(e) => e.to_string(),
    })
}

impl Arena {
    /// Creates a tournament on the first of `urls` (the instance to be
    /// killed) and sets four bots playing in it, two at home on each
    /// instance, until `quit_at` (Unix ms).
    pub(super) async fn start(urls: &[String; 2], quit_at: i64) -> Fallible<Arena> {
        let (url, urls) = (urls[0].clone(), urls.clone());
        let tag = now_ms() % 10_000;
        caught(async move {
            let mut organiser = crate::Client::connect(&url).await;
            let name = format!("organiser-{tag}");
            let token = organiser.register(&name, false).await;
            organiser.sign_in(&name, &token).await;
            organiser
                .send(json!({"type": "tournament_create", "name": "chaos arena",
                    "clock": {"initial_ms": 10_000, "increment_ms": 500}, "duration_ms": 60_000}))
                .await;
            let t = organiser.recv_type("tournament").await;
            let id = t["id"].as_str().expect("a tournament id").to_owned();
            let ends_at = t["ends_at"].as_i64().expect("ends_at");
            let bots = ["perfect", "heuristic", "random", "random"]
                .into_iter()
                .enumerate()
                .map(|(i, strategy)| {
                    let plan = Plan {
                        think_ms: 100..300,
                        quit_at: Some(quit_at),
                        ..Plan::new(&format!("arena-{strategy}-{i}-{tag}"), strategy)
                    };
                    let home = [urls[i % 2].clone(), urls[1 - i % 2].clone()].to_vec();
                    tokio::spawn(bot::play(home, plan, id.clone(), ends_at))
                })
                .collect();
            Arena { id, bots, before: None }
        })
        .await
    }

    /// Just before `killed` is: checks it directs the tournament, and keeps its standings.
    pub(super) async fn before_kill(&mut self, killed: SocketAddr) -> Fallible<()> {
        let (_, metrics) = crate::http_get(killed, "/metrics").await;
        if !metrics.lines().any(|l| l.starts_with("ttt_matchmaker_leading 1")) {
            return Err(
                "arena: the instance about to be killed does not lead: it does not direct the tournament"
                    .into(),
            );
        }
        let id = self.id.clone();
        self.before = Some(caught(async move { check::view(killed, &id).await }).await?);
        Ok(())
    }

    /// Once the bots stopped: checks the tournament as `survivor` shows it;
    /// a line of figures.
    pub(super) async fn judge(self, survivor: SocketAddr, killed_at: i64) -> Fallible<String> {
        let mut logs = Vec::new();
        for b in self.bots {
            logs.push(caught(async move { b.await.expect("a bot") }).await?);
        }
        let (id, before) = (self.id, self.before.ok_or("arena: no standings before the kill")?);
        caught(async move {
            let view = check::view(survivor, &id).await;
            let records = check::records(survivor, &view).await;
            let unseen = check::games_seen(&logs, &view, &records, true);
            check::standings_match(&view, &records);
            assert!(before.games.iter().all(|g| view.games.contains(g)), "arena: a game lost: {before:?}");
            for row in &before.standings {
                let now = view.standings.iter().find(|s| s.name == row.name).expect("still a row");
                assert!(now.results.starts_with(&row.results), "arena: {row:?} became {now:?}");
            }
            let after = records.iter().filter(|r| check::unix_ms(&r.started_at) > killed_at).count();
            assert!(after > 0, "arena: no tournament game started after the kill");
            format!(
                "; arena tournament across the kill of its director: {} games ({} before it, {after} started after, \
                 {unseen} ended by it unseen), standings as the records'",
                view.games.len(),
                before.games.len()
            )
        })
        .await
    }
}
