//! An exhaustive AND/OR prover, written for the tests and sharing nothing with the engine: the
//! independent judge of every proven score the engine reports.

use pillarz::rules::{Game, MoveList, Player, Winner};

/// Whether `me` can force a win within `plies` plies from `pos`; `path` holds the repetition
/// keys of the positions before `pos` (Alcazar never repeats one).
pub fn forced<G: Game>(pos: &G, me: Player, plies: u32, path: &mut Vec<u64>) -> bool {
    if let Some(o) = pos.outcome() {
        return o.winner == Winner::Player(me);
    }
    let mut moves = MoveList::new();
    pos.legal_moves(&mut moves);
    path.push(pos.repetition_key());
    let children: Vec<G> = moves
        .iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            child
        })
        .filter(|c| !G::FORBIDS_REPETITION || !path.contains(&c.repetition_key()))
        .collect();
    let result = if children.is_empty() {
        // Every move repeats: the side to move has none and loses.
        pos.turn() != me
    } else if plies == 0 {
        false
    } else if pos.turn() == me {
        children.iter().any(|c| forced(c, me, plies - 1, path))
    } else {
        children.iter().all(|c| forced(c, me, plies - 1, path))
    };
    path.pop();
    result
}
