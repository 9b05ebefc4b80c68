//! A game record: a start position, the moves played, and the rules that need that history.
//!
//! Only Alcazar's no-repetition rule looks past the current position (Pyrga's constraints are
//! part of its position notation). Keeping it here keeps positions small and copyable for
//! search, while a record replayed from its start reproduces exactly the legal moves of the game.

use super::game::{Game, IllegalMove, MoveList, Outcome, Termination};

#[derive(Clone, Debug)]
pub struct Record<G: Game> {
    start: G,
    moves: Vec<G::Move>,
    position: G,
    /// Repetition keys of every position before the current one, oldest first.
    history: Vec<u64>,
}

impl<G: Game> Record<G> {
    pub fn new(start: G) -> Record<G> {
        Record {
            position: start.clone(),
            start,
            moves: Vec::new(),
            history: Vec::new(),
        }
    }

    /// Replays `moves` from `start`; on an illegal move, its index and the reason.
    pub fn replay(
        start: G,
        moves: impl IntoIterator<Item = G::Move>,
    ) -> Result<Record<G>, (usize, IllegalMove)> {
        let mut record = Record::new(start);
        for (i, mv) in moves.into_iter().enumerate() {
            record.play(mv).map_err(|e| (i, e))?;
        }
        Ok(record)
    }

    pub fn start(&self) -> &G {
        &self.start
    }

    pub fn position(&self) -> &G {
        &self.position
    }

    pub fn moves(&self) -> &[G::Move] {
        &self.moves
    }

    /// Repetition keys of the positions before the current one.
    pub fn history(&self) -> &[u64] {
        &self.history
    }

    fn repeats(&self, mv: &G::Move) -> bool {
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

    /// Plays a legal move; an illegal one changes nothing.
    pub fn play(&mut self, mv: G::Move) -> Result<(), IllegalMove> {
        self.check(&mv)?;
        self.history.push(self.position.repetition_key());
        self.position.play_unchecked(&mv);
        self.moves.push(mv);
        Ok(())
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
