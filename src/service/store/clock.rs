//! The time every replica agrees on: the store's.
//!
//! Replicas' clocks may disagree by minutes; a game's clocks must not. So clock decisions use
//! the store's time: every reply from Redis carries its `TIME`, from which a replica keeps its
//! offset to the store, and every write states the time it used, which the write script
//! refuses when it is further than [`TOLERANCE_MS`] from its own (the writer then learns the
//! offset from the refusal and recomputes). The embedded store is one process: its time is the
//! process's.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// How far a write's time may be from the store's before the store refuses it.
pub const TOLERANCE_MS: u64 = 250;

#[derive(Debug, Default)]
pub struct StoreClock {
    /// Added to this process's clock (tests use it to play a replica whose clock is off).
    skew_ms: i64,
    /// The store's time minus this process's, as last observed.
    offset_ms: AtomicI64,
}

impl StoreClock {
    /// A clock for a process whose own clock is `skew_ms` off the true time.
    pub fn with_skew(skew_ms: i64) -> StoreClock {
        StoreClock {
            skew_ms,
            offset_ms: AtomicI64::new(0),
        }
    }

    /// This process's clock in epoch milliseconds: the one place the service reads the time of
    /// day.
    pub fn local_ms(&self) -> u64 {
        let local = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        (local + self.skew_ms).max(0) as u64
    }

    /// The store's time, as well as this replica knows it.
    pub fn now_ms(&self) -> u64 {
        (self.local_ms() as i64 + self.offset_ms.load(Ordering::Relaxed)).max(0) as u64
    }

    /// Notes the store's time from a reply just received.
    pub fn observe(&self, store_ms: u64) {
        self.offset_ms
            .store(store_ms as i64 - self.local_ms() as i64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skewed_process_learns_the_store_time() {
        let clock = StoreClock::with_skew(-300_000);
        let truth = StoreClock::default().local_ms();
        assert!(clock.now_ms() + 299_000 < truth, "five minutes behind");
        clock.observe(truth);
        assert!(clock.now_ms().abs_diff(truth) < 1000, "corrected");
    }
}
