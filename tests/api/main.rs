//! Black-box tests of the HTTP API: the real application on port 0, a real Redis per test.

mod analysis;
mod boards;
mod clocks;
mod cluster;
mod computer;
mod concurrency;
mod docs;
mod errors;
mod events;
mod faults;
#[path = "../common/free_port.rs"]
mod free_port;
mod full_games;
mod games;
mod helpers;
mod idempotency;
mod limits;
mod metrics;
mod move_limit;
mod quotas;
mod records;
mod redis_faults;
mod secrets;
mod storage;
mod store;
mod sweeper;
mod tls;
