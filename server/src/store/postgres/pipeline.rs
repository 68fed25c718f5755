//! A transaction's statements pipelined: all sent before any answer is
//! awaited, so that a commit costs one round trip however many it runs.

use std::future::Future;
use std::pin::Pin;

use tokio_postgres::Error;

use crate::core::account::AccountId;

/// One statement of a pipeline: an account's id for a registration.
pub(super) type Step<'a> = Pin<Box<dyn Future<Output = Result<Option<AccountId>, Error>> + 'a>>;

/// Runs `steps` (the statements after `BEGIN`) pipelined: each is sent, in
/// order, before any answer is awaited, and the transaction's end after
/// them; then every answer is awaited. The first error, if any.
pub(super) async fn pipelined(
    client: &tokio_postgres::Client,
    steps: Vec<Step<'_>>,
) -> Result<Vec<Option<AccountId>>, Error> {
    let mut steps: Vec<_> = steps.into_iter().map(futures::future::maybe_done).collect();
    // A statement is sent when its future is first polled.
    for step in &mut steps {
        let _ = futures::poll!(&mut *step);
    }
    // One that failed already was never sent (its values could not be
    // encoded): what was sent after it must not be committed.
    let broken = steps.iter_mut().any(|s| matches!(Pin::new(s).output_mut(), Some(Err(_))));
    let mut end = std::pin::pin!(futures::future::maybe_done(client.batch_execute(if broken {
        "ROLLBACK"
    } else {
        "COMMIT"
    })));
    let _ = futures::poll!(end.as_mut());
    let mut out = Vec::with_capacity(steps.len());
    let mut failed = None;
    for mut step in steps {
        (&mut step).await;
        match Pin::new(&mut step).take_output() {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => {
                // The first error is the cause; those after it are the aborted transaction's.
                failed.get_or_insert(e);
            }
            None => {}
        }
    }
    end.as_mut().await;
    if let Some(Err(e)) = end.as_mut().take_output() {
        failed.get_or_insert(e);
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
