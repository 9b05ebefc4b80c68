//! A game state: the current position plus exactly the history the rules look at.
//!
//! Only Alcazar's no-repetition rule looks past the current position (Pyrga's constraints are
//! part of its position notation), so the history is the set of earlier positions' repetition
//! keys, and it stays empty in the other games. A state can be rebuilt from its position and
//! those keys without replaying a single move, which is what lets the service answer a request
//! on a long game as cheaply as on a short one. This is also the one place the repetition
//! filter of legal moves is written: [`repeats`] and [`retain_unrepeated`] serve this state,
//! perft and the search alike.

use super::game::{Game, IllegalMove, MoveList, Outcome, Termination};

/// The repetition rule: whether `child` recreates a position of `path`, the repetition keys of
/// the positions that led to it (the one it was reached from included). Always false in games
/// that allow repetition. Looked through linearly: one pass over a few thousand keys at most
/// (the service caps a game's plies; a search path adds a few dozen), cheaper than keeping a
/// set.
#[inline]
pub fn repeats<G: Game>(child: &G, path: &[u64]) -> bool {
    G::FORBIDS_REPETITION && path.contains(&child.repetition_key())
}

/// Whether a move of `pos` recreates no position of `path` (which ends with `pos`'s own key);
/// see [`repeats`].
fn unrepeated<'a, G: Game>(pos: &'a G, path: &'a [u64]) -> impl Fn(&G::Move) -> bool + 'a {
    move |mv| {
        let mut child = pos.clone();
        child.play_unchecked(mv);
        !repeats(&child, path)
    }
}

/// Keeps the moves of `pos` that recreate no position of `path` (which ends with `pos`'s own
/// key).
pub fn retain_unrepeated<G: Game>(pos: &G, path: &[u64], moves: &mut MoveList<G::Move>) {
    if G::FORBIDS_REPETITION {
        moves.retain(unrepeated(pos, path));
    }
}

#[derive(Clone, Debug)]
pub struct GameState<G: Game> {
    position: G,
    /// Repetition keys of every position of the game, oldest first, the current one last
    /// (games that forbid repetition only; empty in the others).
    path: Vec<u64>,
}

impl<G: Game> GameState<G> {
    /// A game that starts at `position`.
    pub fn new(position: G) -> GameState<G> {
        GameState::resume(position, Vec::new())
    }

    /// A game at `position` that went through the positions of `history` (their repetition
    /// keys, oldest first; ignored by games that allow repetition).
    pub fn resume(position: G, mut history: Vec<u64>) -> GameState<G> {
        if G::FORBIDS_REPETITION {
            history.push(position.repetition_key());
        } else {
            history.clear();
        }
        GameState {
            position,
            path: history,
        }
    }

    pub fn position(&self) -> &G {
        &self.position
    }

    /// Whether this game keeps a history (its rules forbid repeating a position).
    pub fn keeps_history(&self) -> bool {
        G::FORBIDS_REPETITION
    }

    /// Bytes this state holds on the heap (its history's keys), for weighing it.
    pub fn heap_size(&self) -> usize {
        self.path.capacity() * std::mem::size_of::<u64>()
    }

    /// Repetition keys of the positions before the current one, oldest first.
    pub fn history(&self) -> &[u64] {
        self.path.split_last().map_or(&[], |(_, before)| before)
    }

    /// Whether playing `mv` would recreate an earlier position.
    pub fn repeats(&self, mv: &G::Move) -> bool {
        if !G::FORBIDS_REPETITION {
            return false;
        }
        let mut child = self.position.clone();
        child.play_unchecked(mv);
        repeats(&child, &self.path)
    }

    /// Every legal move, the history's rules included.
    pub fn legal_moves(&self, out: &mut MoveList<G::Move>) {
        if !G::FORBIDS_REPETITION {
            return self.position.legal_moves(out);
        }
        let mut all = MoveList::new();
        self.position.legal_moves(&mut all);
        retain_unrepeated(&self.position, &self.path, &mut all);
        out.extend(all);
    }

    pub fn check(&self, mv: &G::Move) -> Result<(), IllegalMove> {
        self.position.check(mv)?;
        if self.repeats(mv) {
            return Err(IllegalMove::Repetition { mv: mv.to_string() });
        }
        Ok(())
    }

    /// Plays a legal move; an illegal one changes nothing. Returns the repetition key the
    /// history gained (for games that forbid repetition).
    pub fn play(&mut self, mv: &G::Move) -> Result<Option<u64>, IllegalMove> {
        self.check(mv)?;
        Ok(self.play_unchecked(mv))
    }

    /// Plays a move known to be legal (one already checked, read back from storage).
    pub fn play_unchecked(&mut self, mv: &G::Move) -> Option<u64> {
        let key = G::FORBIDS_REPETITION.then(|| self.position.repetition_key());
        self.position.play_unchecked(mv);
        if key.is_some() {
            self.path.push(self.position.repetition_key());
        }
        key
    }

    /// How the game ended, if it has. A side left without a move by the repetition rule loses
    /// like any side without a move.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(outcome) = self.position.outcome() {
            return Some(outcome);
        }
        if G::FORBIDS_REPETITION {
            // One unrepeated move is enough to play on: the list is not filtered whole.
            let mut moves = MoveList::new();
            self.position.legal_moves(&mut moves);
            if !moves.iter().any(unrepeated(&self.position, &self.path)) {
                return Some(Outcome::win(
                    self.position.turn().other(),
                    Termination::NoMoves,
                ));
            }
        }
        None
    }
}
