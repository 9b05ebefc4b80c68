//! A game state: the current position plus exactly the history the rules look at.
//!
//! Only Alcazar's no-repetition rule looks past the current position (Pyrga's constraints are
//! part of its position notation), so the history is the set of earlier positions' repetition
//! keys, and it stays empty in the other games. A state can be rebuilt from its position and
//! those keys without replaying a single move, which is what lets the service answer a request
//! on a long game as cheaply as on a short one. This is also the one place the repetition
//! filter of legal moves is written.

use super::game::{Game, IllegalMove, MoveList, Outcome, Termination};

#[derive(Clone, Debug)]
pub struct GameState<G: Game> {
    position: G,
    /// Repetition keys of every position before the current one, oldest first (games that
    /// forbid repetition only). Looked through linearly: a check is one pass over a few
    /// thousand keys at most (the service caps a game's plies), cheaper than building a set
    /// for the one request that needs it.
    history: Vec<u64>,
}

impl<G: Game> GameState<G> {
    /// A game that starts at `position`.
    pub fn new(position: G) -> GameState<G> {
        GameState {
            position,
            history: Vec::new(),
        }
    }

    /// A game at `position` that went through the positions of `history` (their repetition
    /// keys, oldest first; ignored by games that allow repetition).
    pub fn resume(position: G, history: Vec<u64>) -> GameState<G> {
        if !G::FORBIDS_REPETITION {
            return GameState::new(position);
        }
        GameState { position, history }
    }

    pub fn position(&self) -> &G {
        &self.position
    }

    /// Repetition keys of the positions before the current one, oldest first.
    pub fn history(&self) -> &[u64] {
        &self.history
    }

    /// Whether playing `mv` would recreate an earlier position.
    pub fn repeats(&self, mv: &G::Move) -> bool {
        if !G::FORBIDS_REPETITION {
            return false;
        }
        let mut child = self.position.clone();
        child.play_unchecked(mv);
        let key = child.repetition_key();
        key == self.position.repetition_key() || self.history.contains(&key)
    }

    /// Every legal move, the history's rules included.
    pub fn legal_moves(&self, out: &mut MoveList<G::Move>) {
        if !G::FORBIDS_REPETITION {
            return self.position.legal_moves(out);
        }
        let mut all = MoveList::new();
        self.position.legal_moves(&mut all);
        out.extend(all.into_iter().filter(|mv| !self.repeats(mv)));
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
        if let Some(key) = key {
            self.history.push(key);
        }
        self.position.play_unchecked(mv);
        key
    }

    /// How the game ended, if it has. A side left without a move by the repetition rule loses
    /// like any side without a move.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(outcome) = self.position.outcome() {
            return Some(outcome);
        }
        if G::FORBIDS_REPETITION {
            let mut moves = MoveList::new();
            self.legal_moves(&mut moves);
            if moves.is_empty() {
                return Some(Outcome::win(
                    self.position.turn().other(),
                    Termination::NoMoves,
                ));
            }
        }
        None
    }
}
