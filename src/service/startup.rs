//! Building the application: one function used by `pillarz serve` and by the tests.

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};

use super::configuration::{Settings, StoreSettings};
use super::routes;
use super::state::AppState;
use super::store::{MemoryStore, RedisStore, Store};
use super::{body_timeout, request_id};

/// A bound, not yet running server.
pub struct Application {
    port: u16,
    server: Server,
}

impl Application {
    /// Opens the store (lazily, for Redis) and binds the listener (port 0 picks a free port).
    /// Must be called within a Tokio runtime (it starts the store's change listener).
    pub fn build(settings: Settings) -> anyhow::Result<Application> {
        let store = match &settings.store {
            StoreSettings::Memory => {
                let store = MemoryStore::new(settings.memory_max_games);
                store.spawn_sweeper();
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
                let store = RedisStore::new(url, prefix, ca.as_deref())?;
                store.spawn_listener();
                Store::Redis(Box::new(store))
            }
        };
        let listener = TcpListener::bind(settings.listen)?;
        let port = listener.local_addr()?.port();
        let workers = settings.workers;
        let body_limit = settings.body_limit;
        let request_timeout = settings.request_timeout;
        let state = web::Data::new(AppState::new(store, settings));
        let mut server = HttpServer::new(move || {
            App::new()
                .wrap(from_fn(move |req, next| {
                    body_timeout::middleware(req, next, request_timeout)
                }))
                .wrap(from_fn(request_id::middleware))
                .app_data(state.clone())
                .configure(|cfg| routes::configure(cfg, body_limit))
        })
        .client_request_timeout(request_timeout)
        .shutdown_timeout(10);
        if workers > 0 {
            server = server.workers(workers);
        }
        let server = server.listen(listener)?.run();
        Ok(Application { port, server })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle to stop the server gracefully (in-flight requests finish).
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Serves until stopped (SIGINT/SIGTERM finish in-flight requests, then return).
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}
