//! Who gets a socket: the caps on TCP connections (per address, in all) and
//! on WebSocket players and kept-alive HTTP clients apart, and a summary of
//! the refusals in the log at most once a second (a flood of refused
//! connections must not become a flood of log lines).

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Connections that may be in their handshake at once beyond the players'
/// and HTTP clients' caps: each lives at most `--handshake-timeout-ms`.
pub const HANDSHAKES: usize = 1024;

/// Why a connection was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnedAway {
    /// Every socket the server allows is taken.
    Full,
    /// Its address has `--max-connections-per-ip` open.
    PerIp,
    /// A WebSocket upgrade with `--max-connections` players connected.
    Players,
    /// A plain HTTP request with `--max-http-connections` kept alive: it is
    /// answered, then the connection closes.
    Http,
}

impl TurnedAway {
    const ALL: [TurnedAway; 4] = [TurnedAway::Full, TurnedAway::PerIp, TurnedAway::Players, TurnedAway::Http];

    fn name(self) -> &'static str {
        match self {
            TurnedAway::Full => "sockets",
            TurnedAway::PerIp => "per_ip",
            TurnedAway::Players => "players",
            TurnedAway::Http => "http",
        }
    }
}

/// The caps, shared by the accept loop and the HTTP side.
#[derive(Debug)]
pub struct Admission {
    sockets: Arc<Semaphore>,
    players: Arc<Semaphore>,
    http: Arc<Semaphore>,
    per_ip: usize,
    open: Mutex<FxHashMap<IpAddr, usize>>,
    refused: [AtomicU64; 4],
    /// What the last summary said, per reason.
    logged: [AtomicU64; 4],
}

/// A connection's place among its address's: given back when dropped.
#[derive(Debug)]
pub struct AddressPlace {
    admission: Arc<Admission>,
    ip: IpAddr,
    _socket: OwnedSemaphorePermit,
}

impl Drop for AddressPlace {
    fn drop(&mut self) {
        let mut open = self.admission.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

impl Admission {
    /// Caps of `players` WebSocket connections, `http` kept-alive HTTP
    /// connections and `per_ip` connections from one address.
    pub fn new(players: usize, http: usize, per_ip: usize) -> Arc<Admission> {
        Arc::new(Admission {
            sockets: Arc::new(Semaphore::new(players + http + HANDSHAKES)),
            players: Arc::new(Semaphore::new(players)),
            http: Arc::new(Semaphore::new(http)),
            per_ip,
            open: Mutex::default(),
            refused: Default::default(),
            logged: Default::default(),
        })
    }

    /// A place for a new TCP connection from `ip`, or why not.
    pub fn accept(self: &Arc<Self>, ip: IpAddr) -> Result<AddressPlace, TurnedAway> {
        let Ok(socket) = self.sockets.clone().try_acquire_owned() else {
            return Err(self.refuse(TurnedAway::Full));
        };
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(ip).or_insert(0);
        if *n >= self.per_ip {
            drop(open);
            return Err(self.refuse(TurnedAway::PerIp));
        }
        *n += 1;
        Ok(AddressPlace { admission: self.clone(), ip, _socket: socket })
    }

    /// A player's place, taken at the WebSocket upgrade; `None` when full.
    pub fn player(&self) -> Option<OwnedSemaphorePermit> {
        let permit = self.players.clone().try_acquire_owned().ok();
        if permit.is_none() {
            self.refuse(TurnedAway::Players);
        }
        permit
    }

    /// A kept-alive HTTP client's place; `None` when full (the request is
    /// answered and the connection closes).
    pub fn http(&self) -> Option<OwnedSemaphorePermit> {
        let permit = self.http.clone().try_acquire_owned().ok();
        if permit.is_none() {
            self.refuse(TurnedAway::Http);
        }
        permit
    }

    fn refuse(&self, why: TurnedAway) -> TurnedAway {
        self.refused[why as usize].fetch_add(1, Ordering::Relaxed);
        why
    }

    /// Refusals by reason since the start, for `/metrics`.
    pub fn refusals(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        TurnedAway::ALL.iter().map(|&r| (r.name(), self.refused[r as usize].load(Ordering::Relaxed)))
    }

    /// Logs the refusals since the last call, if any: one line.
    pub fn summarize(&self) {
        let mut parts = Vec::new();
        for r in TurnedAway::ALL {
            let now = self.refused[r as usize].load(Ordering::Relaxed);
            let before = self.logged[r as usize].swap(now, Ordering::Relaxed);
            if now > before {
                parts.push(format!("{}={}", r.name(), now - before));
            }
        }
        if !parts.is_empty() {
            tracing::warn!(
                "connections refused since the last summary: {} (caps: --max-connections, \
                 --max-http-connections, --max-connections-per-ip)",
                parts.join(" ")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_gets_its_cap_and_its_places_back() {
        let a = Admission::new(10, 2, 3);
        let ip: IpAddr = [127, 0, 0, 1].into();
        let other: IpAddr = [127, 0, 0, 2].into();
        let places: Vec<_> = (0..3).map(|_| a.accept(ip).expect("a place")).collect();
        assert_eq!(a.accept(ip).err(), Some(TurnedAway::PerIp));
        assert!(a.accept(other).is_ok(), "another address has its own");
        drop(places);
        assert!(a.accept(ip).is_ok(), "places come back");
        let (h1, h2) = (a.http(), a.http());
        assert!(h1.is_some() && h2.is_some());
        assert!(a.http().is_none());
        let refused: Vec<_> = a.refusals().collect();
        assert_eq!(refused, [("sockets", 0), ("per_ip", 1), ("players", 0), ("http", 1)]);
    }
}
