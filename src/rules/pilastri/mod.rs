//! Pilastri: stacks on a 6×6 (or 8×8) board; the top piece of a stack you control slides
//! orthogonally onto the first stack in its way and must end higher; no move, you lose.
//!
//! Both sizes use one 8×8 bit layout (`index = rank * 8 + file`), so the ray tables are shared
//! and a slide is one masked bit scan. A stack is its height plus a bit per piece (set for a
//! `p2` piece), which makes moving a top piece two shifts.

mod moves;
mod notation;
mod position;
mod setup;
mod square;

pub use moves::{Move, MoveParseError};
pub use notation::NotationError;
pub use position::{Position, Reach, SetupError};
pub use setup::Setup;
pub use square::Square;

/// Why a Pilastri position string is refused.
pub type PositionError = crate::rules::PositionError<NotationError, SetupError>;
