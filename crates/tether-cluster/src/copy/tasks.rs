//! A host's files copied a few at a time: at most `limit` tasks at once,
//! the first failure returned as soon as it is seen, and every task still
//! running aborted when the set is dropped (a failure or a cancel).

use tokio::task::JoinSet;

use crate::exec::HostError;

/// Tasks copying one host's files.
pub(crate) struct Tasks {
    set: JoinSet<Result<(), HostError>>,
    limit: usize,
}

impl Tasks {
    /// At most `limit` at once.
    pub(crate) fn new(limit: usize) -> Tasks {
        Tasks {
            set: JoinSet::new(),
            limit: limit.max(1),
        }
    }

    fn settle(r: Result<Result<(), HostError>, tokio::task::JoinError>) -> Result<(), HostError> {
        match r {
            Ok(r) => r,
            Err(e) => Err(HostError::Copy(format!(
                "a copy stopped unexpectedly ({e}); run it again"
            ))),
        }
    }

    /// Starts `f` once there is room; a failure of an earlier one is
    /// returned instead.
    pub(crate) async fn spawn(
        &mut self,
        f: impl Future<Output = Result<(), HostError>> + Send + 'static,
    ) -> Result<(), HostError> {
        while let Some(r) = self.set.try_join_next() {
            Self::settle(r)?;
        }
        while self.set.len() >= self.limit {
            if let Some(r) = self.set.join_next().await {
                Self::settle(r)?;
            }
        }
        self.set.spawn(f);
        Ok(())
    }

    /// Waits for every task; the first failure.
    pub(crate) async fn finish(mut self) -> Result<(), HostError> {
        while let Some(r) = self.set.join_next().await {
            Self::settle(r)?;
        }
        Ok(())
    }
}
