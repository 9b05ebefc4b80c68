//! How long a search may run: one limit chosen by the caller, plus hard caps the engine
//! enforces itself whatever was asked.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The limit of one search, as a tagged union: `{"depth": 6}`, `{"nodes": 100000}` or
/// `{"movetime_ms": 500}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Limit {
    /// Search this many plies deep (deterministic).
    Depth(u32),
    /// Search about this many nodes (deterministic).
    Nodes(u64),
    /// Search for this many milliseconds.
    MovetimeMs(u64),
}

/// The caps no search may exceed, checked every [`CHECK_EVERY`] nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub max_depth: u32,
    pub max_nodes: u64,
    pub max_time_ms: u64,
}

/// How often (in nodes) a search looks at its clock, node budget and stop flag.
pub const CHECK_EVERY: u64 = 2048;

/// The deepest any search goes.
pub const MAX_PLY: u32 = 64;

impl Caps {
    pub const NONE: Caps = Caps {
        max_depth: MAX_PLY,
        max_nodes: u64::MAX,
        max_time_ms: u64::MAX,
    };

    /// The depth, node and time budget of `limit` within these caps.
    pub fn budget(&self, limit: Limit) -> (u32, u64, u64) {
        let depth = match limit {
            Limit::Depth(d) => d.clamp(1, self.max_depth.min(MAX_PLY)),
            _ => self.max_depth.min(MAX_PLY),
        };
        let nodes = match limit {
            Limit::Nodes(n) => n.max(1).min(self.max_nodes),
            _ => self.max_nodes,
        };
        let time = match limit {
            Limit::MovetimeMs(t) => t.max(1).min(self.max_time_ms),
            _ => self.max_time_ms,
        };
        (depth, nodes, time)
    }
}

/// Where a search reads the time. The engine itself never reads a clock: callers pass one in
/// (the wall clock in the CLI and service, anything in tests).
pub trait Clock {
    /// Milliseconds since the search started.
    fn elapsed_ms(&self) -> u64;
}

/// A clock that never advances, for searches limited by depth or nodes only.
pub struct FrozenClock;

impl Clock for FrozenClock {
    fn elapsed_ms(&self) -> u64 {
        0
    }
}
