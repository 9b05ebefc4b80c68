//! An Alcazar setup: what a position string says, before any rule is applied. The notation
//! reads and writes it; [`super::Position::from_setup`] is the one way from a setup to a
//! position. Built by hand, it makes a position without any text.

use super::lattice::{Slot, Square};
use crate::rules::game::Player;

/// An unchecked Alcazar position: the walls, each player's knight, the side to move and the
/// walls it may not swing this turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub walls: Vec<Slot>,
    /// By [`Player::index`].
    pub knights: [Square; 2],
    pub turn: Player,
    pub frozen: Vec<Slot>,
}
