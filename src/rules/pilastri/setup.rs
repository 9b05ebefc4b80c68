//! A Pilastri setup: what a position string says, before any rule is applied. The notation
//! reads and writes it; [`super::Position::from_setup`] is the one way from a setup to a
//! position. Built by hand, it makes a position without any text.

use super::square::Square;
use crate::rules::game::Player;

/// An unchecked Pilastri position: the board's size, each square's stack bottom first
/// (indexed by [`Square::index`] in the shared 8×8 layout), and the side to move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The board's width and height.
    pub size: u8,
    pub stacks: [Vec<Player>; 64],
    pub turn: Player,
}

impl Setup {
    /// The square at `index` of the 8×8 layout.
    pub(super) fn square(index: usize) -> Square {
        Square::from_index_unchecked(index as u8)
    }
}
