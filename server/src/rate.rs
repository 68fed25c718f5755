//! The per-connection token bucket that counts every inbound data frame.

use std::time::Duration;
use tokio::time::Instant;

/// What to do with one inbound frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within the limit: act on it.
    Allow,
    /// Over the limit: refuse with `rate_limited`, do not act on it; a frame
    /// is accepted again after this long.
    Refuse(Duration),
    /// Still flooding after refusals: close with 1008.
    Close,
}

/// Refilled at `rate` frames per second with a burst of `rate`; 0 = no limit.
/// A client refused more than `max(rate, 10)` times with less than a second
/// between refusals is closed.
#[derive(Debug)]
pub struct RateLimit {
    rate: f64,
    tokens: f64,
    last: Instant,
    strikes: u32,
    last_strike: Instant,
}

impl RateLimit {
    /// A full bucket for `rate` frames per second.
    pub fn new(rate: u32) -> Self {
        let now = Instant::now();
        RateLimit { rate: f64::from(rate), tokens: f64::from(rate), last: now, strikes: 0, last_strike: now }
    }

    /// Counts one frame arriving at `now`.
    pub fn check(&mut self, now: Instant) -> Verdict {
        if self.rate == 0.0 {
            return Verdict::Allow;
        }
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.rate);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Verdict::Allow;
        }
        if now.saturating_duration_since(self.last_strike) > Duration::from_secs(1) {
            self.strikes = 0;
        }
        self.strikes += 1;
        self.last_strike = now;
        if f64::from(self.strikes) > self.rate.max(10.0) {
            return Verdict::Close;
        }
        // Rounded up to the millisecond, so that a client waiting exactly
        // this long finds a whole token.
        let wait = Duration::from_secs_f64((1.0 - self.tokens) / self.rate);
        Verdict::Refuse(Duration::from_millis(wait.as_nanos().div_ceil(1_000_000) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refuse_then_close() {
        let mut r = RateLimit::new(10);
        let t = Instant::now();
        for _ in 0..10 {
            assert_eq!(r.check(t), Verdict::Allow);
        }
        for _ in 0..10 {
            // An empty bucket at 10 per second refills one frame in 100 ms.
            assert_eq!(r.check(t), Verdict::Refuse(Duration::from_millis(100)));
        }
        assert_eq!(r.check(t), Verdict::Close);
    }

    #[test]
    fn refills_and_forgives() {
        let mut r = RateLimit::new(10);
        let t = Instant::now();
        for _ in 0..10 {
            r.check(t);
        }
        assert_eq!(r.check(t), Verdict::Refuse(Duration::from_millis(100)));
        // 40 ms later, 60 ms are left; waiting them is enough.
        let t = t + Duration::from_millis(40);
        assert_eq!(r.check(t), Verdict::Refuse(Duration::from_millis(60)));
        assert_eq!(r.check(t + Duration::from_millis(60)), Verdict::Allow);
        let later = t + Duration::from_millis(1500);
        assert_eq!(r.check(later), Verdict::Allow);
        assert_eq!(RateLimit::new(0).check(t), Verdict::Allow);
    }
}
