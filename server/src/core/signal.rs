//! The server's shutdown signal, and [`Armed`]: polling a timer or signal only
//! when it may have fired, so that a task's idle loop turn costs no lock.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Tells every task that the server is shutting down: a token to wait on,
/// and a flag that says so without the token's lock.
#[derive(Clone, Default)]
pub struct Shutdown {
    token: CancellationToken,
    stopping: Arc<AtomicBool>,
}

impl Shutdown {
    /// Starts the shutdown: the flag first, then the token wakes the waiters.
    pub fn trigger(&self) {
        self.stopping.store(true, Ordering::Release);
        self.token.cancel();
    }

    /// Whether the shutdown has started; a load, no lock.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Completes once the shutdown starts.
    pub async fn started(&self) {
        self.token.cancelled().await
    }

    /// A waiter to keep for a task's life (pinned once, polled through [`Armed`]).
    pub fn waiter(&self) -> WaitForCancellationFutureOwned {
        self.token.clone().cancelled_owned()
    }
}

/// A timer or signal polled only when it may have fired: its first poll
/// registers the task's waker, which it keeps until it fires, so polling it on
/// every turn of a task's loop would only repeat that registration.
#[derive(Default)]
pub struct Armed {
    /// Polled since it last fired or was reset.
    polled: bool,
}

impl Armed {
    /// Polls `fut` unless it has been polled and `may_be_ready` is false.
    pub fn poll<F: Future>(
        &mut self,
        fut: Pin<&mut F>,
        may_be_ready: bool,
        cx: &mut Context<'_>,
    ) -> Poll<F::Output> {
        if self.polled && !may_be_ready {
            return Poll::Pending;
        }
        // Out of co-operative budget, a timer returns Pending unregistered.
        let budget = tokio::task::coop::has_budget_remaining();
        let r = fut.poll(cx);
        self.polled = budget && r.is_pending();
        r
    }
}
