//! The engine for callers that pick the game at run time and speak notation (the service and
//! the CLI): analysis of any game record, and the move of a computer opponent.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::eval::Searchable;
use super::levels::Level;
use super::limits::Clock;
use super::score::Score;
use super::search::{Engine, Params, Report, search};
use super::seats::with_seat_engine;
use crate::rules::record::Record;
use crate::rules::{AnyRecord, GameKind, MoveList, alcazar, pilastri, pillarz, pyrga};

/// One of the best moves, in notation.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisLine {
    pub mv: String,
    pub score: Score,
    pub pv: Vec<String>,
}

/// A search's result, in notation.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    pub best_move: Option<String>,
    pub score: Score,
    pub pv: Vec<String>,
    pub lines: Vec<AnalysisLine>,
    pub depth: u32,
    pub nodes: u64,
    pub time_ms: u64,
}

fn names<M: std::fmt::Display>(moves: &[M]) -> Vec<String> {
    moves.iter().map(ToString::to_string).collect()
}

fn to_analysis<M: std::fmt::Display + Copy>(report: Report<M>) -> Analysis {
    let lines: Vec<AnalysisLine> = report
        .lines
        .iter()
        .map(|l| AnalysisLine {
            mv: l.mv.to_string(),
            score: l.score,
            pv: names(&l.pv),
        })
        .collect();
    Analysis {
        best_move: lines.first().map(|l| l.mv.clone()),
        pv: lines.first().map(|l| l.pv.clone()).unwrap_or_default(),
        score: report.score,
        lines,
        depth: report.depth,
        nodes: report.nodes,
        time_ms: report.time_ms,
    }
}

fn analyse_record<G: Searchable>(record: &Record<G>, params: &Params<'_>) -> Analysis {
    to_analysis(search(record.position(), record.history(), params))
}

/// Analyses the current position of `record`, its history included (Alcazar's repetitions).
pub fn analyse(record: &AnyRecord, params: &Params<'_>) -> Analysis {
    match record {
        AnyRecord::Pillarz(r) => analyse_record(r, params),
        AnyRecord::Pilastri(r) => analyse_record(r, params),
        AnyRecord::Pyrga(r) => analyse_record(r, params),
        AnyRecord::Alcazar(r) => analyse_record(r, params),
    }
}

/// The move a computer opponent of `level` plays in `record`; `rng` picks among the moves
/// within the level's margin of the best.
pub fn level_choice<G: Searchable>(
    record: &Record<G>,
    level: Level,
    rng: &mut SmallRng,
    clock: &dyn Clock,
) -> Option<G::Move> {
    level_choice_with(&mut Engine::new(18), record, level, rng, clock)
}

/// [`level_choice`] with an engine that may remember earlier moves of the game.
fn level_choice_with<G: Searchable>(
    engine: &mut Engine<G>,
    record: &Record<G>,
    level: Level,
    rng: &mut SmallRng,
    clock: &dyn Clock,
) -> Option<G::Move> {
    let mut moves = MoveList::new();
    record.legal_moves(&mut moves);
    if moves.len() <= 1 {
        return moves.first().copied();
    }
    let report = engine.search(
        record.position(),
        record.history(),
        &Params {
            limit: level.limit(),
            caps: level.caps(),
            multipv: if level.margin > 0 { 8 } else { 1 },
            clock,
            stop: None,
            tt_bits: 18,
            contempt: 20,
        },
    );
    let best = report.lines.first()?;
    if level.margin == 0 || matches!(best.score, Score::WinIn(_)) {
        return Some(best.mv);
    }
    let floor = best.score.ordinal() - i64::from(level.margin);
    let near: Vec<G::Move> = report
        .lines
        .iter()
        .filter(|l| l.score.ordinal() >= floor)
        .map(|l| l.mv)
        .collect();
    Some(near[rng.random_range(0..near.len())])
}

/// An [`Engine`] for a game chosen at run time: one that keeps its table between the searches
/// of one game (the engine protocol's session).
pub enum AnyEngine {
    Pillarz(Engine<pillarz::Position>),
    Pilastri(Engine<pilastri::Position>),
    Pyrga(Engine<pyrga::Position>),
    Alcazar(Engine<alcazar::Position>),
}

impl AnyEngine {
    pub fn new(kind: GameKind, tt_bits: u32) -> AnyEngine {
        match kind {
            GameKind::Pillarz => AnyEngine::Pillarz(Engine::new(tt_bits)),
            GameKind::Pilastri => AnyEngine::Pilastri(Engine::new(tt_bits)),
            GameKind::Pyrga => AnyEngine::Pyrga(Engine::new(tt_bits)),
            GameKind::Alcazar => AnyEngine::Alcazar(Engine::new(tt_bits)),
        }
    }

    /// Analyses `record` with what earlier searches left in the table; `None` when the record
    /// is of another game than this engine's.
    pub fn analyse(&mut self, record: &AnyRecord, params: &Params<'_>) -> Option<Analysis> {
        let report = match (self, record) {
            (AnyEngine::Pillarz(e), AnyRecord::Pillarz(r)) => {
                to_analysis(e.search(r.position(), r.history(), params))
            }
            (AnyEngine::Pilastri(e), AnyRecord::Pilastri(r)) => {
                to_analysis(e.search(r.position(), r.history(), params))
            }
            (AnyEngine::Pyrga(e), AnyRecord::Pyrga(r)) => {
                to_analysis(e.search(r.position(), r.history(), params))
            }
            (AnyEngine::Alcazar(e), AnyRecord::Alcazar(r)) => {
                to_analysis(e.search(r.position(), r.history(), params))
            }
            _ => return None,
        };
        Some(report)
    }
}

/// The move of a computer opponent of `level` in `record`, from `engine` if it is of the
/// record's game.
fn level_move(
    engine: &mut AnyEngine,
    record: &AnyRecord,
    level: Level,
    rng: &mut SmallRng,
    clock: &dyn Clock,
) -> Option<String> {
    fn name<M: std::fmt::Display>(mv: Option<M>) -> Option<String> {
        mv.map(|m| m.to_string())
    }
    match (engine, record) {
        (AnyEngine::Pillarz(e), AnyRecord::Pillarz(r)) => {
            name(level_choice_with(e, r, level, rng, clock))
        }
        (AnyEngine::Pilastri(e), AnyRecord::Pilastri(r)) => {
            name(level_choice_with(e, r, level, rng, clock))
        }
        (AnyEngine::Pyrga(e), AnyRecord::Pyrga(r)) => {
            name(level_choice_with(e, r, level, rng, clock))
        }
        (AnyEngine::Alcazar(e), AnyRecord::Alcazar(r)) => {
            name(level_choice_with(e, r, level, rng, clock))
        }
        _ => unreachable!("a seat's engine is made for its record's game"),
    }
}

/// The move a computer opponent of `level` plays in `record`; `seed` drives the randomness of
/// the low levels. The seat's engine is kept between its moves (see [`super::seats`]).
pub fn computer_move(
    record: &AnyRecord,
    level: Level,
    seed: u64,
    clock: &dyn Clock,
) -> Option<String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    with_seat_engine(record, level.level, |engine| {
        level_move(engine, record, level, &mut rng, clock)
    })
}
