//! The HTTP service: stateless replicas in front of a shared store.
//!
//! Layout: `configuration` (settings), `telemetry` (logs), `startup` (the app, shared by
//! `pillarz serve` and the tests), `routes/<resource>`, `games` (the compare-and-set loop),
//! `cache` (this replica's decoded games), `engine_seats` (the service's own players),
//! `sweeper` (games that progress with nobody asking), `body_timeout` and `content_coding`
//! (what a request's body may be), `peer` (whether a request's client is still there),
//! `open_files` (the process's limit, raised before serving), `readiness` (the store asked
//! at most once a second however often a probe asks), `domain` (validated types and
//! the stored game), `store` (memory or Redis), `error` (the one table of error codes),
//! `respond` (how an error becomes an answer).

pub mod analysis_pool;
pub mod body_timeout;
pub mod cache;
pub mod configuration;
pub mod content_coding;
pub mod cors;
pub mod domain;
pub mod engine_seats;
pub mod error;
pub mod games;
pub mod holding_body;
pub mod keep_alive;
pub mod metrics;
pub mod open_files;
pub mod peer;
pub mod quota;
pub mod readiness;
pub mod redact;
pub mod request_id;
mod respond;
pub mod routes;
pub mod search_priority;
pub mod startup;
pub mod state;
pub mod store;
pub mod sweeper;
pub mod telemetry;
