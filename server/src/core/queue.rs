//! The bounded queues between tasks: many senders, one receiving task. A
//! connection's outbound queue (senders never wait; one that finds it full
//! kills it, and the connection drops its client) and a room's inbox (senders
//! wait for space). One uncontended lock per operation, no blocks of slots to
//! walk as in tokio's mpsc, nothing allocated while empty.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker, ready};
use tokio::task::coop;

/// Capacity kept by a queue that has drained; a burst's extra capacity is freed.
const KEPT_CAPACITY: usize = 8;

struct Channel<T> {
    inner: Mutex<Inner<T>>,
    /// Live senders; the receiver sees the end of the queue when it reaches 0.
    senders: AtomicUsize,
}

struct Inner<T> {
    items: VecDeque<T>,
    cap: usize,
    /// The receiver is gone or closed the queue.
    closed: bool,
    /// A sender killed the queue: its receiver fell behind.
    killed: bool,
    /// The receiving task's waker, kept between waits so that it is cloned
    /// once, not once per wait.
    waker: Option<Waker>,
    /// The receiver waits for `waker` to be woken.
    waiting: bool,
    /// Senders waiting for space.
    blocked: Vec<Waker>,
}

impl<T> Inner<T> {
    /// Records that the task behind `cx` waits for the queue to change.
    fn park(&mut self, cx: &Context<'_>) {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.waker = Some(cx.waker().clone());
        }
        self.waiting = true;
    }

    /// Wakes the receiver if it waits (scheduling a task: it never re-enters the queue).
    fn unpark(&mut self) {
        if std::mem::take(&mut self.waiting) {
            if let Some(w) = &self.waker {
                w.wake_by_ref();
            }
        }
    }
}

impl<T> Channel<T> {
    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        // Nothing panics while holding the lock, so poison carries no meaning.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why [`Sender::try_send`] did not queue an item, which it hands back.
#[derive(Debug, PartialEq, Eq)]
pub enum TrySendError<T> {
    /// The queue is full, or has been killed.
    Full(T),
    /// The receiver is gone.
    Closed(T),
}

/// What [`Receiver::recv`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Recv<T> {
    /// The next item.
    Item(T),
    /// Every sender is gone and the queue is empty.
    Ended,
    /// A sender killed the queue.
    Killed,
}

/// The sending side; cloning it adds a sender.
pub struct Sender<T> {
    shared: Arc<Channel<T>>,
}

/// The receiving side, owned by one task.
pub struct Receiver<T> {
    shared: Arc<Channel<T>>,
}

/// A queue holding at most `cap` items.
pub fn channel<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Channel {
        inner: Mutex::new(Inner {
            items: VecDeque::new(),
            cap: cap.max(1),
            closed: false,
            killed: false,
            waker: None,
            waiting: false,
            blocked: Vec::new(),
        }),
        senders: AtomicUsize::new(1),
    });
    (Sender { shared: shared.clone() }, Receiver { shared })
}

