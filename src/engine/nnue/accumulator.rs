//! The hidden layer's inputs of one position from both sides' views, kept along the search
//! path: a child's are its parent's with the rows of a [`Delta`]'s few changed inputs
//! subtracted and added, instead of the sum of every active input.
//!
//! Both views are kept because the side to move alternates: the view evaluated at a node is
//! the one its parent did not need, and updating it costs what updating the other does.

use super::features::{self, Delta};
use super::network::{Accumulator, HIDDEN};
use crate::rules::pillarz::Position;
use crate::rules::{Game, Player};

/// A position's accumulators from each side's view (indexed by [`Player::index`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Accumulators([Accumulator; 2]);

impl Default for Accumulators {
    fn default() -> Accumulators {
        Accumulators([[0; HIDDEN]; 2])
    }
}

impl std::fmt::Debug for Accumulators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Accumulators({:?}…)", &self.0.map(|a| a[0]))
    }
}

impl Accumulators {
    /// `pos`'s accumulators, summed from scratch.
    pub fn refresh(&mut self, pos: &Position) {
        let net = super::network();
        for us in Player::BOTH {
            self.0[us.index()] = net.accumulate(features::active_for(pos, us).as_slice());
        }
    }

    /// The accumulators of the child `delta` leads to, written to `out`.
    #[inline]
    pub fn update(&self, delta: &Delta, out: &mut Accumulators) {
        let net = super::network();
        for us in Player::BOTH {
            let i = us.index();
            net.update(&self.0[i], delta.off(us), delta.on(us), &mut out.0[i]);
        }
    }

    /// The network's evaluation of `pos`, whose accumulators these are, from the side to move's
    /// view.
    #[inline]
    pub fn evaluate(&self, pos: &Position) -> i32 {
        super::network().output(&self.0[pos.turn().index()])
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::rules::{MoveList, Variants};

    #[test]
    fn an_updated_accumulator_is_the_one_from_scratch() {
        let mut rng = SmallRng::seed_from_u64(11);
        let (mut moves, mut updated, mut fresh) = (
            MoveList::new(),
            Accumulators::default(),
            Accumulators::default(),
        );
        for _ in 0..200 {
            let mut pos = Position::start(Variants::NONE);
            let mut acc = Accumulators::default();
            acc.refresh(&pos);
            loop {
                moves.clear();
                pos.legal_moves(&mut moves);
                if moves.is_empty() {
                    break;
                }
                let mut child = pos;
                child.play_unchecked(&moves[rng.random_range(0..moves.len())]);
                let delta = features::delta(&pos, &child).expect("a move changes a few inputs");
                acc.update(&delta, &mut updated);
                fresh.refresh(&child);
                assert_eq!(updated, fresh, "{pos} → {child}");
                if child.outcome().is_none() {
                    assert_eq!(updated.evaluate(&child), super::super::evaluate(&child));
                }
                (pos, acc) = (child, updated.clone());
            }
        }
    }

    #[test]
    fn a_delta_holds_only_what_a_move_can_change() {
        let start = Position::start(Variants::NONE);
        let late = Position::parse_position("12340/2x1o000/0x1300/0o0110/22222 1", Variants::NONE)
            .expect("a position");
        assert_eq!(features::delta(&start, &late), None);
        assert_eq!(
            features::delta(&late, &late),
            Some(Delta::default()),
            "nothing changed"
        );
    }
}
