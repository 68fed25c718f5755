//! The tournament task's shell: requests and the store's answers in,
//! frames and pairings out. Store calls run in tasks of their own and come
//! back as [`Done`], so a slow commit holds nobody else's request. Every
//! [`PASS`] it pairs the free players of the tournaments its connections
//! joined; every [`READ`] it reads those tournaments (and those watched)
//! and pushes their standings where they changed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tictactoe_protocol::{ServerMessage, tournament::TournamentStatus};
use tokio::sync::mpsc;

use super::TournamentCmd;
use super::director::Director;
use crate::cluster::tournaments::FreePlayer;
use crate::cmd::{Ask, ConnHandle, LobbyCmd, encode};
use crate::core::account::Identity;
use crate::core::ids::ConnId;
use crate::core::presence::{Presence, Status};
use crate::store::record::unix_ms;
use crate::store::tournaments::TournamentData;
use crate::store::{Store, StoreError};

mod requests;

/// How often the task reads its tournaments and pairs their free players.
pub const PASS: Duration = Duration::from_millis(250);

/// How often the task reads each tournament it follows from the store.
pub const READ: Duration = Duration::from_secs(1);

/// A player paired in a pass is not paired again for this long (the
/// lobby may not have drafted it yet, or found it gone): less than a pass,
/// so a player whose game ended in between is paired at the next one.
const PAIRED_FOR: Duration = Duration::from_millis(500);

/// A player drafted this long ago and still not in its game (the opponent
/// went, or its instance did) is free again.
const DRAFT_LAPSES: Duration = Duration::from_secs(5);

/// Most requests waiting in the task's inbox.
const INBOX: usize = 4096;

/// What the task needs of the server.
pub struct Ctx {
    /// Tournaments, entrants and records.
    pub store: Store,
    /// Where games are opened.
    pub lobby: mpsc::Sender<LobbyCmd>,
    /// The task ends when the server stops.
    pub shutdown: crate::core::signal::Shutdown,
    /// In a cluster: where this instance's free players are written for
    /// the leader to pair, and whether the bus is up (while it is down,
    /// this instance pairs its own players).
    pub cluster: Option<(tokio::sync::watch::Sender<Vec<FreePlayer>>, Arc<crate::cluster::bus::BusState>)>,
}

/// Starts the task; its inbox.
pub fn spawn(ctx: Ctx, tracker: &tokio_util::task::TaskTracker) -> mpsc::Sender<TournamentCmd> {
    let (tx, rx) = mpsc::channel(INBOX);
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let task = Task {
        ctx,
        directors: HashMap::new(),
        members: HashMap::new(),
        watchers: HashMap::new(),
        reading: HashSet::new(),
        read_at: HashMap::new(),
        done: done_tx,
        rng: rand::SeedableRng::from_rng(&mut rand::rng()),
    };
    tracker.spawn(task.run(rx, done_rx));
    tx
}

/// A connection that joined a tournament here.
struct Member {
    conn: ConnHandle,
    who: Arc<Identity>,
    presence: Arc<Presence>,
    tournament: Arc<str>,
    /// Joined, not paused.
    active: bool,
    /// Free since this pass, for the pairing wait.
    free_since: Option<Instant>,
    /// Paired at (here): not paired again for [`PAIRED_FOR`].
    paired_at: Option<Instant>,
    /// First seen drafted at: a draft that lapses frees it.
    drafted_seen: Option<Instant>,
}

/// A store call's answer, back in the task.
enum Done {
    /// Send this to the connection.
    Reply(ConnHandle, ServerMessage),
    /// A join or pause was written: the tournament as it is now.
    Joined {
        conn: ConnHandle,
        who: Arc<Identity>,
        presence: Arc<Presence>,
        data: TournamentData,
        active: bool,
    },
    /// A watch: the tournament as it is now.
    Watched { conn: ConnHandle, data: TournamentData },
    /// A pass's read of a tournament (`Err`: the store could not answer;
    /// what was read before stands).
    Read(Arc<str>, Result<Option<TournamentData>, StoreError>),
}

struct Task {
    ctx: Ctx,
    directors: HashMap<Arc<str>, Director>,
    members: HashMap<ConnId, Member>,
    watchers: HashMap<ConnId, (ConnHandle, Arc<str>)>,
    /// Tournaments whose read is on its way.
    reading: HashSet<Arc<str>>,
    /// When each was last asked of the store.
    read_at: HashMap<Arc<str>, Instant>,
    done: mpsc::UnboundedSender<Done>,
    rng: rand::rngs::StdRng,
}

