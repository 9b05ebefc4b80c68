//! What every handler shares: the store, the settings, the cache, the analysis pool and the
//! engine seats' threads.

use tokio::sync::Semaphore;

use super::analysis_pool::AnalysisPool;
use super::cache::GameCache;
use super::configuration::Settings;
use super::engine_seats::{EngineSeats, Thinker};
use super::store::Store;

pub struct AppState {
    pub store: Store,
    pub settings: Settings,
    pub cache: std::sync::Arc<GameCache>,
    pub analysis: AnalysisPool,
    pub engine_seats: EngineSeats,
    /// Who may ask for how much.
    pub quotas: super::quota::Limiter,
    /// The event streams this replica may still open (`--max-event-streams`).
    pub event_streams: std::sync::Arc<Semaphore>,
    /// The last answer to a readiness check.
    pub readiness: super::readiness::Readiness,
    /// This replica's name in leases.
    pub replica: String,
    /// Cancelled when the server stops: background work started by requests ends with it.
    pub shutdown: tokio_util::sync::CancellationToken,
}

impl AppState {
    pub fn new(
        store: Store,
        cache: std::sync::Arc<GameCache>,
        settings: Settings,
        thinker: Thinker,
    ) -> AppState {
        AppState {
            store,
            cache,
            analysis: AnalysisPool::new(
                settings.analysis.workers,
                settings.analysis.queue,
                settings.search_nice,
            ),
            engine_seats: EngineSeats::new(
                settings.engine_threads,
                settings.engine_only_threads,
                thinker,
            ),
            quotas: super::quota::Limiter::new(
                settings.anon_quotas,
                settings.trusted_proxies.clone(),
            ),
            event_streams: std::sync::Arc::new(Semaphore::new(settings.max_event_streams)),
            settings,
            readiness: super::readiness::Readiness::default(),
            replica: uuid::Uuid::new_v4().to_string(),
            shutdown: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Runs `work` in the background until it ends or the server stops.
    pub fn spawn(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = work => {}
            }
        });
    }
}
