//! A Pyrga setup: what a position string says, before any rule is applied. The notation reads
//! and writes it; [`super::Position::from_setup`] is the one way from a setup to a position.
//! Built by hand, it makes a position without any text.

use super::moves::{Move, Piece};
use super::space::Dir;
use crate::rules::game::Player;

/// An unchecked Pyrga position: what each space holds (by [`super::Space::index`]), the side
/// to move, and the last move (which constrains it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub spaces: [Contents; 16],
    pub turn: Player,
    pub last: Option<Move>,
}

/// What one space holds: at most one piece of each shape, with its owner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Contents {
    pub square: Option<Player>,
    pub triangle: Option<(Dir, Player)>,
    pub cylinder: Option<Player>,
}

impl Contents {
    /// The pieces with their owners, in the notation's order: square, triangle, cylinder.
    pub fn pieces(&self) -> impl Iterator<Item = (Piece, Player)> {
        [
            self.square.map(|p| (Piece::Square, p)),
            self.triangle.map(|(d, p)| (Piece::Triangle(d), p)),
            self.cylinder.map(|p| (Piece::Cylinder, p)),
        ]
        .into_iter()
        .flatten()
    }

    /// Puts `piece` of `owner` in its shape's slot.
    pub fn put(&mut self, piece: Piece, owner: Player) {
        match piece {
            Piece::Square => self.square = Some(owner),
            Piece::Triangle(d) => self.triangle = Some((d, owner)),
            Piece::Cylinder => self.cylinder = Some(owner),
        }
    }
}
