//! The four games behind one type, for callers that choose the game at run time (the service
//! and the CLI) and speak notation strings. Search code stays generic over [`Game`] instead.
//!
//! [`AnyState`] is a game's state (position and the history its rules need), rebuilt from
//! stored notation without a replay; [`AnyRecord`] adds the start and the moves that led to it.

use super::game::{Game, IllegalMove, MoveList, Outcome, Player};
use super::kind::{GameKind, ParseGameKindError, Variant, VariantError, Variants};
use super::state::GameState;
use super::{alcazar, perft, pilastri, pillarz, pyrga};

/// Everything that can go wrong when the rules are driven by names and strings (the API and
/// the CLI), with the data a good message needs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error(transparent)]
    UnknownGame(#[from] ParseGameKindError),
    #[error(transparent)]
    Variant(#[from] VariantError),
    #[error("bad {game} position: {message}")]
    BadPosition { game: GameKind, message: String },
    #[error("bad {game} move {input:?}: {message}")]
    BadNotation {
        game: GameKind,
        input: String,
        message: String,
    },
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
}

/// The state of a game of any of the four games.
#[derive(Clone, Debug)]
pub enum AnyState {
    Pillarz(GameState<pillarz::Position>),
    Pilastri(Box<GameState<pilastri::Position>>),
    Pyrga(GameState<pyrga::Position>),
    Alcazar(GameState<alcazar::Position>),
}

/// Runs `$body` with `$s` bound to the inner `GameState<G>`, whatever the game.
macro_rules! with_state {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            AnyState::Pillarz($s) => $body,
            AnyState::Pilastri($s) => $body,
            AnyState::Pyrga($s) => $body,
            AnyState::Alcazar($s) => $body,
        }
    };
}

fn parse_position<G: Game>(
    kind: GameKind,
    variants: Variants,
    position: Option<&str>,
) -> Result<G, RulesError> {
    match position {
        None => Ok(G::start(variants)),
        Some(text) => G::parse_position(text, variants).map_err(|e| RulesError::BadPosition {
            game: kind,
            message: e.to_string(),
        }),
    }
}

fn parse_move<G: Game>(kind: GameKind, input: &str) -> Result<G::Move, RulesError> {
    G::parse_move(input).map_err(|e| RulesError::BadNotation {
        game: kind,
        input: input.to_string(),
        message: e.to_string(),
    })
}

/// [`parse_move`] with the game type taken from a state (so the macro arms can call it).
fn parse_move_in<G: Game>(
    _state: &GameState<G>,
    kind: GameKind,
    input: &str,
) -> Result<G::Move, RulesError> {
    parse_move::<G>(kind, input)
}

impl AnyState {
    /// A game at the start position of these variants, or at `position`; `history` holds the
    /// repetition keys of the positions the game went through before (oldest first).
    pub fn resume(
        kind: GameKind,
        variants: Variants,
        position: Option<&str>,
        history: Vec<u64>,
    ) -> Result<AnyState, RulesError> {
        Ok(match kind {
            GameKind::Pillarz => AnyState::Pillarz(GameState::resume(
                parse_position(kind, variants, position)?,
                history,
            )),
            GameKind::Pilastri => AnyState::Pilastri(Box::new(GameState::resume(
                parse_position(kind, variants, position)?,
                history,
            ))),
            GameKind::Pyrga => AnyState::Pyrga(GameState::resume(
                parse_position(kind, variants, position)?,
                history,
            )),
            GameKind::Alcazar => AnyState::Alcazar(GameState::resume(
                parse_position(kind, variants, position)?,
                history,
            )),
        })
    }

    /// A new game from the start position of these variants, or from `position`.
    pub fn new(
        kind: GameKind,
        variants: Variants,
        position: Option<&str>,
    ) -> Result<AnyState, RulesError> {
        AnyState::resume(kind, variants, position, Vec::new())
    }

    pub fn kind(&self) -> GameKind {
        match self {
            AnyState::Pillarz(_) => GameKind::Pillarz,
            AnyState::Pilastri(_) => GameKind::Pilastri,
            AnyState::Pyrga(_) => GameKind::Pyrga,
            AnyState::Alcazar(_) => GameKind::Alcazar,
        }
    }

    /// The variants in force. A Pilastri position fixes its own size, so an 8×8 position means
    /// `size-8` even when it was not asked for.
    pub fn variants(&self) -> Variants {
        match self {
            AnyState::Pilastri(s) => {
                let mut v = Variants::NONE;
                if s.position().size() == 8 {
                    v = v.with(Variant::Size8);
                }
                if s.position().jumpers() {
                    v = v.with(Variant::Jumpers);
                }
                v
            }
            _ => Variants::NONE,
        }
    }

    /// The current position in notation.
    pub fn position(&self) -> String {
        with_state!(self, s => s.position().to_string())
    }

    pub fn turn(&self) -> Player {
        with_state!(self, s => s.position().turn())
    }

    /// Whether the game keeps a history of repetition keys (its rules forbid repetition).
    pub fn keeps_history(&self) -> bool {
        with_state!(self, s => s.keeps_history())
    }

    /// Repetition keys of the positions before the current one, oldest first.
    pub fn history(&self) -> &[u64] {
        with_state!(self, s => s.history())
    }

    /// Bytes this state holds on the heap (a boxed position, its history), for weighing it.
    pub fn heap_size(&self) -> usize {
        let boxed = match self {
            AnyState::Pilastri(_) => std::mem::size_of::<GameState<pilastri::Position>>(),
            _ => 0,
        };
        boxed + with_state!(self, s => s.heap_size())
    }