fn now_ms() -> i64 {
    unix_ms(SystemTime::now())
}

impl Task {
    async fn run(
        mut self,
        mut inbox: mpsc::Receiver<TournamentCmd>,
        mut done: mpsc::UnboundedReceiver<Done>,
    ) {
        let mut pass = tokio::time::interval(PASS);
        pass.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let stop = self.ctx.shutdown.clone();
        loop {
            tokio::select! {
                _ = stop.started() => break,
                cmd = inbox.recv() => match cmd {
                    Some(cmd) => self.handle(cmd),
                    None => break,
                },
                Some(d) = done.recv() => self.done(d),
                _ = pass.tick() => self.pass(Instant::now()),
            }
        }
    }

    /// Runs a store call in a task of its own; its answer comes back as [`Done`].
    fn call(&self, work: impl Future<Output = Option<Done>> + Send + 'static) {
        let done = self.done.clone();
        tokio::spawn(async move {
            if let Some(d) = work.await {
                let _ = done.send(d);
            }
        });
    }

    fn handle(&mut self, cmd: TournamentCmd) {
        match cmd {
            TournamentCmd::Ask { conn, who, presence, ask, id } => self.ask(conn, who, presence, ask, id),
        }
    }

    fn done(&mut self, done: Done) {
        match done {
            Done::Reply(conn, msg) => {
                if let ServerMessage::Error { code, .. } = &msg {
                    crate::metrics::refused(*code);
                }
                conn.frame(&encode(&msg));
            }
            Done::Joined { conn, who, presence, data, active } => {
                let tid = data.row.id.clone();
                let member = Member {
                    conn: conn.clone(),
                    who,
                    presence,
                    tournament: tid.clone(),
                    active,
                    free_since: None,
                    paired_at: None,
                    drafted_seen: None,
                };
                self.members.insert(conn.id, member);
                self.show(conn, data);
            }
            Done::Watched { conn, data } => {
                self.watchers.insert(conn.id, (conn.clone(), data.row.id.clone()));
                self.show(conn, data);
            }
            Done::Read(tid, data) => {
                self.reading.remove(&tid);
                match data {
                    Err(_) => {}
                    Ok(Some(data)) => {
                        self.directors
                            .entry(tid.clone())
                            .or_insert_with(|| Director::new(data.clone()))
                            .refresh(data);
                        self.publish(&tid);
                    }
                    Ok(None) => {
                        self.directors.remove(&tid);
                    }
                }
            }
        }
    }

    /// Answers a join, pause or watch with the tournament as it is, and
    /// tells the others if that changed it.
    fn show(&mut self, conn: ConnHandle, data: TournamentData) {
        let tid = data.row.id.clone();
        let view = data.view(now_ms());
        conn.frame(&encode(&ServerMessage::TournamentUpdate { tournament: Box::new(view) }));
        self.directors.entry(tid.clone()).or_insert_with(|| Director::new(data.clone())).refresh(data);
        self.publish(&tid);
    }

    /// Sends the tournament's standings to everyone here who joined or
    /// watches it, if they changed since last sent.
    fn publish(&mut self, tid: &Arc<str>) {
        let Some(view) = self.directors.get_mut(tid).and_then(|d| d.update(now_ms())) else { return };
        let frame = encode(&ServerMessage::TournamentUpdate { tournament: Box::new(view) });
        let members = self.members.values().filter(|m| m.tournament == *tid).map(|m| &m.conn);
        let watchers = self.watchers.values().filter(|(_, t)| t == tid).map(|(c, _)| c);
        for conn in members.chain(watchers) {
            conn.frame(&frame);
        }
    }

