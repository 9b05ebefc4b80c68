//! What every handler shares: the store, the settings, the analysis pool.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::Semaphore;

use super::analysis_pool::AnalysisPool;
use super::configuration::Settings;
use super::store::Store;

pub struct AppState {
    pub store: Store,
    pub settings: Settings,
    pub analysis: AnalysisPool,
    /// Bounds the computer opponents thinking at once in this replica.
    pub computer_threads: Semaphore,
    /// The event streams this replica may still open (`--max-event-streams`).
    pub event_streams: std::sync::Arc<Semaphore>,
    /// This replica's name in leases.
    pub replica: String,
}

impl AppState {
    pub fn new(store: Store, settings: Settings) -> AppState {
        let analysis = AnalysisPool::new(settings.analysis.workers, settings.analysis.queue);
        AppState {
            store,
            computer_threads: Semaphore::new(settings.analysis.workers.max(1)),
            event_streams: std::sync::Arc::new(Semaphore::new(settings.max_event_streams)),
            analysis,
            settings,
            replica: uuid::Uuid::new_v4().to_string(),
        }
    }
}

/// The wall clock in epoch milliseconds: the one place the service reads the time of day.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
