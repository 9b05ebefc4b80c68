//! Self-play games for the tuner: the engine plays itself at a fixed limit from random openings,
//! and every position of the game is labelled with the game's result.

use rand::Rng;
use rand::rngs::SmallRng;

use super::eval::Searchable;
use super::limits::{FrozenClock, Limit};
use super::score::Score;
use super::search::{Engine, Params};
use crate::rules::record::Record;
use crate::rules::{MoveList, Variants, Winner};

/// Games longer than this are abandoned (none of the four games should come near it).
const MAX_PLIES: usize = 400;

/// How a run of self-play games is played.
#[derive(Clone, Copy, Debug)]
pub struct SelfPlayConfig {
    /// The engine's limit per move: a node count or a depth (a time would not reproduce).
    pub limit: Limit,
    /// Random plies that open a game, drawn from this range (`min <= max`).
    pub random_plies: (usize, usize),
    /// The same seed plays the same games.
    pub seed: u64,
}

/// One finished self-play game: its positions in order (the random opening left out), the
/// search's score of each, and who won.
pub struct SelfPlayGame<G> {
    pub positions: Vec<G>,
    pub scores: Vec<Score>,
    pub winner: Winner,
}

/// Plays one game of the engine against itself: `random_plies` random moves, then the engine's
/// best move at `limit` (a node or depth limit keeps it reproducible). `None` for a game that
/// ran past [`MAX_PLIES`].
pub fn play<G: Searchable>(
    engine: &mut Engine<G>,
    variants: Variants,
    limit: Limit,
    random_plies: usize,
    rng: &mut SmallRng,
) -> Option<SelfPlayGame<G>> {
    engine.new_game();
    let mut record = Record::new(G::start(variants));
    let mut positions = Vec::new();
    let mut scores = Vec::new();
    let mut moves = MoveList::new();
    loop {
        if let Some(outcome) = record.outcome() {
            return Some(SelfPlayGame {
                positions,
                scores,
                winner: outcome.winner,
            });
        }
        if record.moves().len() >= MAX_PLIES {
            return None;
        }
        moves.clear();
        record.legal_moves(&mut moves);
        let mv = if record.moves().len() < random_plies {
            moves[rng.random_range(0..moves.len())]
        } else {
            positions.push(record.position().clone());
            let report = engine.search(
                record.position(),
                record.history(),
                &Params::analysis(limit, &FrozenClock),
            );
            scores.push(report.score);
            report.best().unwrap_or(moves[0])
        };
        record.play(mv).expect("a legal move");
    }
}
