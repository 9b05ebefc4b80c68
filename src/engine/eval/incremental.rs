//! The learned evaluation's accumulators along the search path, brought up to date only when
//! a position is evaluated.
//!
//! Making a move only records the child (a copy of a few words); evaluating a node applies the
//! changes ([`Searchable::Delta`]) from its nearest up-to-date ancestor down to it. Nodes the
//! search leaves without evaluating (a win on the spot, a table cut-off, a threat resolved, a
//! move that repeats) cost no accumulator work, and a node evaluated twice costs it once.

use super::Searchable;

pub struct Incremental<G: Searchable> {
    /// Per ply, the position on the current path there.
    path: Vec<Option<G>>,
    /// Per ply, that position's accumulator (valid if `fresh`).
    accumulators: Vec<G::Accumulator>,
    fresh: Vec<bool>,
}

impl<G: Searchable> Incremental<G> {
    /// Room for a path of `plies` positions.
    pub fn new(plies: usize) -> Incremental<G> {
        Incremental {
            path: vec![None; plies],
            accumulators: vec![G::Accumulator::default(); plies],
            fresh: vec![false; plies],
        }
    }

    /// A new path from `root`, at ply 0.
    pub fn root(&mut self, root: &G) {
        self.push(0, root);
    }

    /// `pos` is now the path's position at `ply` (a child of the one at `ply - 1`).
    #[inline]
    pub fn push(&mut self, ply: usize, pos: &G) {
        self.path[ply] = Some(pos.clone());
        self.fresh[ply] = false;
    }

    /// The learned evaluation of the path's position at `ply`.
    pub fn evaluate(&mut self, ply: usize) -> i32 {
        let mut base = ply;
        while base > 0 && !self.fresh[base] {
            base -= 1;
        }
        if !self.fresh[base] {
            self.refresh(base);
        }
        for p in base + 1..=ply {
            let (done, rest) = self.accumulators.split_at_mut(p);
            let (parent, child) = (position(&self.path, p - 1), position(&self.path, p));
            match parent.delta(child) {
                Some(delta) => G::update(&done[p - 1], &delta, &mut rest[0]),
                None => child.refresh(&mut rest[0]),
            }
            self.fresh[p] = true;
        }
        position(&self.path, ply).network_evaluate(&self.accumulators[ply])
    }

    fn refresh(&mut self, ply: usize) {
        position(&self.path, ply).refresh(&mut self.accumulators[ply]);
        self.fresh[ply] = true;
    }
}

fn position<G>(path: &[Option<G>], ply: usize) -> &G {
    path[ply]
        .as_ref()
        .expect("a position at every ply of the path")
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::engine::nnue;
    use crate::rules::pillarz::Position;
    use crate::rules::{Game, MoveList, Variants};

    /// A random walk down and up a search path, with evaluations at random plies and now and
    /// then a child that is not a move away (its delta too large): every evaluation is the one
    /// from scratch.
    #[test]
    fn the_path_evaluates_as_from_scratch() {
        let mut rng = SmallRng::seed_from_u64(5);
        let mut inc = Incremental::<Position>::new(64);
        let mut moves = MoveList::new();
        let mut evaluated = 0;
        for _ in 0..50 {
            let mut path = vec![Position::start(Variants::NONE)];
            inc.root(&path[0]);
            for _ in 0..400 {
                let pos = *path.last().expect("a root");
                moves.clear();
                pos.legal_moves(&mut moves);
                if pos.outcome().is_none() && rng.random_bool(0.3) {
                    assert_eq!(inc.evaluate(path.len() - 1), nnue::evaluate(&pos));
                    evaluated += 1;
                }
                if !moves.is_empty() && path.len() < 60 && rng.random_bool(0.6) {
                    let mut child = pos;
                    child.play_unchecked(&moves[rng.random_range(0..moves.len())]);
                    if rng.random_bool(0.05) {
                        // Two moves at once: sometimes more than a delta holds.
                        moves.clear();
                        child.legal_moves(&mut moves);
                        if let Some(mv) = moves.first() {
                            child.play_unchecked(mv);
                        }
                    }
                    inc.push(path.len(), &child);
                    path.push(child);
                } else if path.len() > 1 {
                    path.pop();
                }
            }
        }
        assert!(evaluated > 1000, "{evaluated} evaluations");
    }
}