impl<T> Sender<T> {
    /// Queues `item` without waiting.
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        let mut inner = self.shared.lock();
        if inner.closed {
            return Err(TrySendError::Closed(item));
        }
        if inner.killed || inner.items.len() >= inner.cap {
            return Err(TrySendError::Full(item));
        }
        inner.items.push_back(item);
        inner.unpark();
        Ok(())
    }

    /// Queues `item` even beyond the capacity, without waiting; hands it back
    /// only if the receiver is gone (or the queue was killed). For the few
    /// commands that must not be lost and must not wait, each bounded by its
    /// sender's life (a connection's last word to a room).
    pub fn force_send(&self, item: T) -> Result<(), T> {
        let mut inner = self.shared.lock();
        if inner.closed || inner.killed {
            return Err(item);
        }
        inner.items.push_back(item);
        inner.unpark();
        Ok(())
    }

    /// Queues `item`, waiting while the queue is full; hands it back if the
    /// receiver is gone (or the queue was killed).
    pub async fn send(&self, item: T) -> Result<(), T> {
        let mut item = Some(item);
        poll_fn(|cx| {
            let mut inner = self.shared.lock();
            let Some(it) = item.take() else { return Poll::Ready(Ok(())) };
            if inner.closed || inner.killed {
                return Poll::Ready(Err(it));
            }
            if inner.items.len() >= inner.cap {
                item = Some(it);
                if !inner.blocked.iter().any(|w| w.will_wake(cx.waker())) {
                    inner.blocked.push(cx.waker().clone());
                }
                return Poll::Pending;
            }
            inner.items.push_back(it);
            inner.unpark();
            Poll::Ready(Ok(()))
        })
        .await
    }

    /// Kills the queue: the receiver is woken to find [`Recv::Killed`], and
    /// every later send fails.
    pub fn kill(&self) {
        let mut inner = self.shared.lock();
        inner.killed = true;
        inner.blocked.drain(..).for_each(Waker::wake);
        inner.unpark();
    }

    /// Whether the receiver is gone (or has closed the queue).
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Sender { shared: self.shared.clone() }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.lock().unpark();
        }
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> Receiver<T> {
    /// The next item; waits while the queue is empty, live and not killed.
    /// Each item spends tokio's co-operative budget, as tokio's channels do,
    /// so that a receiver that is never short of items still yields.
    pub async fn recv(&mut self) -> Recv<T> {
        poll_fn(|cx| {
            let coop = ready!(coop::poll_proceed(cx));
            let mut inner = self.shared.lock();
            match self.take(&mut inner) {
                Some(r) => {
                    coop.made_progress();
                    Poll::Ready(r)
                }
                None => {
                    inner.park(cx);
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// The next item if one is ready, without waiting.
    pub fn try_recv(&mut self) -> Option<Recv<T>> {
        let mut inner = self.shared.lock();
        self.take(&mut inner)
    }

    fn take(&self, inner: &mut Inner<T>) -> Option<Recv<T>> {
        // The receiver is awake; it parks again if it finds nothing.
        inner.waiting = false;
        if inner.killed {
            return Some(Recv::Killed);
        }
        if let Some(item) = inner.items.pop_front() {
            if inner.items.is_empty() && inner.items.capacity() > KEPT_CAPACITY {
                inner.items.shrink_to(KEPT_CAPACITY);
            }
            // Room for the senders that wait; they try again in turn.
            inner.blocked.drain(..).for_each(Waker::wake);
            return Some(Recv::Item(item));
        }
        if self.shared.senders.load(Ordering::Acquire) == 0 {
            return Some(Recv::Ended);
        }
        None
    }

    /// Completes once a sender has killed the queue.
    pub async fn killed(&self) {
        poll_fn(|cx| {
            let mut inner = self.shared.lock();
            if inner.killed {
                return Poll::Ready(());
            }
            inner.park(cx);
            Poll::Pending
        })
        .await
    }

    /// Refuses further items and hands back those already queued.
    pub fn close(&mut self) -> VecDeque<T> {
        let mut inner = self.shared.lock();
        inner.closed = true;
        inner.blocked.drain(..).for_each(Waker::wake);
        std::mem::take(&mut inner.items)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // Senders see at once that nobody reads the queue any more.
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll<F: std::future::Future>(f: F) -> Poll<F::Output> {
        let mut f = std::pin::pin!(f);
        f.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn items_come_out_in_order_and_the_queue_ends_with_its_senders() {
        let (tx, mut rx) = channel(4);
        let tx2 = tx.clone();
        assert_eq!(tx.try_send(1), Ok(()));
        assert_eq!(tx2.try_send(2), Ok(()));
        assert_eq!(poll(rx.recv()), Poll::Ready(Recv::Item(1)));
        assert_eq!(rx.try_recv(), Some(Recv::Item(2)));
        assert_eq!(rx.try_recv(), None);
        assert!(poll(rx.recv()).is_pending());
        drop(tx);
        assert!(poll(rx.recv()).is_pending(), "one sender is left");
        drop(tx2);
        assert_eq!(poll(rx.recv()), Poll::Ready(Recv::Ended));
    }

    #[test]
    fn force_send_goes_past_a_full_queue_but_not_a_closed_one() {
        let (tx, mut rx) = channel(1);
        assert_eq!(tx.try_send(1), Ok(()));
        assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
        assert_eq!(tx.force_send(3), Ok(()));
        assert_eq!(rx.try_recv(), Some(Recv::Item(1)));
        assert_eq!(rx.try_recv(), Some(Recv::Item(3)));
        rx.close();
        assert_eq!(tx.force_send(4), Err(4));
    }

    #[test]
    fn a_killed_queue_takes_nothing_more() {
        let (tx, mut rx) = channel(2);
        assert_eq!(tx.try_send(1), Ok(()));
        assert_eq!(tx.try_send(2), Ok(()));
        assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
        assert!(poll(rx.killed()).is_pending(), "full is not killed");
        tx.kill();
        assert!(poll(rx.killed()).is_ready());
        assert_eq!(rx.try_recv(), Some(Recv::Killed));
        assert_eq!(tx.try_send(4), Err(TrySendError::Full(4)));
        assert_eq!(poll(tx.send(5)), Poll::Ready(Err(5)));
    }

    #[tokio::test]
    async fn a_sender_waits_for_space_and_for_nothing_once_closed() {
        let (tx, mut rx) = channel(1);
        assert_eq!(tx.send(1).await, Ok(()));
        let tx2 = tx.clone();
        let waiter = tokio::spawn(async move { tx2.send(2).await });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "the queue is full");
        assert_eq!(rx.recv().await, Recv::Item(1));
        assert!(matches!(waiter.await, Ok(Ok(()))));
        assert_eq!(rx.recv().await, Recv::Item(2));
        assert_eq!(tx.send(3).await, Ok(()));
        let tx3 = tx.clone();
        let waiter = tokio::spawn(async move { tx3.send(4).await });
        tokio::task::yield_now().await;
        assert_eq!(rx.close().into_iter().collect::<Vec<_>>(), [3]);
        assert!(matches!(waiter.await, Ok(Err(4))), "a closed queue hands the item back");
    }

    #[test]
    fn a_closed_queue_refuses_and_returns_what_it_held() {
        let (tx, mut rx) = channel(4);
        assert_eq!(tx.try_send("a"), Ok(()));
        assert!(!tx.is_closed());
        assert_eq!(rx.close().into_iter().collect::<Vec<_>>(), ["a"]);
        assert!(tx.is_closed());
        assert_eq!(tx.try_send("b"), Err(TrySendError::Closed("b")));
        drop(rx);
        assert_eq!(tx.try_send("c"), Err(TrySendError::Closed("c")));
    }

    #[tokio::test]
    async fn a_send_wakes_the_waiting_receiver() {
        let (tx, mut rx) = channel(4);
        let waiter = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        assert_eq!(tx.try_send(7), Ok(()));
        assert!(matches!(waiter.await, Ok(Recv::Item(7))));
    }

    #[test]
    fn a_drained_queue_gives_back_a_burst_s_capacity() {
        let (tx, mut rx) = channel(1000);
        for i in 0..500 {
            assert_eq!(tx.try_send(i), Ok(()));
        }
        while let Some(Recv::Item(_)) = rx.try_recv() {}
        assert!(rx.shared.lock().items.capacity() <= KEPT_CAPACITY);
    }
}
