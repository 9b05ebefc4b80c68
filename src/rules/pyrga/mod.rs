//! Pyrga: place squares, triangles and cylinders on a 4×4 board; the piece your opponent
//! played last decides where you may play; three controlled towers win.
//!
//! The last move is part of the position (its notation names it), and the opening rule is read
//! off the board (two pieces on it, `p1`'s a square), so a Pyrga position alone fixes its legal
//! moves. Each shape of each player is a 16-bit plane; triangle directions are four more planes.

mod moves;
mod notation;
mod position;
mod setup;
mod space;

pub use moves::{Move, MoveParseError, Piece, Shape};
pub use notation::NotationError;
pub use position::{Position, SetupError};
pub use setup::{Contents, Setup};
pub use space::{Dir, Space};

/// Why a Pyrga position string is refused.
pub type PositionError = crate::rules::PositionError<NotationError, SetupError>;
