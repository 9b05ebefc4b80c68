//! Engine-seat levels 1–8: a think time, a depth or node cap, and at the low levels a margin:
//! the level plays any of the engine's best moves that scores within the margin of the best (a
//! plausible move, never a random blunder), and always plays a proven win.
//!
//! Levels 5–7 are node budgets four times apart, well below what level 8 searches in its
//! time: doubling the time at the top adds well under a ply in pillarz (each ply costs about
//! three times the last), so time alone could not make level 8 a step above level 7 (1.5 s
//! against 800 ms was −35 ± 108 Elo). A node budget also plays the same whatever else the
//! machine is doing. Pyrga is the exception: it solves its last plies exactly, so a node budget
//! buys little there (levels 6 and 7 on nodes alone were +78 and +74 over the level below)
//! while a few plies of depth buy a lot, and its levels are depth caps.
//!
//! Each game has its table ([`crate::engine::eval::Searchable::LEVELS`]): [`LEVELS`] for all but
//! Pyrga, [`PYRGA_LEVELS`] for Pyrga, whose whole range from a shallow search to full strength
//! is narrower (its last plies are solved exactly and it is decided early: about 300 Elo from
//! depth 6 to full strength), so its levels sit one step lower and split the widest step at the
//! bottom.

use super::eval::Searchable;
use super::limits::{Caps, Limit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub level: u8,
    pub movetime_ms: u64,
    pub max_depth: u32,
    /// The most nodes a move may search (`u64::MAX`: as many as the time allows).
    pub max_nodes: u64,
    /// How far below the best move's score a move may be and still be chosen (0: the best), in
    /// the game's evaluation units.
    pub margin: i32,
}

/// `LEVELS[n - 1]` is level `n` in pillarz, Pilastri and Alcazar.
pub const LEVELS: [Level; 8] = [
    level(1, 20, 1, u64::MAX, 250),
    level(2, 40, 2, u64::MAX, 150),
    level(3, 60, 3, u64::MAX, 80),
    level(4, 100, 4, u64::MAX, 40),
    level(5, 200, 64, 15_000, 0),
    level(6, 400, 64, 60_000, 0),
    level(7, 800, 64, 250_000, 0),
    level(8, 1500, 64, u64::MAX, 0),
];

/// `PYRGA_LEVELS[n - 1]` is level `n` in Pyrga: from level 3 to 6 the default table's level
/// `n - 1` as it was with depth caps (margins four times as wide: a tower is worth 1,633 here, a
/// two-piece stack 316), level 7 at depth 9 (at depth 10, level 8 was only +119 ± 72 above it),
/// level 2 a depth-2 search with a wider margin (1,600; at depth 1 a margin of 500 instead of
/// 1,000 was worth only +38 ± 69), and level 8 at full strength.
pub const PYRGA_LEVELS: [Level; 8] = [
    level(1, 20, 1, u64::MAX, 1000),
    level(2, 40, 2, u64::MAX, 1600),
    level(3, 60, 2, u64::MAX, 600),
    level(4, 100, 3, u64::MAX, 320),
    level(5, 200, 4, u64::MAX, 160),
    level(6, 400, 6, u64::MAX, 0),
    level(7, 800, 9, u64::MAX, 0),
    level(8, 1500, 64, u64::MAX, 0),
];

const fn level(level: u8, movetime_ms: u64, max_depth: u32, max_nodes: u64, margin: i32) -> Level {
    Level {
        level,
        movetime_ms,
        max_depth,
        max_nodes,
        margin,
    }
}

impl Level {
    /// Level `n` (1–8) of the game `G`.
    pub fn of<G: Searchable>(n: u8) -> Option<Level> {
        G::LEVELS.get(usize::from(n).checked_sub(1)?).copied()
    }

    /// Whether `n` names a level.
    pub fn exists(n: u8) -> bool {
        (1..=LEVELS.len()).contains(&usize::from(n))
    }

    pub fn limit(&self) -> Limit {
        Limit::MovetimeMs(self.movetime_ms)
    }

    pub fn caps(&self) -> Caps {
        Caps {
            max_depth: self.max_depth,
            max_nodes: self.max_nodes,
            max_time_ms: self.movetime_ms,
        }
    }
}
