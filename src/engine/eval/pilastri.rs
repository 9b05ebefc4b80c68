//! Pilastri: the player who runs out of moves loses, so count moves, and what keeps them:
//! stacks one controls, stacks that have a move, and above all stacks with a move that the
//! opponent cannot land on (nobody can take them away), against the opponent's stacks one
//! could take by landing on them. The weights come from the tuner.

use super::Searchable;
use super::linear::{FeatureSink, Linear};
use crate::rules::Game;
use crate::rules::pilastri::{Move, Position};

impl Searchable for Position {
    type Accumulator = ();
    type Delta = ();

    const MOVE_SLOTS: usize = 64 * 64;

    const LMR_DIVISOR: f64 = 1.75;

    fn move_slot(mv: &Move) -> usize {
        mv.from.index() * 64 + mv.to.index()
    }

    fn evaluate(&self) -> i32 {
        self.linear_eval()
    }
}

impl Linear for Position {
    const FEATURES: &'static [&'static str] = &[
        "move",
        "stack controlled",
        "stack with a move",
        "opponent's stack one can land on",
        "stack with a move the opponent cannot land on",
        "side to move",
    ];
    const WEIGHTS: &'static [i32] = &include!("weights/pilastri.rs");

    fn features(&self, sink: &mut impl FeatureSink) {
        let me = self.turn();
        let them = me.other();
        let [mine, theirs] = [me, them].map(|p| self.reach(p));
        let ones = |b: u64| b.count_ones() as i32;
        sink.add(0, mine.moves as i32 - theirs.moves as i32);
        sink.add(1, self.controlled(me) as i32 - self.controlled(them) as i32);
        sink.add(2, ones(mine.from) - ones(theirs.from));
        sink.add(
            3,
            ones(mine.onto & self.tops(them)) - ones(theirs.onto & self.tops(me)),
        );
        sink.add(
            4,
            ones(mine.from & !theirs.onto) - ones(theirs.from & !mine.onto),
        );
        sink.add(5, 1);
    }
}
