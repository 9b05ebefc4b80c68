//! A game record: a start position, the moves played, and the state they led to.
//!
//! The record is what matches, the engine protocol and perft keep; the rules that need history
//! (Alcazar's no-repetition) live in its [`GameState`], so a record replayed from its start
//! reproduces exactly the legal moves of the game.

use super::game::{Game, IllegalMove, MoveList, Outcome};
use super::state::GameState;

#[derive(Clone, Debug)]
pub struct Record<G: Game> {
    start: G,
    moves: Vec<G::Move>,
    state: GameState<G>,
}

impl<G: Game> Record<G> {
    pub fn new(start: G) -> Record<G> {
        Record {
            state: GameState::new(start.clone()),
            start,
            moves: Vec::new(),
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
        self.state.position()
    }

    /// The position with the history its rules look at.
    pub fn state(&self) -> &GameState<G> {
        &self.state
    }

    pub fn moves(&self) -> &[G::Move] {
        &self.moves
    }

    /// Repetition keys of the positions before the current one.
    pub fn history(&self) -> &[u64] {
        self.state.history()
    }

    /// Every legal move, the history's rules included.
    pub fn legal_moves(&self, out: &mut MoveList<G::Move>) {
        self.state.legal_moves(out);
    }

    pub fn check(&self, mv: &G::Move) -> Result<(), IllegalMove> {
        self.state.check(mv)
    }

    /// Plays a legal move; an illegal one changes nothing.
    pub fn play(&mut self, mv: G::Move) -> Result<(), IllegalMove> {
        self.state.play(&mv)?;
        self.moves.push(mv);
        Ok(())
    }

    /// How the game ended, if it has.
    pub fn outcome(&self) -> Option<Outcome> {
        self.state.outcome()
    }
}
