//! The one-ply greedy player.

use rand::Rng;
use rand::rngs::SmallRng;

use crate::rules::{Game, MoveList, Winner};

/// Whether playing `mv` wins on the spot for the side to move of `pos`.
fn wins<G: Game>(pos: &G, mv: &G::Move) -> bool {
    let mut child = pos.clone();
    child.play_unchecked(mv);
    matches!(child.outcome(), Some(o) if o.winner == Winner::Player(pos.turn()))
}

pub fn choose<G: Game>(pos: &G, moves: &[G::Move], rng: &mut SmallRng) -> G::Move {
    if let Some(mv) = moves.iter().find(|mv| wins(pos, mv)) {
        return *mv;
    }
    let mut replies = MoveList::new();
    let safe: Vec<G::Move> = moves
        .iter()
        .copied()
        .filter(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            if let Some(o) = child.outcome() {
                return o.winner != Winner::Player(pos.turn().other());
            }
            replies.clear();
            child.legal_moves(&mut replies);
            !replies.iter().any(|r| wins(&child, r))
        })
        .collect();
    let pool = if safe.is_empty() { moves } else { &safe[..] };
    pool[rng.random_range(0..pool.len())]
}
