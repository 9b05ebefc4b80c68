//! Pyrga: completed towers decide the game, and the tie-break counts (own two-piece and
//! one-piece stacks) decide the rest.

use super::Searchable;
use crate::rules::Game;
use crate::rules::pyrga::{Move, Piece, Position};

impl Searchable for Position {
    const MOVE_SLOTS: usize = 16 * 6;

    fn move_slot(mv: &Move) -> usize {
        let code = match mv.piece {
            Piece::Square => 0,
            Piece::Cylinder => 1,
            Piece::Triangle(d) => 2 + d as usize,
        };
        mv.space.index() * 6 + code
    }

    fn evaluate(&self) -> i32 {
        let me = self.turn().index();
        let counts = self.tiebreak_counts();
        let diff = |i: usize| counts[me][i] as i32 - counts[1 - me][i] as i32;
        1000 * diff(0) + 400 * diff(1) + 40 * diff(2)
    }
}