    /// Every legal move, canonically, in generation order.
    pub fn legal_moves(&self) -> Vec<String> {
        let mut names = Vec::new();
        self.for_each_legal_move(|mv| names.push(mv.to_string()));
        names
    }

    /// Calls `f` with each legal move, in generation order, unnamed: a caller that writes the
    /// names into one buffer (the service's legal-moves answer) makes no string per move.
    pub fn for_each_legal_move(&self, mut f: impl FnMut(&dyn std::fmt::Display)) {
        with_state!(self, s => {
            let mut moves = MoveList::new();
            s.legal_moves(&mut moves);
            for mv in &moves {
                f(mv);
            }
        })
    }

    /// Checks a move given in (lenient) notation without playing it; returns its canonical
    /// form.
    pub fn check(&self, input: &str) -> Result<String, RulesError> {
        let kind = self.kind();
        with_state!(self, s => {
            let mv = parse_move_in(s, kind, input)?;
            s.check(&mv)?;
            Ok(mv.to_string())
        })
    }

    /// A move given in (lenient) notation, in canonical form, when it names only squares of
    /// this board; legal here or not (a move that led to this position, say).
    pub fn parse_on_board(&self, input: &str) -> Result<String, RulesError> {
        let kind = self.kind();
        with_state!(self, s => {
            let mv = parse_move_in(s, kind, input)?;
            if !s.position().fits_board(&mv) {
                return Err(RulesError::BadNotation {
                    game: kind,
                    input: input.to_string(),
                    message: "it names a square off this board".to_string(),
                });
            }
            Ok(mv.to_string())
        })
    }

    /// Plays a move given in (lenient) notation; returns its canonical form and the repetition
    /// key the history gained (games that forbid repetition).
    pub fn play(&mut self, input: &str) -> Result<(String, Option<u64>), RulesError> {
        let kind = self.kind();
        with_state!(self, s => {
            let mv = parse_move_in(s, kind, input)?;
            let key = s.play(&mv)?;
            Ok((mv.to_string(), key))
        })
    }

    pub fn outcome(&self) -> Option<Outcome> {
        with_state!(self, s => s.outcome())
    }

    /// Perft from the current position, with the game's history for the repetition rule.
    pub fn perft(&self, depth: u32) -> u64 {
        with_state!(self, s => perft::perft(s.position(), depth, s.history()))
    }

    /// Perft per root move.
    pub fn divide(&self, depth: u32) -> Vec<(String, u64)> {
        with_state!(self, s => perft::divide(s.position(), depth, s.history())
            .into_iter()
            .map(|(m, n)| (m.to_string(), n))
            .collect())
    }
}

/// A game record of any of the four games: its start, its moves (canonically) and its state.
#[derive(Clone, Debug)]
pub struct AnyRecord {
    start: String,
    moves: Vec<String>,
    state: AnyState,
}

impl AnyRecord {
    /// A new game from the start position of these variants, or from `position`.
    pub fn new(
        kind: GameKind,
        variants: Variants,
        position: Option<&str>,
    ) -> Result<AnyRecord, RulesError> {
        let state = AnyState::new(kind, variants, position)?;
        Ok(AnyRecord {
            start: state.position(),
            moves: Vec::new(),
            state,
        })
    }

    /// Rebuilds a game from its start position and its moves, checking every move.
    pub fn replay<S: AsRef<str>>(
        kind: GameKind,
        variants: Variants,
        start: &str,
        moves: &[S],
    ) -> Result<AnyRecord, RulesError> {
        let mut record = AnyRecord::new(kind, variants, Some(start))?;
        for mv in moves {
            record.play(mv.as_ref())?;
        }
        Ok(record)
    }

    pub fn kind(&self) -> GameKind {
        self.state.kind()
    }

    pub fn variants(&self) -> Variants {
        self.state.variants()
    }

    /// The position and the history its rules look at.
    pub fn state(&self) -> &AnyState {
        &self.state
    }

    /// The current position in notation.
    pub fn position(&self) -> String {
        self.state.position()
    }

    /// The start position in notation.
    pub fn start_position(&self) -> &str {
        &self.start
    }

    pub fn turn(&self) -> Player {
        self.state.turn()
    }

    /// Moves played so far.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// The moves played, canonically.
    pub fn moves(&self) -> &[String] {
        &self.moves
    }

    /// Every legal move, canonically, in generation order.
    pub fn legal_moves(&self) -> Vec<String> {
        self.state.legal_moves()
    }

    /// Plays a move given in (lenient) notation; returns its canonical form.
    pub fn play(&mut self, input: &str) -> Result<String, RulesError> {
        let (canonical, _) = self.state.play(input)?;
        self.moves.push(canonical.clone());
        Ok(canonical)
    }

    /// Checks a move without playing it; returns its canonical form.
    pub fn check(&self, input: &str) -> Result<String, RulesError> {
        self.state.check(input)
    }

    pub fn outcome(&self) -> Option<Outcome> {
        self.state.outcome()
    }

    /// Perft from the current position, with the game's history for the repetition rule.
    pub fn perft(&self, depth: u32) -> u64 {
        self.state.perft(depth)
    }

    /// Perft per root move.
    pub fn divide(&self, depth: u32) -> Vec<(String, u64)> {
        self.state.divide(depth)
    }
}
