//! Scores: heuristic values, proven wins and losses counted in plies, and proven draws.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The internal score of a won position at the root; a win `n` plies away scores `WIN - n`.
pub const WIN: i32 = 1_000_000;
/// Any score beyond this is a proven result.
pub const PROVEN: i32 = WIN - 1_000;
/// Larger than any score.
pub const INFINITY: i32 = WIN + 1;

/// A score from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Score {
    /// A heuristic value: positive is good for the side to move (about 100 per pawn-level).
    Value(i32),
    /// The side to move wins in this many plies (its own moves and the opponent's).
    WinIn(u32),
    /// The side to move loses in this many plies, whatever it does.
    LossIn(u32),
    /// Neither side can win against best play: the search saw every line to the end of the
    /// game (a game of bounded length, such as Pyrga, searched to its last possible ply).
    Draw,
}

impl Score {
    pub fn from_internal(v: i32) -> Score {
        if v > PROVEN {
            Score::WinIn((WIN - v) as u32)
        } else if v < -PROVEN {
            Score::LossIn((WIN + v) as u32)
        } else {
            Score::Value(v)
        }
    }

    /// A number that orders scores from worst to best for the side to move (proven losses
    /// first, then values, then proven wins, the quickest last).
    pub fn ordinal(self) -> i64 {
        match self {
            Score::Value(v) => i64::from(v),
            Score::Draw => 0,
            Score::WinIn(n) => i64::from(WIN) - i64::from(n),
            Score::LossIn(n) => -i64::from(WIN) + i64::from(n),
        }
    }

    pub fn is_proven(self) -> bool {
        !matches!(self, Score::Value(_))
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Value(v) => write!(f, "{v:+}"),
            Score::WinIn(n) => write!(f, "win in {n}"),
            Score::LossIn(n) => write!(f, "loss in {n}"),
            Score::Draw => write!(f, "draw"),
        }
    }
}
