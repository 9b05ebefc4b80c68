//! The answer to `GET /healthz/ready`, asked of the store at most once a [`FRESH`] period.
//!
//! A probe has no key, so the route counts no quota, and each check is a round trip to the
//! store that every replica shares: a client polling it as fast as it could would load Redis,
//! not only the replica it asks. So a check's result is reused while it is fresh, and checks
//! that arrive while one is being made wait for that one instead of asking again: a replica
//! asks the store at most once a [`FRESH`] period, however often it is asked.

use std::time::{Duration, Instant};

use tokio::sync::Mutex;

use super::store::{Store, StoreError};

/// How long a check's result is reused. Kubernetes probes every few seconds at most.
pub const FRESH: Duration = Duration::from_secs(1);

/// The last check of the store, and when it was made.
#[derive(Default)]
pub struct Readiness {
    last: Mutex<Option<(Instant, Result<(), StoreError>)>>,
}

impl Readiness {
    /// Whether `store` answers, as it last did if that was less than [`FRESH`] ago.
    pub async fn check(&self, store: &Store) -> Result<(), StoreError> {
        let mut last = self.last.lock().await;
        if let Some((at, result)) = &*last
            && at.elapsed() < FRESH
        {
            return result.clone();
        }
        let result = store.ping().await;
        *last = Some((Instant::now(), result.clone()));
        result
    }
}
