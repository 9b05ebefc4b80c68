//! What the search needs from a game beyond its rules: a static evaluation and a slot per move
//! for the history table. One file per game, each hand-tuned.

mod alcazar;
mod pilastri;
mod pillarz;
mod pyrga;

use crate::rules::Game;

pub trait Searchable: Game {
    /// The number of history slots; every [`Searchable::move_slot`] is below it.
    const MOVE_SLOTS: usize;

    fn move_slot(mv: &Self::Move) -> usize;

    /// A heuristic value of a position that is not over, from the side to move's view.
    fn evaluate(&self) -> i32;

    /// Whether the side to move can win with its next move (a cheap check the search uses at
    /// its horizon, so that a one-move win is never missed).
    fn wins_now(&self) -> bool {
        false
    }
}