    /// Reads every tournament followed here, frees drafts that lapsed, and
    /// pairs the free players of those running.
    fn pass(&mut self, now: Instant) {
        self.members.retain(|_, m| !m.conn.is_closed());
        self.watchers.retain(|_, (c, _)| !c.is_closed());
        let followed: HashSet<Arc<str>> = self
            .members
            .values()
            .map(|m| m.tournament.clone())
            .chain(self.watchers.values().map(|(_, t)| t.clone()))
            .collect();
        self.directors.retain(|tid, _| followed.contains(tid));
        self.read_at.retain(|tid, _| followed.contains(tid));
        for tid in followed {
            let due = self.read_at.get(&tid).is_none_or(|at| now.saturating_duration_since(*at) >= READ);
            if due && self.reading.insert(tid.clone()) {
                self.read_at.insert(tid.clone(), now);
                let store = self.ctx.store.clone();
                self.call(async move {
                    let data = store.tournament(&tid).await;
                    Some(Done::Read(tid, data))
                });
            }
        }
        let now_ms = now_ms();
        for m in self.members.values_mut() {
            let status = m.presence.status();
            m.drafted_seen = (status == Status::Drafted).then(|| m.drafted_seen.unwrap_or(now));
            if m.drafted_seen.is_some_and(|at| now.saturating_duration_since(at) >= DRAFT_LAPSES) {
                m.presence.swap(Status::Drafted, Status::Idle).ok();
                m.drafted_seen = None;
            }
            let free = m.active && m.presence.status() == Status::Idle;
            m.free_since = if free { m.free_since.or(Some(now)) } else { None };
        }
        let running =
            self.directors.values().filter(|d| d.status(now_ms) == TournamentStatus::Running).count();
        ::metrics::gauge!("ttt_tournaments_running").set(running as f64);
        ::metrics::gauge!("ttt_tournament_players")
            .set(self.members.values().filter(|m| m.active).count() as f64);
        let mut published = Vec::new();
        let led = self.ctx.cluster.as_ref().is_some_and(|(_, bus)| bus.up());
        for d in self.directors.values() {
            let free: Vec<(ConnId, String)> = self
                .members
                .iter()
                .filter(|(_, m)| m.tournament == *d.id() && m.free_since.is_some())
                .filter(|(_, m)| m.paired_at.is_none_or(|at| now.saturating_duration_since(at) >= PAIRED_FOR))
                .map(|(id, m)| (*id, m.who.name.to_string()))
                .collect();
            if led {
                let (tournament, rules) = (d.id().clone(), d.rules());
                published.extend(d.free(free, now_ms).into_iter().map(|f| FreePlayer {
                    tournament: tournament.clone(),
                    rules,
                    conn: f.key.seq(),
                    name: f.name,
                    rank: f.rank,
                    last: f.last,
                    ends_at: d.ends_at(),
                    waited_ms: self.members.get(&f.key).and_then(|m| m.free_since).map_or(0, |since| {
                        u64::try_from(now.saturating_duration_since(since).as_millis()).unwrap_or(u64::MAX)
                    }),
                }));
                continue;
            }
            for (a, b) in d.pair(free, now_ms) {
                let opponent = b.seq();
                if let Some(b) = self.members.get_mut(&b) {
                    b.paired_at = Some(now);
                    waited(b.free_since.take().map(|since| now.saturating_duration_since(since)));
                }
                if let Some(a) = self.members.get_mut(&a) {
                    meet(&self.ctx.lobby, a, (d.rules(), d.ends_at()), opponent, now);
                }
            }
        }
        if let Some((free, _)) = &self.ctx.cluster {
            free.send_replace(published);
        }
    }
}

/// Records how long a player just paired was free (as passes saw it).
fn waited(free: Option<Duration>) {
    if let Some(free) = free {
        ::metrics::histogram!("ttt_tournament_pairing_wait_seconds").record(free.as_secs_f64());
    }
}

/// Drafts the member here and asks the lobby for its game against
/// `opponent`, a member here too; a member no longer free is left be.
fn meet(
    lobby: &mpsc::Sender<LobbyCmd>,
    m: &mut Member,
    (rules, ends_at): (tictactoe_protocol::Rules, i64),
    opponent: u64,
    now: Instant,
) {
    if !m.active || m.presence.swap(Status::Idle, Status::Drafted).is_err() {
        return;
    }
    m.paired_at = Some(now);
    waited(m.free_since.take().map(|since| now.saturating_duration_since(since)));
    ::metrics::counter!("ttt_tournament_pairings_total").increment(1);
    let ask = Ask::TournamentMeet {
        who: m.who.clone(),
        tournament: m.tournament.clone(),
        rules,
        opponent,
        at: None,
        ends_at,
    };
    if lobby.try_send(LobbyCmd::Ask { conn: m.conn.clone(), ask }).is_err() {
        m.presence.swap(Status::Drafted, Status::Idle).ok();
    }
}
