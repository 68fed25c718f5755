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
/// Closing is for a client that does not listen: after a refusal, a frame
/// that comes sooner after the one before it than the wait it was told
/// (`retry_after_ms`) is a strike, and more than `max(rate, 10)` strikes with
/// no such wait between them close the connection. Gaps between frames are
/// what count, not the moment the server reads them: a flood read slowly is
/// still a flood. A client that waits as told is never closed, however often
/// it meets the limit.
#[derive(Debug)]
pub struct RateLimit {
    rate: f64,
    tokens: f64,
    /// When the last frame came.
    last: Instant,
    strikes: u32,
    /// The wait the last refusal told, until the client waits that long.
    told: Duration,
}

impl RateLimit {
    /// A full bucket for `rate` frames per second.
    pub fn new(rate: u32) -> Self {
        let now = Instant::now();
        RateLimit {
            rate: f64::from(rate),
            tokens: f64::from(rate),
            last: now,
            strikes: 0,
            told: Duration::ZERO,
        }
    }

    /// Counts one frame arriving at `now`.
    pub fn check(&mut self, now: Instant) -> Verdict {
        if self.rate == 0.0 {
            return Verdict::Allow;
        }
        let gap = now.saturating_duration_since(self.last);
        self.last = now;
        self.tokens = (self.tokens + gap.as_secs_f64() * self.rate).min(self.rate);
        // It left at least the wait it was told before this frame: it listened.
        if gap >= self.told {
            self.strikes = 0;
            self.told = Duration::ZERO;
        }
        // (A hair under one whole token is one: float sums of refills.)
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            return Verdict::Allow;
        }
        if !self.told.is_zero() {
            self.strikes += 1;
            if f64::from(self.strikes) > self.rate.max(10.0) {
                return Verdict::Close;
            }
        }
        // Rounded up to the millisecond, so that a client waiting exactly
        // this long finds a whole token.
        let wait = Duration::from_secs_f64((1.0 - self.tokens) / self.rate);
        let wait = Duration::from_millis((wait.as_nanos().div_ceil(1_000_000) as u64).max(1));
        self.told = wait;
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

    /// A flood read slowly (its frames spaced by the server's reading, far
    /// less than the wait told) is closed all the same, though tokens trickle in.
    #[test]
    fn a_flood_read_slowly_is_still_closed() {
        let mut r = RateLimit::new(200);
        let mut t = Instant::now();
        let mut closed = false;
        for _ in 0..2000 {
            t += Duration::from_micros(25);
            if r.check(t) == Verdict::Close {
                closed = true;
                break;
            }
        }
        assert!(closed);
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
