//! Perft: the number of move sequences of a given length, the standard check of a move
//! generator. One generic walk serves every game; games that forbid repetition carry the keys
//! of the positions seen so far down the walk.

use super::game::{Game, MoveList};
use super::state::{repeats, retain_unrepeated};

/// Counts the leaves `depth` plies below `pos`. `history` holds the repetition keys of the
/// positions before `pos` (for games that forbid repetition; ignored otherwise).
pub fn perft<G: Game>(pos: &G, depth: u32, history: &[u64]) -> u64 {
    let mut walk = Walk::new(depth, history);
    walk.count(pos, depth)
}

/// Leaf counts below each legal root move, in move-generation order.
pub fn divide<G: Game>(pos: &G, depth: u32, history: &[u64]) -> Vec<(G::Move, u64)> {
    let mut walk = Walk::new(depth, history);
    let moves = walk.legal(pos, depth);
    moves
        .into_iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(&mv);
            walk.history.push(pos.repetition_key());
            let n = if depth <= 1 {
                1
            } else {
                walk.count(&child, depth - 1)
            };
            walk.history.pop();
            (mv, n)
        })
        .collect()
}

/// Reusable state of one perft walk: a move buffer per ply and the repetition history.
struct Walk<M> {
    buffers: Vec<MoveList<M>>,
    history: Vec<u64>,
}

impl<M> Walk<M> {
    fn new(depth: u32, history: &[u64]) -> Self {
        Walk {
            buffers: (0..=depth).map(|_| MoveList::with_capacity(128)).collect(),
            history: history.to_vec(),
        }
    }
}

impl<M: Copy> Walk<M> {
    /// The legal moves of `pos`, filtered by the repetition rule where it applies.
    fn legal<G: Game<Move = M>>(&mut self, pos: &G, depth: u32) -> MoveList<M> {
        let mut moves = std::mem::take(&mut self.buffers[depth as usize]);
        moves.clear();
        pos.legal_moves(&mut moves);
        if G::FORBIDS_REPETITION {
            self.history.push(pos.repetition_key());
            retain_unrepeated(pos, &self.history, &mut moves);
            self.history.pop();
        }
        moves
    }

    fn count<G: Game<Move = M>>(&mut self, pos: &G, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        if depth == 1 && !G::FORBIDS_REPETITION {
            return pos.count_legal();
        }
        let moves = self.legal(pos, depth);
        let total = if depth == 1 {
            moves.len() as u64
        } else {
            self.history.push(pos.repetition_key());
            let mut total = 0;
            for mv in &moves {
                let mut child = pos.clone();
                child.play_unchecked(mv);
                total += self.count(&child, depth - 1);
            }
            self.history.pop();
            total
        };
        self.buffers[depth as usize] = moves;
        total
    }
}

/// Perft without bulk counting: every leaf is generated and played. Slower by design; the
/// baseline `bench-movegen` compares against, and a cross-check of [`Game::count_legal`].
pub fn perft_every_leaf<G: Game>(pos: &G, depth: u32, history: &[u64]) -> u64 {
    fn walk<G: Game>(pos: &G, depth: u32, history: &mut Vec<u64>) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut moves = MoveList::new();
        pos.legal_moves(&mut moves);
        history.push(pos.repetition_key());
        let mut total = 0;
        for mv in &moves {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            if repeats(&child, history) {
                continue;
            }
            total += walk(&child, depth - 1, history);
        }
        history.pop();
        total
    }
    walk(pos, depth, &mut history.to_vec())
}
