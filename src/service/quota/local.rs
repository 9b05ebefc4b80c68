//! GCRA in process, for the embedded store: one TAT per caller and class, in a bounded table.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::gcra::{self, Decision, Rate};

/// The table's bound: a flood of new callers cannot grow it further; expired entries are
/// dropped first, and if none has expired a new caller is refused until one does.
const CAPACITY: usize = 100_000;

pub struct LocalLimiter {
    started: Instant,
    tats: Mutex<HashMap<String, u64>>,
}

impl LocalLimiter {
    pub fn new() -> LocalLimiter {
        LocalLimiter {
            started: Instant::now(),
            tats: Mutex::new(HashMap::new()),
        }
    }

    pub fn spend(&self, name: &str, rate: Rate, cost: u64) -> Decision {
        let now = self.started.elapsed().as_micros() as u64;
        let mut tats = self.tats.lock().expect("quota table lock");
        if !tats.contains_key(name) && tats.len() >= CAPACITY {
            tats.retain(|_, tat| *tat > now);
            if tats.len() >= CAPACITY {
                return Decision {
                    allowed: false,
                    remaining: 0,
                    reset_us: rate.window_us,
                    retry_after_us: rate.emission_us(),
                };
            }
        }
        let (decision, tat) = gcra::decide(tats.get(name).copied(), now, rate, cost);
        tats.insert(name.to_string(), tat);
        decision
    }

    /// Records `cost` units used (see [`gcra::charge`]).
    pub fn charge(&self, name: &str, rate: Rate, cost: u64) {
        let now = self.started.elapsed().as_micros() as u64;
        let mut tats = self.tats.lock().expect("quota table lock");
        if tats.contains_key(name) || tats.len() < CAPACITY {
            let tat = gcra::charge(tats.get(name).copied(), now, rate, cost);
            tats.insert(name.to_string(), tat);
        }
    }

    /// Gives back `cost` units spent (see [`gcra::refund`]).
    pub fn refund(&self, name: &str, rate: Rate, cost: u64) {
        let now = self.started.elapsed().as_micros() as u64;
        let mut tats = self.tats.lock().expect("quota table lock");
        if let Some(tat) = tats.get_mut(name) {
            *tat = gcra::refund(*tat, now, rate, cost);
        }
    }
}

impl Default for LocalLimiter {
    fn default() -> Self {
        LocalLimiter::new()
    }
}
