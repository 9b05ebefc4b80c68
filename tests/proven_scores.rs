//! Proven scores are never wrong. On positions from seeded random games of every game, each win
//! or loss the engine reports is confirmed by the independent prover in `tests/common`, and a
//! winning best move keeps the win. Alcazar positions are searched with their game's history
//! (its no-repetition rule makes results depend on the path, and the engine's table with it).

mod common;

use common::prover::forced;
use pillarz::engine::{Caps, FrozenClock, Limit, Params, Score, Searchable, search};
use pillarz::rules::record::Record;
use pillarz::rules::{MoveList, Variants, alcazar, pilastri, pillarz as pz, pyrga};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn params(depth: u32) -> Params<'static> {
    Params {
        limit: Limit::Depth(depth),
        caps: Caps::NONE,
        multipv: 1,
        clock: &FrozenClock,
        stop: None,
        tt_bits: 16,
        contempt: 0,
    }
}

/// Checks one search of `record`'s position: every proven score within `max_proof` plies is
/// confirmed by the prover. Returns whether a proven score was checked.
fn confirm<G: Searchable>(record: &Record<G>, depth: u32, max_proof: u32) -> bool {
    let pos = record.position();
    let history = record.history();
    let report = search(pos, history, &params(depth));
    let me = pos.turn();
    match report.score {
        Score::WinIn(n) if n <= max_proof => {
            assert!(
                forced(pos, me, n, &mut history.to_vec()),
                "{pos}: reported win in {n} is not forced"
            );
            let best = report.best().expect("a win has a move");
            let mut after = pos.clone();
            after.play_unchecked(&best);
            let mut path = history.to_vec();
            path.push(pos.repetition_key());
            assert!(
                forced(&after, me, n - 1, &mut path),
                "{pos}: {best} does not keep the win in {n}"
            );
            true
        }
        Score::LossIn(n) if n <= max_proof => {
            assert!(
                forced(pos, me.other(), n, &mut history.to_vec()),
                "{pos}: reported loss in {n}, but the opponent cannot force it"
            );
            true
        }
        _ => false,
    }
}

/// Plays `games` seeded random games; searches every position from `from_ply` on. Returns how
/// many proven scores were confirmed.
fn random_games<G: Searchable>(games: u64, from_ply: usize, depth: u32, max_proof: u32) -> usize {
    let mut confirmed = 0;
    let mut moves = MoveList::new();
    for seed in 0..games {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut record = Record::new(G::start(Variants::NONE));
        while record.outcome().is_none() {
            if record.moves().len() >= from_ply && confirm(&record, depth, max_proof) {
                confirmed += 1;
            }
            moves.clear();
            record.legal_moves(&mut moves);
            record
                .play(moves[rng.random_range(0..moves.len())])
                .unwrap();
        }
    }
    confirmed
}

#[test]
fn pillarz_proven_scores_are_confirmed() {
    assert!(random_games::<pz::Position>(12, 2, 4, 4) >= 10);
}

#[test]
fn pilastri_proven_scores_are_confirmed() {
    assert!(random_games::<pilastri::Position>(6, 10, 4, 4) >= 10);
}

#[test]
fn pyrga_proven_scores_are_confirmed() {
    assert!(random_games::<pyrga::Position>(12, 8, 5, 5) >= 10);
}

#[test]
fn alcazar_proven_scores_are_confirmed_with_the_history() {
    assert!(random_games::<alcazar::Position>(4, 4, 4, 5) >= 10);
}
