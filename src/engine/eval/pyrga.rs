//! Pyrga: completed towers decide the game, and the tie-break counts (own two-piece and
//! one-piece stacks) decide the rest.

use super::Searchable;
use super::linear::{FeatureSink, Linear};
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
        self.linear_eval()
    }
}

impl Linear for Position {
    const FEATURES: &'static [&'static str] = &[
        "completed tower controlled",
        "two-piece stack all one's own",
        "one-piece stack one's own",
    ];
    const WEIGHTS: &'static [i32] = &include!("weights/pyrga.rs");

    fn features(&self, sink: &mut impl FeatureSink) {
        let me = self.turn().index();
        let counts = self.tiebreak_counts();
        for (i, (mine, theirs)) in counts[me].iter().zip(counts[1 - me]).enumerate() {
            sink.add(i, *mine as i32 - theirs as i32);
        }
    }
}
