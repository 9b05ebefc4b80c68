//! Engine-seat levels 1–8: a think time, a depth cap, and at the low levels a margin: the
//! level plays any of the engine's best moves that scores within the margin of the best (a
//! plausible move, never a random blunder), and always plays a proven win.

use super::limits::{Caps, Limit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub level: u8,
    pub movetime_ms: u64,
    pub max_depth: u32,
    /// How far below the best move's score a move may be and still be chosen (0: the best).
    pub margin: i32,
}

/// `LEVELS[n - 1]` is level `n`.
pub const LEVELS: [Level; 8] = [
    Level {
        level: 1,
        movetime_ms: 20,
        max_depth: 1,
        margin: 250,
    },
    Level {
        level: 2,
        movetime_ms: 40,
        max_depth: 2,
        margin: 150,
    },
    Level {
        level: 3,
        movetime_ms: 60,
        max_depth: 3,
        margin: 80,
    },
    Level {
        level: 4,
        movetime_ms: 100,
        max_depth: 4,
        margin: 40,
    },
    Level {
        level: 5,
        movetime_ms: 200,
        max_depth: 6,
        margin: 0,
    },
    Level {
        level: 6,
        movetime_ms: 400,
        max_depth: 10,
        margin: 0,
    },
    Level {
        level: 7,
        movetime_ms: 800,
        max_depth: 20,
        margin: 0,
    },
    Level {
        level: 8,
        movetime_ms: 1500,
        max_depth: 64,
        margin: 0,
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
