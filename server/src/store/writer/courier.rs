//! Carries the writer's answers to the rooms that wait for them: one
//! commit's answers cross from the writer's thread to the server's runtime
//! as one message, and a task there hands each to its room. Told one by
//! one from the writer's thread, every answer would wake the runtime from
//! outside (a system call, and an `epoll` return, per finished game); this
//! way a commit costs one such wake, however many games it ended.

use tokio::sync::{mpsc, oneshot};

use crate::store::Outcome;

/// One commit's answers: each waiting room's sender and what to tell it.
pub(super) type Answers = Vec<(oneshot::Sender<Outcome>, Outcome)>;

/// The writer's end of the way to the rooms. Answers still in the channel
/// when the runtime is dropped are dropped with it, and their rooms with
/// them: the server drops its runtime only after every room has ended and
/// the writer has stopped.
pub(in crate::store) struct Courier {
    /// To the task that tells the rooms; `None` when the store was opened
    /// outside a runtime (a tool, a test), where answers go at once.
    to: Option<mpsc::UnboundedSender<Answers>>,
}

impl Courier {
    /// A courier whose task runs on the current runtime, if there is one.
    /// The task ends once the writer is gone and every answer is handed on.
    pub(in crate::store) fn start() -> Courier {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return Courier { to: None } };
        let (to, mut from) = mpsc::unbounded_channel::<Answers>();
        runtime.spawn(async move {
            while let Some(answers) = from.recv().await {
                tell(answers);
            }
        });
        Courier { to: Some(to) }
    }

    /// Hands `answers` to their rooms: through the task, or at once when
    /// there is none (or it is gone: the runtime is shutting down).
    pub(super) fn deliver(&self, answers: Answers) {
        if answers.is_empty() {
            return;
        }
        match &self.to {
            Some(to) => {
                if let Err(mpsc::error::SendError(answers)) = to.send(answers) {
                    tell(answers);
                }
            }
            None => tell(answers),
        }
    }
}

fn tell(answers: Answers) {
    for (to, outcome) in answers {
        // A room that stopped waiting (it closed) needs no answer.
        let _ = to.send(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_answer_of_a_commit_reaches_its_room_through_the_task() {
        let courier = Courier::start();
        let (txs, mut rxs): (Vec<_>, Vec<_>) = (0..3).map(|_| oneshot::channel()).unzip();
        let outcomes = [Outcome::Written(None), Outcome::Refused, Outcome::Waiting(None)];
        courier.deliver(txs.into_iter().zip(outcomes).collect());
        // On this one-threaded runtime the courier's task has not run yet:
        // nothing was told from the caller's thread.
        assert!(rxs.iter_mut().all(|rx| rx.try_recv().is_err()), "not told by the caller");
        for (rx, want) in rxs.into_iter().zip(outcomes) {
            assert_eq!(tokio::time::timeout(std::time::Duration::from_secs(5), rx).await, Ok(Ok(want)));
        }
        // From another thread too, as the writer sends them.
        let (tx, rx) = oneshot::channel();
        std::thread::spawn(move || courier.deliver(vec![(tx, Outcome::Refused)]))
            .join()
            .expect("writer thread");
        assert_eq!(
            tokio::time::timeout(std::time::Duration::from_secs(5), rx).await,
            Ok(Ok(Outcome::Refused))
        );
    }

    #[test]
    fn without_a_runtime_answers_go_at_once() {
        let courier = Courier::start();
        assert!(courier.to.is_none());
        let (tx, mut rx) = oneshot::channel();
        courier.deliver(vec![(tx, Outcome::Refused)]);
        assert_eq!(rx.try_recv(), Ok(Outcome::Refused));
    }
}
