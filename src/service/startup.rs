//! Building the application: one function used by `pillarz serve` and by the tests.

use std::net::TcpListener;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};

use futures_util::future::BoxFuture;

use super::cache::GameCache;
use super::configuration::{Settings, StoreSettings};
use super::routes;
use super::state::AppState;
use super::store::{MemoryStore, RedisStore, Store, StoreClock, index_lifetime};
use super::{
    body_timeout, content_coding, cors, engine_seats, keep_alive, peer, request_id, sweeper,
};

/// How long an idle keep-alive connection stays open. A client that reuses a connection at
/// the moment the server closes it gets no answer (the request was sent, the connection
/// dropped), so clients keep idle connections for less: this crate's client and its tests for
/// [`IDLE_CONNECTION`](crate::client::api_client::IDLE_CONNECTION).
pub const KEEP_ALIVE: Duration = Duration::from_secs(5);
const _: () =
    assert!(crate::client::api_client::IDLE_CONNECTION.as_millis() < KEEP_ALIVE.as_millis());

/// Makes the kernel drop a connection whose client takes none of what it is sent for
/// `timeout` (its receive window shut, or nothing acknowledged): without it, a client that
/// stops reading a long answer (an event stream, the docs' scripts) holds its connection for
/// as long as its kernel answers the window probes, which is for ever. Set on the listener,
/// it holds for every connection accepted from it.
fn drop_stalled_clients(listener: &TcpListener, timeout: Duration) -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "fuchsia"))]
    socket2::SockRef::from(listener).set_tcp_user_timeout(Some(timeout))?;
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "fuchsia")))]
    let _ = (listener, timeout);
    Ok(())
}

/// A bound, not yet running server, and the background work that lives as long as it: the
/// store's change listener or expiry sweep, and the sweeper of due games.
pub struct Application {
    port: u16,
    server: Server,
    background: Vec<BoxFuture<'static, ()>>,
    shutdown: tokio_util::sync::CancellationToken,
}

impl Application {
    /// Opens the store (lazily, for Redis) and binds the listener (port 0 picks a free port).
    pub fn build(settings: Settings) -> anyhow::Result<Application> {
        Application::build_with(settings, engine_seats::engine_thinker())
    }

    /// [`Application::build`] with another thinker in the engine seats (for tests of how the
    /// service copes with a failing one).
    pub fn build_with(
        settings: Settings,
        thinker: engine_seats::Thinker,
    ) -> anyhow::Result<Application> {
        let clock = StoreClock::with_skew(settings.clock_skew_ms);
        let cache = std::sync::Arc::new(GameCache::new(settings.cache_bytes));
        let mut background: Vec<BoxFuture<'static, ()>> = Vec::new();
        let store = match &settings.store {
            StoreSettings::Memory => {
                let store =
                    MemoryStore::new(settings.memory_max_games, settings.memory_max_bytes, clock);
                background.push(Box::pin(store.sweeper()));
                Store::Memory(Box::new(store))
            }
            StoreSettings::Redis { url, prefix } => {
                let ca =
                    match &settings.redis_ca_file {
                        Some(path) => Some(std::fs::read(path).map_err(|e| {
                            anyhow::anyhow!("--redis-ca-file {}: {e}", path.display())
                        })?),
                        None => None,
                    };
                let store = RedisStore::new(
                    url,
                    prefix,
                    ca.as_deref(),
                    clock,
                    index_lifetime(settings.idle_ttl, settings.finished_ttl),
                )?;
                background.push(Box::pin(store.listener()));
                Store::Redis(Box::new(store))
            }
        };
        let listener = TcpListener::bind(settings.listen)?;
        drop_stalled_clients(&listener, settings.stalled_client_timeout)?;
        let port = listener.local_addr()?.port();
        let workers = settings.workers;
        let body_limit = settings.body_limit;
        let request_timeout = settings.request_timeout;
        let cors_origins = settings.cors_origins.clone();
        let state = web::Data::new(AppState::new(store, cache, settings, thinker));
        background.push(Box::pin(sweeper::run(state.clone())));
        let shutdown = state.shutdown.clone();
        let mut server = HttpServer::new(move || {
            App::new()
                .wrap(from_fn(content_coding::middleware))
                .wrap(cors::middleware(&cors_origins))
                .wrap(from_fn(cors::problems))
                .wrap(from_fn(move |req, next| {
                    body_timeout::middleware(req, next, request_timeout)
                }))
                .wrap(from_fn(request_id::middleware))
                .wrap(from_fn(keep_alive::middleware))
                .app_data(state.clone())
                .configure(|cfg| routes::configure(cfg, body_limit))
        })
        .on_connect(move |connection, data| {
            peer::on_connect(connection, data);
            keep_alive::on_connect(connection, data, request_timeout);
        })
        .client_request_timeout(request_timeout)
        .keep_alive(KEEP_ALIVE)
        .shutdown_timeout(10);
        if workers > 0 {
            server = server.workers(workers);
        }
        let server = server.listen(listener)?.run();
        Ok(Application {
            port,
            server,
            background,
            shutdown,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle to stop the server gracefully (in-flight requests finish).
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Serves until stopped (SIGINT/SIGTERM finish in-flight requests, then return); the
    /// background work stops with the server.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let mut tasks = tokio::task::JoinSet::new();
        for task in self.background {
            tasks.spawn(task);
        }
        let served = self.server.await;
        tasks.abort_all();
        self.shutdown.cancel();
        served
    }
}
