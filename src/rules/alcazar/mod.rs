//! Alcazar: two knights in a 4×4 castle of movable walls; step or swing a wall; enter the
//! opponent's fortress or wall their knight in.
//!
//! Everything is named on the 9×9 lattice of the notation. The 40 wall slots are numbered in the
//! notation's sort order (file, then rank), so a `u64` of walls prints sorted by walking its
//! bits. Every swing a wall could make is precomputed once per slot ([`lattice`]): the
//! destination, and per way of getting there the squares it sweeps and the slots it passes.
//! The no-repetition rule needs the game's history and lives in [`crate::rules::record`].

mod lattice;
mod moves;
mod notation;
mod position;
mod setup;

pub use lattice::{Point, Slot, Square};
pub use moves::{Move, MoveParseError};
pub use notation::NotationError;
pub use position::{FORTRESS, Position, SetupError};
pub use setup::Setup;

/// Why an Alcazar position string is refused.
pub type PositionError = crate::rules::PositionError<NotationError, SetupError>;
