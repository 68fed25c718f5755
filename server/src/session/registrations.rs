//! How many accounts one address may register: a burst, then a steady rate.
//! Registrations are rare, so one lock over a small map is enough; nothing
//! on the move path touches it.

use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::core::buckets::AddressBuckets;

/// A token bucket per address: `burst` registrations at once, then
/// `per_minute`. A `per_minute` of 0 turns the limit off.
#[derive(Debug)]
pub struct Registrations {
    buckets: Mutex<AddressBuckets>,
}

impl Registrations {
    /// The limit: `burst` at once, then `per_minute`.
    pub fn new(burst: u32, per_minute: u32) -> Self {
        let buckets = AddressBuckets::new(f64::from(burst), f64::from(per_minute) / 60.0);
        Registrations { buckets: Mutex::new(buckets) }
    }

    /// Takes one registration for `ip` at `now`, or says how long until one is free.
    pub fn take(&self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        self.buckets.lock().unwrap_or_else(|p| p.into_inner()).take(ip, now)
    }

    /// Gives back a registration that did not happen (the name was taken).
    pub fn refund(&self, ip: IpAddr) {
        self.buckets.lock().unwrap_or_else(|p| p.into_inner()).refund(ip);
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
