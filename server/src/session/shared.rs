//! What every connection task shares: configuration, the lobby's inbox,
//! counters, the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::cmd::LobbyCmd;
use crate::config::Config;
use crate::core::ids::ConnId;
use crate::core::signal::Shutdown;
use crate::core::stats::Stats;

/// What every connection task shares: configuration, the lobby's inbox, counters.
pub struct Shared {
    pub(crate) config: Config,
    pub(crate) ws_config: WebSocketConfig,
    pub(crate) lobby: mpsc::Sender<LobbyCmd>,
    /// The tournament task's inbox.
    pub(crate) tournaments: mpsc::Sender<crate::tournament::TournamentCmd>,
    pub(crate) stats: Arc<Stats>,
    pub(crate) shutdown: Shutdown,
    /// The `welcome` frame, serialized once.
    pub(crate) welcome: Utf8Bytes,
    pub(crate) next_id: AtomicU64,
    /// Present when the server speaks `wss://`.
    pub(crate) tls: Option<tokio_rustls::TlsAcceptor>,
    /// Accounts and records.
    pub(crate) store: crate::store::Store,
    /// This instance's name (`--instance`, else random).
    pub(crate) instance: Arc<str>,
    /// Whether the cluster's bus is reachable (with `--redis`).
    pub(crate) bus: Option<Arc<crate::cluster::bus::BusState>>,
    /// In a cluster, done once a stopping instance has let its games go
    /// (saved, for another to adopt): its connections close after it, so
    /// that a player who comes back at once finds the game adopted.
    pub(crate) handed_over: Option<tokio_util::sync::CancellationToken>,
    /// The caps on connections.
    pub(crate) admission: Arc<crate::session::admission::Admission>,
    /// What sessions check requests against.
    pub(crate) limits: Arc<crate::session::Limits>,
    /// Registrations per address.
    pub(crate) registrations: crate::session::registrations::Registrations,
}

impl Shared {
    pub(crate) fn next_conn_id(&self) -> ConnId {
        ConnId::new(crate::core::ids::ALONE, self.next_id.fetch_add(1, Ordering::Relaxed))
    }
}
