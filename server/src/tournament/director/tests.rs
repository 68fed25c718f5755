use super::*;
use crate::store::tournaments::{Entrant, TournamentRow};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tictactoe_protocol::tournament::Terms;
use tictactoe_protocol::{EndReason, Fischer, Player};

const START: i64 = 1_000_000;
const MINUTE: i64 = 60_000;

fn data(players: usize) -> TournamentData {
    let clock = Fischer { initial_ms: 10_000, increment_ms: 0 };
    let terms = Terms { name: "sim".into(), size: 3, win: 3, clock, duration_ms: MINUTE as u64 };
    let row = TournamentRow { id: "T1".into(), terms, created_by: "p0".into(), starts_at: START };
    let entrants = (0..players)
        .map(|i| Entrant { account: i as i64, name: format!("p{i}").into(), paused: false })
        .collect();
    TournamentData { row, entrants, games: Vec::new() }
}

fn game(id: usize, x: &str, o: &str, ended_at: i64, rng: &mut StdRng) -> ScoredGame {
    let (winner, reason, plies) = match rng.random_range(0..10) {
        0 => (None, EndReason::Draw, 9),
        1 => (None, EndReason::Aborted, 1),
        2..=5 => (Some(Player::X), EndReason::Line, 5),
        _ => (Some(Player::O), EndReason::Timeout, 6),
    };
    ScoredGame {
        id: format!("g{id:04}").into(),
        ended_at,
        players: [x.into(), o.into()],
        winner,
        reason,
        moves: [plies - plies / 2, plies / 2],
        berserk: [rng.random_bool(0.2), rng.random_bool(0.2)],
        ratings: [Some(1500), Some(1500)],
    }
}

#[test]
fn nobody_is_paired_before_the_start_or_after_the_end() {
    let d = Director::new(data(4));
    let free = || (0..4).map(|i| (i, format!("p{i}"))).collect::<Vec<_>>();
    assert!(d.pair(free(), START - 1).is_empty());
    assert_eq!(d.pair(free(), START).len(), 2);
    assert!(d.pair(free(), START + MINUTE).is_empty(), "the time is up: no new game");
}

#[test]
fn an_account_on_two_connections_is_paired_once_and_never_with_itself() {
    let d = Director::new(data(3));
    let free = vec![(1, "p0".to_owned()), (2, "p0".to_owned()), (3, "p1".to_owned())];
    assert_eq!(d.pair(free, START), [(1, 3)]);
    assert!(d.pair(vec![(1, "p0".to_owned()), (2, "p0".to_owned())], START).is_empty());
}

/// Many simulated players over a whole tournament: games end at random
/// moments (some after the end), records arrive late, out of order and
/// twice; pairing never stalls or repeats needlessly, and the standings
/// are the rule's over each game once.
#[test]
fn a_simulated_tournament_pairs_without_stalls_and_counts_every_game_once() {
    for seed in 0..20 {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = rng.random_range(2..24);
        let mut d = Director::new(data(n));
        let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        let mut busy_until: Vec<Option<(i64, usize)>> = vec![None; n];
        let mut store: Vec<ScoredGame> = Vec::new();
        let mut pending: Vec<(i64, ScoredGame)> = Vec::new();
        let mut next_id = 0;
        let mut now = START;
        while now < START + MINUTE + 20_000 {
            // Games that end now are recorded (and read) a little later.
            for (i, slot) in busy_until.iter_mut().enumerate() {
                if let Some((end, g)) = *slot {
                    if end <= now {
                        *slot = None;
                        let _ = (i, g);
                    }
                }
            }
            let (ready, later): (Vec<_>, Vec<_>) = pending.drain(..).partition(|(at, _)| *at <= now);
            pending = later;
            for (_, g) in ready {
                store.push(g.clone());
                if rng.random_bool(0.3) {
                    store.push(g); // the same record read twice
                }
            }
            let mut fresh = data(n);
            fresh.games = store.clone();
            d.refresh(fresh);
            // Those free (not in a game, and whose last record is in).
            let free: Vec<(usize, String)> = (0..n)
                .filter(|&i| busy_until[i].is_none())
                .filter(|&i| !pending.iter().any(|(_, g)| g.players.contains(&names[i])))
                .map(|i| (i, names[i].clone()))
                .collect();
            let pairs = d.pair(free.clone(), now);
            if d.status(now) == TournamentStatus::Running {
                assert!(
                    free.len() - 2 * pairs.len() <= 1,
                    "seed {seed}: {} free, {} pairs",
                    free.len(),
                    pairs.len()
                );
            } else {
                assert!(pairs.is_empty());
            }
            let last = d.data.last_opponents();
            let seen: Vec<Free<usize>> = free
                .iter()
                .map(|(k, name)| Free { key: *k, name: name.clone(), rank: 0, last: last.get(name).cloned() })
                .collect();
            assert!(!tournament::needless_rematch(&seen, &pairs), "seed {seed}: {pairs:?}");
            for &(a, b) in &pairs {
                let end = now + rng.random_range(1_000..15_000);
                let g = game(next_id, &names[a], &names[b], end, &mut rng);
                next_id += 1;
                busy_until[a] = Some((end, next_id));
                busy_until[b] = Some((end, next_id));
                pending.push((end + rng.random_range(0..500), g));
            }
            now += 1_000;
        }
        for (_, g) in pending.drain(..) {
            store.push(g);
        }
        let mut fresh = data(n);
        fresh.games = store.clone();
        d.refresh(fresh);
        let view = d.view(now);
        let mut once: Vec<ScoredGame> = Vec::new();
        for g in store {
            if !once.iter().any(|o| o.id == g.id) {
                once.push(g);
            }
        }
        assert_eq!(view.games.len(), once.len(), "seed {seed}: every game once");
        let late = once.iter().filter(|g| g.ended_at >= START + MINUTE).count();
        let players: Vec<(String, bool)> = names.iter().map(|n| (n.clone(), false)).collect();
        assert_eq!(
            view.standings,
            tictactoe_protocol::tournament::standings(&d.data.row.terms, &players, &once)
        );
        let counted: u32 = view.standings.iter().map(|s| s.games).sum();
        let aborted = once.iter().filter(|g| g.reason == EndReason::Aborted).count() as u32;
        assert_eq!(counted, 2 * (once.len() as u32 - aborted), "seed {seed}: late games ({late}) count too");
    }
}

#[test]
fn an_update_goes_out_only_when_the_view_changed() {
    let mut d = Director::new(data(2));
    assert!(d.update(START).is_some());
    assert!(d.update(START + 10).is_none());
    let mut rng = StdRng::seed_from_u64(1);
    let mut fresh = data(2);
    fresh.games = vec![game(1, "p0", "p1", START + 5, &mut rng)];
    d.refresh(fresh);
    assert!(d.update(START + 20).is_some());
    assert!(d.update(START + MINUTE).is_some(), "finished is news");
}
