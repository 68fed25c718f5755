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
/// Closing is for a client that does not listen: a frame refused before the
/// time the last refusal named (`retry_after_ms`) is a strike, and more than
/// `max(rate, 10)` strikes in a row close the connection. A client that
/// waits as told is never closed, however often it meets the limit.
#[derive(Debug)]
pub struct RateLimit {
    rate: f64,
    tokens: f64,
    last: Instant,
    strikes: u32,
    /// When the last refusal said a frame would be accepted again.
    retry_at: Option<Instant>,
}

impl RateLimit {
    /// A full bucket for `rate` frames per second.
    pub fn new(rate: u32) -> Self {
        let now = Instant::now();
        RateLimit { rate: f64::from(rate), tokens: f64::from(rate), last: now, strikes: 0, retry_at: None }
    }

    /// Counts one frame arriving at `now`.
    pub fn check(&mut self, now: Instant) -> Verdict {
        if self.rate == 0.0 {
            return Verdict::Allow;
        }
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.rate);
        // A frame at or after the time it was told to wait for: it listened.
        if self.retry_at.is_some_and(|at| now >= at) {
            self.strikes = 0;
            self.retry_at = None;
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Verdict::Allow;
        }
        if self.retry_at.is_some() {
            self.strikes += 1;
            if f64::from(self.strikes) > self.rate.max(10.0) {
                return Verdict::Close;
            }
        }
        // Rounded up to the millisecond, so that a client waiting exactly
        // this long finds a whole token.
        let wait = Duration::from_secs_f64((1.0 - self.tokens) / self.rate);
        let wait = Duration::from_millis(wait.as_nanos().div_ceil(1_000_000) as u64);
        self.retry_at = Some(now + wait);
        Verdict::Refuse(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refuse_then_close_a_client_that_does_not_wait() {
        let mut r = RateLimit::new(10);
        let t = Instant::now();
        for _ in 0..10 {
            assert_eq!(r.check(t), Verdict::Allow);
        }
        // The first refusal names the wait; each frame before it is a strike.
        for _ in 0..11 {
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

    /// A client that always waits as told meets the limit again and again
    /// (bursts of twice the rate) and is never closed.
    #[test]
    fn a_client_that_waits_as_told_is_never_closed() {
        let mut r = RateLimit::new(10);
        let mut t = Instant::now();
        for _ in 0..1000 {
            for _ in 0..20 {
                match r.check(t) {
                    Verdict::Allow => {}
                    Verdict::Refuse(wait) => t += wait,
                    Verdict::Close => panic!("an obedient client was closed"),
                }
            }
        }
    }
}
