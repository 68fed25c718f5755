//! How many cross-instance lookups one client address may cause: each is a
//! Redis round trip of the bus's worker, which also writes presence and
//! runs the matchmaker's pass, so an address flooding `join_room`,
//! `spectate` or `resume` with codes nobody here runs must not be able to
//! slow every player's lookups and pairings.
//!
//! Counted twice: by each instance for the connections whose sockets it
//! holds, before Redis is asked (a flood from one instance's clients never
//! reaches Redis), and across the cluster by Redis itself, in the script
//! that makes the lookup (`bus/calls.rs`), so an address spread over many
//! instances gets one budget, at no round trip of its own.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use tictactoe_protocol::{ErrorCode, ServerMessage};

use super::Router;
use crate::cmd::{Ask, ConnHandle, Outbound, encode};
use crate::core::buckets::AddressBuckets;

/// Lookups an address may cause per second, once its burst is spent (the
/// default of `--lookups-per-second-per-ip`). A person joins, watches or
/// resumes a room now and then, a page that reconnects resumes once; ten a
/// second from one address is a script trying codes (or very many players
/// behind one NAT, who are told to wait, not refused for good).
pub const LOOKUPS_PER_SECOND: u32 = 10;

/// An address's burst, in seconds' worth of lookups: 20 at once by default,
/// for a household or a classroom behind one address joining together.
pub const BURST_SECONDS: u32 = 2;

/// A token bucket per address: [`BURST_SECONDS`] worth at once, then
/// `per_second`; a `per_second` of 0 is no limit.
#[derive(Debug)]
pub struct Budget {
    buckets: AddressBuckets,
    per_second: u32,
}

/// What Redis charges a lookup to: the asking address's bucket, shared by
/// every instance, with the same burst and rate as each instance's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Charge {
    /// The client's address.
    pub ip: IpAddr,
    /// Lookups at once.
    pub burst: u32,
    /// Lookups a second, once the burst is spent.
    pub per_second: u32,
}

impl Charge {
    /// The Redis key of this address's bucket.
    pub fn key(&self) -> String {
        // An IPv4 client seen through an IPv6 socket is the same client.
        format!("ttt:lookups:{}", self.ip.to_canonical())
    }
}

impl Budget {
    /// The budget of `per_second` lookups per address.
    pub fn new(per_second: u32) -> Budget {
        let burst = f64::from(per_second.saturating_mul(BURST_SECONDS));
        Budget { buckets: AddressBuckets::new(burst, f64::from(per_second)), per_second }
    }

    /// Takes one lookup for `ip` at `now`, or says how long until one is free.
    pub fn take(&mut self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        self.buckets.take(ip, now)
    }
}

impl Router {
    /// The same router, with a budget of `per_second` lookups per client
    /// address (`--lookups-per-second-per-ip`; 0 = no limit).
    pub fn lookups_per_second(mut self, per_second: u32) -> Router {
        self.budget = Budget::new(per_second);
        self
    }

    /// Whether `conn`'s address may have `ask` looked up now; if not, the
    /// request is refused with `rate_limited` (its `id` echoed) and no
    /// lookup is made. A connection with no address here (a ghost) is not
    /// counted: its own instance counted it.
    pub(super) fn afford(&mut self, conn: &ConnHandle, ask: &Ask) -> bool {
        let Some(ip) = conn.ip() else { return true };
        let Err(wait) = self.budget.take(ip, self.now) else { return true };
        self.refuse(conn, ask, wait);
        false
    }

    /// What Redis is to charge `conn`'s lookup to across the cluster, if
    /// anything (no limit, or a ghost: its own instance charges it).
    pub(super) fn charge(&self, conn: &ConnHandle) -> Option<Charge> {
        let per_second = self.budget.per_second;
        if per_second == 0 {
            return None;
        }
        let burst = per_second.saturating_mul(BURST_SECONDS);
        conn.ip().map(|ip| Charge { ip, burst, per_second })
    }

    /// Refuses `conn`'s `ask` with `rate_limited` (its `id` echoed): its
    /// address may look a room up again after `wait`.
    pub(super) fn refuse(&mut self, conn: &ConnHandle, ask: &Ask, wait: Duration) {
        let id = match ask {
            Ask::JoinRoom { id, .. } | Ask::Spectate { id, .. } | Ask::Resume { id, .. } => id.clone(),
            _ => None,
        };
        let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let message = format!(
            "more than {} rooms a second looked for from your address; wait {wait_ms} ms",
            self.budget.per_second
        );
        let refusal = ServerMessage::Error {
            code: ErrorCode::RateLimited,
            message,
            id,
            retry_after_ms: Some(wait_ms),
            game_id: None,
        };
        crate::metrics::refused(ErrorCode::RateLimited);
        ::metrics::counter!("ttt_relay_lookups_refused_total").increment(1);
        conn.frame(&encode(&refusal));
        conn.send(Outbound::Refused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::buckets::REMEMBERED;

    #[test]
    fn a_burst_then_ten_a_second_per_address() {
        let mut budget = Budget::new(LOOKUPS_PER_SECOND);
        let (ip, other): (IpAddr, IpAddr) = ([127, 0, 0, 1].into(), [127, 0, 0, 2].into());
        let t = Instant::now();
        for _ in 0..20 {
            assert_eq!(budget.take(ip, t), Ok(()));
        }
        assert_eq!(budget.take(ip, t), Err(Duration::from_millis(100)));
        assert_eq!(budget.take(other, t), Ok(()), "another address has its own");
        assert_eq!(budget.take(ip, t + Duration::from_millis(40)), Err(Duration::from_millis(60)));
        assert_eq!(budget.take(ip, t + Duration::from_millis(100)), Ok(()));
        assert!(budget.take(ip, t + Duration::from_millis(100)).is_err());
        assert_eq!(budget.take(ip, t + Duration::from_secs(3)), Ok(()), "full again after a while");
        let mut off = Budget::new(0);
        assert!((0..100).all(|_| off.take(ip, t).is_ok()), "0 is no limit");
    }

    #[test]
    fn the_addresses_remembered_are_bounded() {
        let mut budget = Budget::new(LOOKUPS_PER_SECOND);
        let t = Instant::now();
        for n in 0..(REMEMBERED as u32 + 5) {
            let ip = IpAddr::from(n.to_be_bytes());
            assert_eq!(budget.take(ip, t), Ok(()));
            // Full again a second later: forgettable.
        }
        let later = t + Duration::from_secs(1);
        assert_eq!(budget.take([10, 0, 0, 1].into(), later), Ok(()));
        assert!(budget.buckets.remembered() <= REMEMBERED, "{}", budget.buckets.remembered());
    }
}
