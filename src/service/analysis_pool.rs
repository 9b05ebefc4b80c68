//! CPU-heavy searches run off the async workers, on a bounded pool with a bounded queue: when
//! both are full the answer is `503` with `Retry-After` at once, never an unbounded wait. The
//! searches run below the requests' priority (`search_priority`). One caller holds at most a
//! share of the places (running or waiting): as many as the pool has workers, but no more
//! than a quarter of all. A search is admitted with a millisecond of analysis time left and
//! charged once done, so without a share one caller could fill the pool and its queue with
//! long searches, and everyone else would wait for them. (The share bounds one caller, not
//! many: several callers together can still fill the pool, and then get `503 busy`.)

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::{ApiError, ErrorCode};
use super::quota::places::{Counts, Place};

pub struct AnalysisPool {
    /// Permits for running and waiting jobs together.
    admitted: Arc<Semaphore>,
    /// Permits for running jobs.
    running: Arc<Semaphore>,
    capacity: usize,
    /// The places each caller holds, running or waiting; at most `share` each.
    shares: Counts,
    share: usize,
    /// The search threads' nice value.
    nice: i32,
}

impl AnalysisPool {
    pub fn new(workers: usize, queue: usize, nice: i32) -> AnalysisPool {
        let workers = workers.max(1);
        AnalysisPool {
            admitted: Arc::new(Semaphore::new(workers + queue)),
            running: Arc::new(Semaphore::new(workers)),
            capacity: workers + queue,
            shares: Counts::default(),
            share: workers.min((workers + queue) / 4).max(1),
            nice,
        }
    }

    /// Jobs running or waiting now.
    pub fn depth(&self) -> usize {
        self.capacity - self.admitted.available_permits()
    }

    /// A place in the pool for `caller` (`None`: one not counted, as with quotas off):
    /// refused at once when the caller holds its share or the pool and its queue are full,
    /// then waits for a worker. Dropping the future while it waits gives the place back.
    pub async fn admit(&self, caller: Option<&str>) -> Result<Worker, ApiError> {
        let share = match caller {
            None => None,
            Some(caller) => Some(self.shares.take(caller, self.share).ok_or_else(|| {
                super::metrics::METRICS
                    .rate_limited
                    .with_label_values(&["analysis_share"])
                    .inc();
                ApiError {
                    retry_after: Some(1),
                    ..ApiError::new(
                        ErrorCode::RateLimited,
                        format!(
                            "this caller already has {} analyses running or waiting on this \
                             replica, its share of the pool; try again when one is done",
                            self.share
                        ),
                    )
                }
            })?),
        };
        let admitted = self
            .admitted
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError {
                retry_after: Some(1),
                ..ApiError::new(
                    ErrorCode::Busy,
                    "the analysis pool and its queue are full; try again shortly",
                )
            })?;
        let running = self
            .running
            .clone()
            .acquire_owned()
            .await
            .expect("the pool's semaphore is never closed");
        Ok(Worker {
            _permits: (admitted, running),
            _share: share,
            nice: self.nice,
        })
    }
}

/// A worker of the pool, held until its job is done.
pub struct Worker {
    _permits: (OwnedSemaphorePermit, OwnedSemaphorePermit),
    _share: Option<Place>,
    nice: i32,
}

impl Worker {
    /// Runs `job` on a blocking thread at the searches' priority.
    pub async fn run<T: Send + 'static>(
        self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        super::search_priority::spawn(self.nice, move || {
            let _worker = self;
            job()
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("analysis failed: {e}")))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::service::search_priority::own_nice;

    #[test]
    fn a_callers_share_is_the_workers_but_at_most_a_quarter_of_the_places() {
        let share = |workers, queue| AnalysisPool::new(workers, queue, 0).share;
        assert_eq!(share(2, 16), 2, "the default on two cores");
        assert_eq!(share(16, 16), 8);
        assert_eq!(share(2, 4), 1);
        assert_eq!(share(1, 0), 1, "never none");
    }

    #[tokio::test]
    async fn searches_run_below_the_requests_priority() {
        let requests = own_nice();
        let pool = AnalysisPool::new(1, 0, 12);
        let worker = pool.admit(None).await.expect("the pool is free");
        let search = worker.run(own_nice).await.expect("the search runs");
        assert_eq!(search, 12.max(requests));
        assert_eq!(
            own_nice(),
            requests,
            "the caller's thread keeps its priority"
        );
    }
}
