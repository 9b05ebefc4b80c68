//! A validated Fischer time control.

use crate::api::TimeControl;

pub const MIN_INITIAL_MS: u64 = 1;
pub const MAX_INITIAL_MS: u64 = 24 * 3600 * 1000;
pub const MAX_INCREMENT_MS: u64 = 3600 * 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidTimeControl {
    pub initial_ms: u64,
    pub increment_ms: u64,
}

impl ValidTimeControl {
    pub fn parse(tc: TimeControl) -> Result<ValidTimeControl, String> {
        if !(MIN_INITIAL_MS..=MAX_INITIAL_MS).contains(&tc.initial_ms) {
            return Err(format!(
                "time_control.initial_ms must be between {MIN_INITIAL_MS} and {MAX_INITIAL_MS}"
            ));
        }
        if tc.increment_ms > MAX_INCREMENT_MS {
            return Err(format!(
                "time_control.increment_ms must be at most {MAX_INCREMENT_MS}"
            ));
        }
        Ok(ValidTimeControl {
            initial_ms: tc.initial_ms,
            increment_ms: tc.increment_ms,
        })
    }
}
