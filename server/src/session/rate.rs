//! The per-connection token bucket that counts every inbound data frame.

use std::time::Duration;
use tokio::time::Instant;

/// What to do with one inbound frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateVerdict {
    /// Within the limit: act on it.
    Allow,
    /// Over the limit: refuse with `rate_limited`, do not act on it; a frame
    /// is accepted again after this long.
    Refuse(Duration),
    /// Still flooding after refusals: close with 1008.
    Close,
}

/// Refilled at `rate` frames per second with a burst of `rate`; 0 = no limit.
/// Closing is for a client that does not listen. When frames arrive is
/// unknowable here (only when they are read, and a busy server reads a
/// pipelined flood slowly), so what counts is the mix: a client that waits
/// the `retry_after_ms` it was told gets an accepted frame for about every
/// refused one, whereas a flood gets almost only refusals. More than
/// `max(rate, 10)` refusals, with more than [`FLOOD`] refused frames for
/// each accepted one, in a spell of refusals (no second without one),
/// close the connection. A client that waits as told is never closed.
#[derive(Debug)]
pub struct RateLimit {
    rate: f64,
    tokens: f64,
    last: Instant,
    /// Refused and accepted frames since the spell of refusals began.
    refused: u32,
    accepted: u32,
    /// The last refusal: a second without one ends the spell.
    last_refusal: Option<Instant>,
}

/// Refused frames per accepted one, in a spell, past which it is a flood.
pub const FLOOD: u32 = 4;

impl RateLimit {
    /// A full bucket for `rate` frames per second, at `now`.
    pub fn new(rate: u32, now: Instant) -> Self {
        RateLimit {
            rate: f64::from(rate),
            tokens: f64::from(rate),
            last: now,
            refused: 0,
            accepted: 0,
            last_refusal: None,
        }
    }

    /// Counts one frame read at `now`.
    pub fn check(&mut self, now: Instant) -> RateVerdict {
        if self.rate == 0.0 {
            return RateVerdict::Allow;
        }
        let gap = now.saturating_duration_since(self.last);
        self.last = now;
        self.tokens = (self.tokens + gap.as_secs_f64() * self.rate).min(self.rate);
        if self.last_refusal.is_some_and(|at| now.saturating_duration_since(at) > Duration::from_secs(1)) {
            (self.refused, self.accepted, self.last_refusal) = (0, 0, None);
        }
        // (A hair under one whole token is one: float sums of refills.)
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            if self.last_refusal.is_some() {
                self.accepted += 1;
            }
            return RateVerdict::Allow;
        }
        self.refused += 1;
        self.last_refusal = Some(now);
        if f64::from(self.refused) > self.rate.max(10.0) && self.refused > FLOOD * self.accepted.max(1) {
            return RateVerdict::Close;
        }
        // Rounded up to the millisecond, so that a client waiting exactly
        // this long finds a whole token.
        let wait = Duration::from_secs_f64((1.0 - self.tokens) / self.rate);
        RateVerdict::Refuse(Duration::from_millis((wait.as_nanos().div_ceil(1_000_000) as u64).max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refuse_then_close_a_client_that_does_not_wait() {
        let mut r = RateLimit::new(10, Instant::now());
        let t = Instant::now();
        for _ in 0..10 {
            assert_eq!(r.check(t), RateVerdict::Allow);
        }
        // Eleven refusals and nothing accepted: a flood.
        for _ in 0..10 {
            assert_eq!(r.check(t), RateVerdict::Refuse(Duration::from_millis(100)));
        }
        assert_eq!(r.check(t), RateVerdict::Close);
    }

    #[test]
    fn refills_and_forgives() {
        let mut r = RateLimit::new(10, Instant::now());
        let t = Instant::now();
        for _ in 0..10 {
            r.check(t);
        }
        assert_eq!(r.check(t), RateVerdict::Refuse(Duration::from_millis(100)));
        // 40 ms later, 60 ms are left; waiting them is enough.
        let t = t + Duration::from_millis(40);
        assert_eq!(r.check(t), RateVerdict::Refuse(Duration::from_millis(60)));
        assert_eq!(r.check(t + Duration::from_millis(60)), RateVerdict::Allow);
        let later = t + Duration::from_millis(1500);
        assert_eq!(r.check(later), RateVerdict::Allow);
        assert_eq!(RateLimit::new(0, Instant::now()).check(t), RateVerdict::Allow);
    }

    /// A flood read slowly (frames spaced by the server's reading, with a
    /// pause of 10 ms now and then: a busy server) is closed all the same,
    /// though tokens trickle in.
    #[test]
    fn a_flood_read_slowly_is_still_closed() {
        let mut r = RateLimit::new(200, Instant::now());
        let mut t = Instant::now();
        let mut closed = None;
        for i in 0..600 {
            t += Duration::from_micros(if i % 128 == 0 { 10_000 } else { 25 });
            if r.check(t) == RateVerdict::Close {
                closed = Some(i);
                break;
            }
        }
        assert!(closed.is_some_and(|i| i < 600), "{closed:?}");
    }

    /// A client that always waits as told meets the limit again and again
    /// (bursts of twice the rate) and is never closed.
    #[test]
    fn a_client_that_waits_as_told_is_never_closed() {
        let mut r = RateLimit::new(10, Instant::now());
        let mut t = Instant::now();
        for _ in 0..1000 {
            for _ in 0..20 {
                match r.check(t) {
                    RateVerdict::Allow => {}
                    RateVerdict::Refuse(wait) => t += wait,
                    RateVerdict::Close => panic!("an obedient client was closed"),
                }
            }
        }
    }
}
