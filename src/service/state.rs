//! What every handler shares: the store, the settings, the cache, the analysis pool and the
//! engine seats' threads.

use tokio::sync::Semaphore;

use super::analysis_pool::AnalysisPool;
use super::cache::GameCache;
use super::configuration::Settings;
use super::engine_seats::EngineSeats;
use super::store::Store;

pub struct AppState {
    pub store: Store,
    pub settings: Settings,
    pub cache: GameCache,
    pub analysis: AnalysisPool,
    pub engine_seats: EngineSeats,
    /// The event streams this replica may still open (`--max-event-streams`).
    pub event_streams: std::sync::Arc<Semaphore>,
    /// This replica's name in leases.
    pub replica: String,
}

impl AppState {
    pub fn new(store: Store, settings: Settings) -> AppState {
        AppState {
            store,
            cache: GameCache::new(settings.cache_bytes),
            analysis: AnalysisPool::new(settings.analysis.workers, settings.analysis.queue),
            engine_seats: EngineSeats::new(settings.engine_threads, settings.engine_only_threads),
            event_streams: std::sync::Arc::new(Semaphore::new(settings.max_event_streams)),
            settings,
            replica: uuid::Uuid::new_v4().to_string(),
        }
    }
}
