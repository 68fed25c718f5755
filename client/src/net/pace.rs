//! Pacing our sending under the server's announced rate limit, decided from
//! an injected `now` so that it is tested without sleeping.

use std::time::{Duration, Instant};

/// Keeps our sending under the server's announced rate limit (at 90% of it,
/// for margin), so that a fast bot never meets `rate_limited`.
#[derive(Debug)]
pub struct Pace {
    rate: f64,
    tokens: f64,
    last: Instant,
    /// Nothing is sent before this: the server said when to retry.
    hold: Option<Instant>,
}

impl Pace {
    /// A full bucket for a server allowing `per_second` messages.
    pub fn new(per_second: u32, now: Instant) -> Pace {
        let rate = f64::from(per_second) * 0.9;
        Pace { rate, tokens: rate.max(1.0), last: now, hold: None }
    }

    /// Holds every frame until `until` (the server's `retry_after_ms`).
    pub fn hold(&mut self, until: Instant) {
        self.hold = Some(until);
    }

    /// Takes one frame's room: when, at `now` or later, it may go.
    pub fn take(&mut self, now: Instant) -> Instant {
        let mut at = now;
        if let Some(until) = self.hold.take() {
            at = at.max(until);
        }
        if self.rate <= 0.0 {
            return at;
        }
        let earned = at.saturating_duration_since(self.last).as_secs_f64() * self.rate;
        self.tokens = (self.tokens + earned).min(self.rate.max(1.0));
        self.last = at;
        if self.tokens < 1.0 {
            at += Duration::from_secs_f64((1.0 - self.tokens) / self.rate);
            self.tokens = 1.0;
            self.last = at;
        }
        self.tokens -= 1.0;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_sends_at_once_then_paces() {
        let t0 = Instant::now();
        // 10 a second at 90%: 9 frames at once, then one every 1/9 s.
        let mut pace = Pace::new(10, t0);
        for _ in 0..9 {
            assert_eq!(pace.take(t0), t0);
        }
        let next = pace.take(t0);
        assert!(next > t0 && next - t0 <= Duration::from_millis(112), "{:?}", next - t0);
    }

    #[test]
    fn a_hold_delays_the_next_frame_once() {
        let t0 = Instant::now();
        let mut pace = Pace::new(10, t0);
        pace.hold(t0 + Duration::from_secs(1));
        assert_eq!(pace.take(t0), t0 + Duration::from_secs(1));
        assert_eq!(pace.take(t0 + Duration::from_secs(1)), t0 + Duration::from_secs(1));
    }

    #[test]
    fn no_limit_means_no_wait() {
        let t0 = Instant::now();
        let mut pace = Pace::new(0, t0);
        for _ in 0..100 {
            assert_eq!(pace.take(t0), t0);
        }
    }
}
