//! How many accounts one address may register: a burst, then a steady rate.
//! Registrations are rare, so one lock over a small map is enough; nothing
//! on the move path touches it.

use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

/// Most addresses remembered; past it, those whose bucket is full again are forgotten.
const REMEMBERED: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// A token bucket per address: `burst` registrations at once, then
/// `per_minute`. A `per_minute` of 0 turns the limit off.
#[derive(Debug)]
pub struct Registrations {
    burst: f64,
    per_second: f64,
    buckets: Mutex<FxHashMap<IpAddr, Bucket>>,
}

impl Registrations {
    /// The limit: `burst` at once, then `per_minute`.
    pub fn new(burst: u32, per_minute: u32) -> Self {
        Registrations {
            burst: f64::from(burst.max(1)),
            per_second: f64::from(per_minute) / 60.0,
            buckets: Mutex::default(),
        }
    }

    fn refill(&self, b: &mut Bucket, now: Instant) {
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * self.per_second).min(self.burst);
        b.at = now;
    }

    /// Takes one registration for `ip` at `now`, or says how long until one is free.
    pub fn take(&self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.per_second == 0.0 {
            return Ok(());
        }
        let mut map = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= REMEMBERED && !map.contains_key(&ip) {
            let full = self.burst;
            let per_second = self.per_second;
            map.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * per_second < full
            });
        }
        let b = map.entry(ip).or_insert(Bucket { tokens: self.burst, at: now });
        self.refill(b, now);
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return Ok(());
        }
        let wait = Duration::from_secs_f64((1.0 - b.tokens) / self.per_second);
        Err(Duration::from_millis(wait.as_nanos().div_ceil(1_000_000) as u64))
    }

    /// Gives back a registration that did not happen (the name was taken).
    pub fn refund(&self, ip: IpAddr) {
        let mut map = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = map.get_mut(&ip) {
            b.tokens = (b.tokens + 1.0).min(self.burst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_a_second_and_refunds() {
        let r = Registrations::new(20, 60);
        let ip: IpAddr = [127, 0, 0, 1].into();
        let other: IpAddr = [127, 0, 0, 2].into();
        let t = Instant::now();
        for _ in 0..20 {
            assert_eq!(r.take(ip, t), Ok(()));
        }
        assert_eq!(r.take(ip, t), Err(Duration::from_secs(1)));
        assert_eq!(r.take(other, t), Ok(()), "another address has its own bucket");
        assert_eq!(r.take(ip, t + Duration::from_millis(400)), Err(Duration::from_millis(600)));
        assert_eq!(r.take(ip, t + Duration::from_secs(1)), Ok(()));
        r.refund(ip);
        assert_eq!(r.take(ip, t + Duration::from_secs(1)), Ok(()), "a refused name does not count");
        assert_eq!(Registrations::new(20, 0).take(ip, t), Ok(()));
    }
}
