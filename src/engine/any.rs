//! The engine for callers that pick the game at run time and speak notation (the service and
//! the CLI): analysis of any game state, and the move of an engine seat. Which engine (and
//! so which table) an engine seat thinks with is the caller's choice: the service keeps a
//! seat's engine between its moves.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::eval::{Eval, Searchable};
use super::levels::Level;
use super::limits::Clock;
use super::score::Score;
use super::search::{Engine, Params, Report, TT_BITS, search};
use crate::rules::state::GameState;
use crate::rules::{AnyState, GameKind, MoveList, alcazar, pilastri, pillarz, pyrga};

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

fn analyse_state<G: Searchable>(state: &GameState<G>, params: &Params<'_>) -> Analysis {
    to_analysis(search(state.position(), state.history(), params))
}

/// Analyses the current position of `state`, its history included (Alcazar's repetitions).
pub fn analyse(state: &AnyState, params: &Params<'_>) -> Analysis {
    match state {
        AnyState::Pillarz(s) => analyse_state(s, params),
        AnyState::Pilastri(s) => analyse_state(s, params),
        AnyState::Pyrga(s) => analyse_state(s, params),
        AnyState::Alcazar(s) => analyse_state(s, params),
    }
}

/// Level `n` (1–8) of the game `kind` (each game has its table).
pub fn level_of(kind: GameKind, n: u8) -> Option<Level> {
    match kind {
        GameKind::Pillarz => Level::of::<pillarz::Position>(n),
        GameKind::Pilastri => Level::of::<pilastri::Position>(n),
        GameKind::Pyrga => Level::of::<pyrga::Position>(n),
        GameKind::Alcazar => Level::of::<alcazar::Position>(n),
    }
}

/// The move an engine seat of `level` plays in `state`; `rng` picks among the moves
/// within the level's margin of the best.
pub fn level_choice<G: Searchable>(
    state: &GameState<G>,
    level: Level,
    rng: &mut SmallRng,
    clock: &dyn Clock,
) -> Option<G::Move> {
    level_choice_with(&mut Engine::new(TT_BITS), state, level, None, rng, clock)
}

/// [`level_choice`] with an engine that may remember earlier moves of the game, in a game
/// drawn after `plies_to_limit` more plies ([`Params::plies_to_limit`]).
pub fn level_choice_with<G: Searchable>(
    engine: &mut Engine<G>,
    state: &GameState<G>,
    level: Level,
    plies_to_limit: Option<u32>,
    rng: &mut SmallRng,
    clock: &dyn Clock,
) -> Option<G::Move> {
    let mut moves = MoveList::new();
    state.legal_moves(&mut moves);
    if moves.len() <= 1 {
        return moves.first().copied();
    }
    let report = engine.search(
        state.position(),
        state.history(),
        &Params {
            caps: level.caps(),
            multipv: if level.margin > 0 { 8 } else { 1 },
            plies_to_limit,
            ..Params::play(level.limit(), clock)
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
/// of one game (the engine protocol's session, an engine seat's moves).
pub enum AnyEngine {
    Pillarz(Engine<pillarz::Position>),
    Pilastri(Engine<pilastri::Position>),
    Pyrga(Engine<pyrga::Position>),
    Alcazar(Engine<alcazar::Position>),
}

impl AnyEngine {
    /// An engine with the game's default evaluation.
    pub fn new(kind: GameKind, tt_bits: u32) -> AnyEngine {
        AnyEngine::with_eval(kind, tt_bits, None)
    }

    /// An engine evaluating with `eval` (`None`: the game's default; a game without a network
    /// evaluates by hand whatever is asked).
    pub fn with_eval(kind: GameKind, tt_bits: u32, eval: Option<Eval>) -> AnyEngine {
        fn make<G: Searchable>(tt_bits: u32, eval: Option<Eval>) -> Engine<G> {
            Engine::with_eval(tt_bits, eval.unwrap_or(G::DEFAULT_EVAL))
        }
        match kind {
            GameKind::Pillarz => AnyEngine::Pillarz(make(tt_bits, eval)),
            GameKind::Pilastri => AnyEngine::Pilastri(make(tt_bits, eval)),
            GameKind::Pyrga => AnyEngine::Pyrga(make(tt_bits, eval)),
            GameKind::Alcazar => AnyEngine::Alcazar(make(tt_bits, eval)),
        }
    }

    /// Analyses `state` with what earlier searches left in the table; `None` when the state
    /// is of another game than this engine's.
    pub fn analyse(&mut self, state: &AnyState, params: &Params<'_>) -> Option<Analysis> {
        let report = match (self, state) {
            (AnyEngine::Pillarz(e), AnyState::Pillarz(s)) => {
                to_analysis(e.search(s.position(), s.history(), params))
            }
            (AnyEngine::Pilastri(e), AnyState::Pilastri(s)) => {
                to_analysis(e.search(s.position(), s.history(), params))
            }
            (AnyEngine::Pyrga(e), AnyState::Pyrga(s)) => {
                to_analysis(e.search(s.position(), s.history(), params))
            }
            (AnyEngine::Alcazar(e), AnyState::Alcazar(s)) => {
                to_analysis(e.search(s.position(), s.history(), params))
            }
            _ => return None,
        };
        Some(report)
    }
}

/// What an engine seat is asked to play.
#[derive(Clone, Copy, Debug)]
pub struct SeatTurn {
    pub level: Level,
    /// Drives the randomness of the low levels.
    pub seed: u64,
    /// The plies left before the service's ply cap draws the game.
    pub plies_to_limit: Option<u32>,
}

/// The move an engine seat plays in `state`, thinking with `engine` (which keeps what it
/// learned for the seat's next move). `None` when the game has no move or `engine` is of
/// another game.
pub fn engine_seat_move(
    engine: &mut AnyEngine,
    state: &AnyState,
    turn: SeatTurn,
    clock: &dyn Clock,
) -> Option<String> {
    fn name<M: std::fmt::Display>(mv: Option<M>) -> Option<String> {
        mv.map(|m| m.to_string())
    }
    let SeatTurn {
        level,
        seed,
        plies_to_limit,
    } = turn;
    let rng = &mut SmallRng::seed_from_u64(seed);
    match (engine, state) {
        (AnyEngine::Pillarz(e), AnyState::Pillarz(s)) => {
            name(level_choice_with(e, s, level, plies_to_limit, rng, clock))
        }
        (AnyEngine::Pilastri(e), AnyState::Pilastri(s)) => {
            name(level_choice_with(e, s, level, plies_to_limit, rng, clock))
        }
        (AnyEngine::Pyrga(e), AnyState::Pyrga(s)) => {
            name(level_choice_with(e, s, level, plies_to_limit, rng, clock))
        }
        (AnyEngine::Alcazar(e), AnyState::Alcazar(s)) => {
            name(level_choice_with(e, s, level, plies_to_limit, rng, clock))
        }
        _ => None,
    }
}
