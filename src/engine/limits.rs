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

/// Why a short limit (`100`, `5000n`, `d6`) does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a search limit (expected <ms> like 100, <nodes>n like 5000n, or d<depth> like d6)"
)]
pub struct LimitParseError(pub String);

impl Limit {
    /// The short form matches and scripts use: `100` (ms), `5000n` (nodes), `d6` (depth).
    pub fn parse_short(s: &str) -> Result<Limit, LimitParseError> {
        let bad = || LimitParseError(s.to_string());
        let positive = |n: &str| n.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(bad);
        if let Some(depth) = s.strip_prefix('d') {
            Ok(Limit::Depth(
                u32::try_from(positive(depth)?).map_err(|_| bad())?,
            ))
        } else if let Some(nodes) = s.strip_suffix('n') {
            Ok(Limit::Nodes(positive(nodes)?))
        } else {
            Ok(Limit::MovetimeMs(positive(
                s.strip_suffix("ms").unwrap_or(s),
            )?))
        }
    }
}

impl std::fmt::Display for Limit {
    /// The short form of [`Limit::parse_short`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Depth(d) => write!(f, "d{d}"),
            Limit::Nodes(n) => write!(f, "{n}n"),
            Limit::MovetimeMs(ms) => write!(f, "{ms}"),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_limits_parse_and_print_back() {
        for (text, limit) in [
            ("100", Limit::MovetimeMs(100)),
            ("5000n", Limit::Nodes(5000)),
            ("d6", Limit::Depth(6)),
        ] {
            assert_eq!(Limit::parse_short(text), Ok(limit));
            assert_eq!(limit.to_string(), text);
        }
        assert_eq!(Limit::parse_short("250ms"), Ok(Limit::MovetimeMs(250)));
        for bad in ["", "0", "n", "d", "dx", "-5", "12q"] {
            assert!(Limit::parse_short(bad).is_err(), "{bad}");
        }
    }
}
