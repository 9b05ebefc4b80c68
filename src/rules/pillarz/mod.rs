//! pillarz: two pawns each on a 5×5 board of levels; step, then build; reach level 3 to win.
//!
//! The board is four 25-bit level planes (`levels[k]` holds the squares higher than `k`, so the
//! cap plane is `levels[3]`) and one pawn plane per player. Move generation is a handful of
//! mask operations per pawn, and counting the legal moves of a position (perft's last ply) is
//! a popcount per destination, with no list built at all.

mod moves;
mod notation;
mod position;
mod setup;
mod square;

pub use moves::{Move, MoveParseError};
pub use notation::NotationError;
pub use position::{Position, SetupError};
pub use setup::Setup;
pub use square::Square;

/// Why a pillarz position string is refused.
pub type PositionError = crate::rules::PositionError<NotationError, SetupError>;
