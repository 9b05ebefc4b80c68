//! Computer-opponent levels 1–8: a think time, a depth cap, and at the low levels a chance of
//! playing a random legal move instead of the engine's choice.

use super::limits::{Caps, Limit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub level: u8,
    pub movetime_ms: u64,
    pub max_depth: u32,
    /// Percent chance of a random legal move instead of the engine's.
    pub random_percent: u32,
}

/// `LEVELS[n - 1]` is level `n`.
pub const LEVELS: [Level; 8] = [
    Level {
        level: 1,
        movetime_ms: 20,
        max_depth: 1,
        random_percent: 40,
    },
    Level {
        level: 2,
        movetime_ms: 40,
        max_depth: 2,
        random_percent: 25,
    },
    Level {
        level: 3,
        movetime_ms: 60,
        max_depth: 3,
        random_percent: 10,
    },
    Level {
        level: 4,
        movetime_ms: 100,
        max_depth: 4,
        random_percent: 5,
    },
    Level {
        level: 5,
        movetime_ms: 200,
        max_depth: 6,
        random_percent: 0,
    },
    Level {
        level: 6,
        movetime_ms: 400,
        max_depth: 10,
        random_percent: 0,
    },
    Level {
        level: 7,
        movetime_ms: 800,
        max_depth: 20,
        random_percent: 0,
    },
    Level {
        level: 8,
        movetime_ms: 1500,
        max_depth: 64,
        random_percent: 0,
    },
];

impl Level {
    /// Level `n` (1–8).
    pub fn get(n: u8) -> Option<Level> {
        LEVELS.get(usize::from(n).checked_sub(1)?).copied()
    }

    pub fn limit(&self) -> Limit {
        Limit::MovetimeMs(self.movetime_ms)
    }

    pub fn caps(&self) -> Caps {
        Caps {
            max_depth: self.max_depth,
            max_nodes: u64::MAX,
            max_time_ms: self.movetime_ms,
        }
    }
}
