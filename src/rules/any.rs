//! The four games behind one type, for callers that choose the game at run time (the service
//! and the CLI) and speak notation strings. Search code stays generic over [`Game`] instead.

use super::game::{Game, MoveList, Outcome, Player};
use super::kind::{GameKind, RulesError, Variant, Variants};
use super::record::Record;
use super::{alcazar, perft, pilastri, pillarz, pyrga};

/// A game record of any of the four games.
#[derive(Clone, Debug)]
pub enum AnyRecord {
    Pillarz(Record<pillarz::Position>),
    Pilastri(Box<Record<pilastri::Position>>),
    Pyrga(Record<pyrga::Position>),
    Alcazar(Record<alcazar::Position>),
}

/// Runs `$body` with `$r` bound to the inner `Record<G>`, whatever the game.
macro_rules! with_record {
    ($self:expr, $r:ident => $body:expr) => {
        match $self {
            AnyRecord::Pillarz($r) => $body,
            AnyRecord::Pilastri($r) => $body,
            AnyRecord::Pyrga($r) => $body,
            AnyRecord::Alcazar($r) => $body,
        }
    };
}

fn start_record<G: Game>(
    kind: GameKind,
    variants: Variants,
    position: Option<&str>,
) -> Result<Record<G>, RulesError> {
    let start = match position {
        None => G::start(variants),
        Some(text) => G::parse_position(text, variants).map_err(|e| RulesError::BadPosition {
            game: kind,
            message: e.to_string(),
        })?,
    };
    Ok(Record::new(start))
}

fn parse_move<G: Game>(kind: GameKind, input: &str) -> Result<G::Move, RulesError> {
    G::parse_move(input).map_err(|e| RulesError::BadNotation {
        game: kind,
        input: input.to_string(),
        message: e.to_string(),
    })
}

fn names<M: std::fmt::Display>(moves: &[M]) -> Vec<String> {
    moves.iter().map(ToString::to_string).collect()
}

impl AnyRecord {
    /// A new game from the start position of these variants, or from `position`.
    pub fn new(
        kind: GameKind,
        variants: Variants,
        position: Option<&str>,
    ) -> Result<AnyRecord, RulesError> {
        Ok(match kind {
            GameKind::Pillarz => AnyRecord::Pillarz(start_record(kind, variants, position)?),
            GameKind::Pilastri => {
                AnyRecord::Pilastri(Box::new(start_record(kind, variants, position)?))
            }
            GameKind::Pyrga => AnyRecord::Pyrga(start_record(kind, variants, position)?),
            GameKind::Alcazar => AnyRecord::Alcazar(start_record(kind, variants, position)?),
        })
    }

    /// Rebuilds a game from its start position and its moves (as stored).
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
        match self {
            AnyRecord::Pillarz(_) => GameKind::Pillarz,
            AnyRecord::Pilastri(_) => GameKind::Pilastri,
            AnyRecord::Pyrga(_) => GameKind::Pyrga,
            AnyRecord::Alcazar(_) => GameKind::Alcazar,
        }
    }

    /// The variants in force. A Pilastri position fixes its own size, so an 8×8 position means
    /// `size-8` even when it was not asked for.
    pub fn variants(&self) -> Variants {
        match self {
            AnyRecord::Pilastri(r) => {
                let mut v = Variants::NONE;
                if r.position().size() == 8 {
                    v = v.with(Variant::Size8);
                }
                if r.position().jumpers() {
                    v = v.with(Variant::Jumpers);
                }
                v
            }
            _ => Variants::NONE,
        }
    }

    /// The current position in notation.
    pub fn position(&self) -> String {
        with_record!(self, r => r.position().to_string())
    }

    /// The start position in notation.
    pub fn start_position(&self) -> String {
        with_record!(self, r => r.start().to_string())
    }

    pub fn turn(&self) -> Player {
        with_record!(self, r => r.position().turn())
    }

    /// Moves played so far.
    pub fn ply(&self) -> usize {
        with_record!(self, r => r.moves().len())
    }

    /// The moves played, canonically.
    pub fn moves(&self) -> Vec<String> {
        with_record!(self, r => names(r.moves()))
    }

    /// Every legal move, canonically, in generation order.
    pub fn legal_moves(&self) -> Vec<String> {
        with_record!(self, r => {
            let mut moves = MoveList::new();
            r.legal_moves(&mut moves);
            names(&moves)
        })
    }

    /// Plays a move given in (lenient) notation; returns its canonical form.
    pub fn play(&mut self, input: &str) -> Result<String, RulesError> {
        let kind = self.kind();
        with_record!(self, r => {
            let mv = parse_move_for(r, kind, input)?;
            r.play(mv)?;
            Ok(mv.to_string())
        })
    }

    /// Checks a move without playing it; returns its canonical form.
    pub fn check(&self, input: &str) -> Result<String, RulesError> {
        let kind = self.kind();
        with_record!(self, r => {
            let mv = parse_move_for(r, kind, input)?;
            r.check(&mv)?;
            Ok(mv.to_string())
        })
    }

    pub fn outcome(&self) -> Option<Outcome> {
        with_record!(self, r => r.outcome())
    }

    /// Perft from the current position, with the game's history for the repetition rule.
    pub fn perft(&self, depth: u32) -> u64 {
        with_record!(self, r => perft::perft(r.position(), depth, r.history()))
    }

    /// Perft per root move.
    pub fn divide(&self, depth: u32) -> Vec<(String, u64)> {
        with_record!(self, r => perft::divide(r.position(), depth, r.history())
            .into_iter()
            .map(|(m, n)| (m.to_string(), n))
            .collect())
    }
}

/// [`parse_move`] with the game type taken from a record (so the macro arms can call it).
fn parse_move_for<G: Game>(
    _record: &Record<G>,
    kind: GameKind,
    input: &str,
) -> Result<G::Move, RulesError> {
    parse_move::<G>(kind, input)
}
