//! Token buckets by client address: a burst at once, then a steady rate.
//! What one address may ask for that costs the server something it must
//! bound (registrations, cross-instance lookups).

use std::net::{IpAddr, Ipv6Addr};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

/// Most addresses remembered; past it, those whose bucket is full again
/// are forgotten (they would start full anyway).
pub const REMEMBERED: usize = 10_000;

/// While every address remembered is in use, new addresses share this one
/// bucket (`::` is nobody's address): many addresses at once (an IPv6
/// block holds billions) get one address's rate between them, and neither
/// the table nor the time spent on it grows with them.
const OVERFLOW: IpAddr = IpAddr::V6(Ipv6Addr::UNSPECIFIED);

/// How often a full table is swept for buckets full again: at most once a
/// while, not once per new address.
const SWEEP: Duration = Duration::from_secs(1);

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
    /// When a full table was last swept.
    swept: Option<Instant>,
}

impl AddressBuckets {
    /// Buckets of `burst` (at least one) refilled at `per_second`.
    pub fn new(burst: f64, per_second: f64) -> AddressBuckets {
        AddressBuckets { burst: burst.max(1.0), per_second, buckets: FxHashMap::default(), swept: None }
    }

    /// Addresses remembered now.
    pub fn remembered(&self) -> usize {
        self.buckets.len()
    }

    /// Takes one token for `ip` at `now`, or says how long until one is
    /// free (rounded up to the millisecond, at least one: waiting exactly
    /// that long finds one). An address not remembered while the table is
    /// full of buckets in use takes from the shared [`OVERFLOW`] bucket.
    pub fn take(&mut self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.per_second == 0.0 {
            return Ok(());
        }
        let (per_second, burst) = (self.per_second, self.burst);
        let refilled = |b: &Bucket| {
            let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
            (b.tokens + elapsed * per_second).min(burst)
        };
        let mut key = ip;
        if self.buckets.len() >= REMEMBERED && !self.buckets.contains_key(&ip) {
            if self.swept.is_none_or(|at| now.saturating_duration_since(at) >= SWEEP) {
                self.buckets.retain(|_, b| refilled(b) < burst);
                self.swept = Some(now);
            }
            if self.buckets.len() >= REMEMBERED {
                key = OVERFLOW;
            }
        }
        let b = self.buckets.entry(key).or_insert(Bucket { tokens: burst, at: now });
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
        let key = if self.buckets.contains_key(&ip) { ip } else { OVERFLOW };
        if let Some(b) = self.buckets.get_mut(&key) {
            b.tokens = (b.tokens + 1.0).min(self.burst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many addresses at once, each still in use: the table stays bounded
    /// and the newcomers share one address's burst; once buckets are full
    /// again, a newcomer has a bucket of its own.
    #[test]
    fn past_the_addresses_remembered_newcomers_share_one_bucket() {
        let mut buckets = AddressBuckets::new(3.0, 1.0);
        let t = Instant::now();
        for n in 0..REMEMBERED as u32 {
            assert_eq!(buckets.take(IpAddr::from(n.to_be_bytes()), t), Ok(()));
        }
        let newcomer = |n: u128| IpAddr::from((0x2001_0db8_u128 << 96 | n).to_be_bytes());
        for n in 0..3 {
            assert_eq!(buckets.take(newcomer(n), t), Ok(()), "the shared burst");
        }
        assert_eq!(buckets.take(newcomer(3), t), Err(Duration::from_secs(1)), "shared, and spent");
        assert!(buckets.remembered() <= REMEMBERED + 1, "{}", buckets.remembered());
        // A remembered address keeps its own bucket meanwhile.
        assert_eq!(buckets.take(IpAddr::from(7u32.to_be_bytes()), t), Ok(()));
        // Two seconds on every bucket is full again: swept, and a newcomer
        // is remembered by itself.
        let later = t + Duration::from_secs(2);
        assert_eq!(buckets.take(newcomer(4), later), Ok(()));
        assert!(buckets.remembered() < 10, "{}", buckets.remembered());
        assert_eq!(buckets.take(newcomer(4), later), Ok(()));
        assert_eq!(buckets.take(newcomer(4), later), Ok(()));
        assert!(buckets.take(newcomer(4), later).is_err(), "its own burst of 3");
    }
}
