//! What every handler shares: the store and the settings.

use std::time::{SystemTime, UNIX_EPOCH};

use super::configuration::Settings;
use super::store::Store;

pub struct AppState {
    pub store: Store,
    pub settings: Settings,
}

/// The wall clock in epoch milliseconds: the one place the service reads the time.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
