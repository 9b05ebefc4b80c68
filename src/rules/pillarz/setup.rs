//! A pillarz setup: what a position string says, before any rule is applied. The notation
//! reads and writes it; [`super::Position::from_setup`] is the one way from a setup to a
//! position. Built by hand, it makes a position without any text.

use super::square::Square;
use crate::rules::game::Player;

/// An unchecked pillarz position: per square (by [`Square::index`]) its level and pawn, and
/// the side to move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The level of each square: 0–3 built, 4 capped.
    pub levels: [u8; Square::COUNT],
    pub pawns: [Option<Player>; Square::COUNT],
    pub turn: Player,
}
