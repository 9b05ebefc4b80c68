//! The engine for callers that pick the game at run time and speak notation (the service and
//! the CLI): analysis of any game record, and the move of a computer opponent.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::eval::Searchable;
use super::levels::Level;
use super::limits::Clock;
use super::score::Score;
use super::search::{Params, Report, search};
use crate::rules::record::Record;
use crate::rules::{AnyRecord, MoveList};

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

fn level_move<G: Searchable>(
    record: &Record<G>,
    level: Level,
    seed: u64,
    clock: &dyn Clock,
) -> Option<String> {
    let mut moves = MoveList::new();
    record.legal_moves(&mut moves);
    if moves.is_empty() {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    if rng.random_range(0..100) < level.random_percent {
        return Some(moves[rng.random_range(0..moves.len())].to_string());
    }
    let report = search(
        record.position(),
        record.history(),
        &Params {
            limit: level.limit(),
            caps: level.caps(),
            multipv: 1,
            clock,
            stop: None,
            tt_bits: 18,
            contempt: 20,
        },
    );
    report.best().map(|m| m.to_string())
}

/// The move a computer opponent of `level` plays in `record`; `seed` drives the randomness of
/// the low levels.
pub fn computer_move(
    record: &AnyRecord,
    level: Level,
    seed: u64,
    clock: &dyn Clock,
) -> Option<String> {
    match record {
        AnyRecord::Pillarz(r) => level_move(r, level, seed, clock),
        AnyRecord::Pilastri(r) => level_move(r, level, seed, clock),
        AnyRecord::Pyrga(r) => level_move(r, level, seed, clock),
        AnyRecord::Alcazar(r) => level_move(r, level, seed, clock),
    }
}
