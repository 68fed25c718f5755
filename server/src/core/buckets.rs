//! Token buckets by client address: a burst at once, then a steady rate.
//! What one address may ask for that costs the server something it must
//! bound (registrations, cross-instance lookups).

use std::net::IpAddr;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

/// Most addresses remembered; past it, those whose bucket is full again
/// are forgotten (they would start full anyway).
pub const REMEMBERED: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// A token bucket per address: `burst` at once, then `per_second`; a
/// `per_second` of 0 is no limit.
#[derive(Debug)]
pub struct AddressBuckets {
    burst: f64,
    per_second: f64,
    buckets: FxHashMap<IpAddr, Bucket>,
}

impl AddressBuckets {
    /// Buckets of `burst` (at least one) refilled at `per_second`.
    pub fn new(burst: f64, per_second: f64) -> AddressBuckets {
        AddressBuckets { burst: burst.max(1.0), per_second, buckets: FxHashMap::default() }
    }

    /// The steady rate, per second.
    pub fn per_second(&self) -> f64 {
        self.per_second
    }

    /// Addresses remembered now.
    pub fn remembered(&self) -> usize {
        self.buckets.len()
    }

    /// Takes one token for `ip` at `now`, or says how long until one is
    /// free (rounded up to the millisecond, at least one: waiting exactly
    /// that long finds one).
    pub fn take(&mut self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.per_second == 0.0 {
            return Ok(());
        }
        let (per_second, burst) = (self.per_second, self.burst);
        let refilled = |b: &Bucket| {
            let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
            (b.tokens + elapsed * per_second).min(burst)
        };
        if self.buckets.len() >= REMEMBERED && !self.buckets.contains_key(&ip) {
            self.buckets.retain(|_, b| refilled(b) < burst);
        }
        let b = self.buckets.entry(ip).or_insert(Bucket { tokens: burst, at: now });
        b.tokens = refilled(b);
        b.at = now;
        // (A hair under one whole token is one: float sums of refills.)
        if b.tokens >= 1.0 - 1e-9 {
            b.tokens = (b.tokens - 1.0).max(0.0);
            return Ok(());
        }
        let wait = Duration::from_secs_f64((1.0 - b.tokens) / per_second);
        Err(Duration::from_millis((wait.as_nanos().div_ceil(1_000_000) as u64).max(1)))
    }

    /// Gives back a token taken for something that did not happen.
    pub fn refund(&mut self, ip: IpAddr) {
        if let Some(b) = self.buckets.get_mut(&ip) {
            b.tokens = (b.tokens + 1.0).min(self.burst);
        }
    }
}
