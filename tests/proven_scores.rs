//! Proven scores are never wrong. On positions from seeded random games of every game, each win,
//! loss or draw the engine reports is confirmed by the independent prover in `tests/common`, and
//! a winning (drawing) best move keeps the win (the draw). Late Pyrga positions are solved: the
//! engine reports their exact result, which the prover confirms, with the shortest win. Alcazar positions are searched with their game's history
//! (its no-repetition rule makes results depend on the path, and the engine's table with it).

mod common;

use common::prover::forced;
use pillarz::engine::{Caps, Engine, FrozenClock, Limit, Params, Score, Searchable, search};
use pillarz::rules::record::Record;
use pillarz::rules::{Game, MoveList, Variants, Winner, alcazar, pilastri, pillarz as pz, pyrga};
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
        plies_to_limit: None,
    }
}

/// Checks one search of `record`'s position: every proven score within `max_proof` plies is
/// confirmed by the prover. Returns whether a proven score was checked.
fn confirm<G: Searchable>(record: &Record<G>, depth: u32, max_proof: u32) -> bool {
    let report = search(record.position(), record.history(), &params(depth));
    confirm_report(
        record.position(),
        record.history(),
        report.score,
        report.best(),
        max_proof,
    )
}

/// Checks a reported score of `pos` reached through `history` (and its best move): a proven
/// score within `max_proof` plies is confirmed by the prover. Returns whether one was checked.
fn confirm_report<G: Searchable>(
    pos: &G,
    history: &[u64],
    score: Score,
    best: Option<G::Move>,
    max_proof: u32,
) -> bool {
    let me = pos.turn();
    match score {
        Score::WinIn(n) if n <= max_proof => {
            assert!(
                forced(pos, me, n, &mut history.to_vec()),
                "{pos}: reported win in {n} is not forced"
            );
            let best = best.expect("a win has a move");
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
        Score::Draw => {
            // A draw needs a game that ends in reach: neither side can force a win, however
            // long it tries.
            assert!(
                pos.plies_left().is_some_and(|n| n <= max_proof),
                "{pos}: reported draw, but the game's end is out of reach"
            );
            for who in [me, me.other()] {
                assert!(
                    !forced(pos, who, UNBOUNDED, &mut history.to_vec()),
                    "{pos}: reported draw, but {who} can force a win"
                );
            }
            if let Some(best) = best {
                let mut after = pos.clone();
                after.play_unchecked(&best);
                let mut path = history.to_vec();
                path.push(pos.repetition_key());
                assert!(
                    !forced(&after, me.other(), UNBOUNDED, &mut path),
                    "{pos}: {best} loses the draw"
                );
            }
            true
        }
        _ => false,
    }
}

/// More plies than any game that reports draws lasts (Pyrga ends within 30).
const UNBOUNDED: u32 = 64;

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

/// Late Pyrga positions (at most `LATE` pieces left in both hands) from seeded random games are
/// solved within a node budget: the engine reports a proven result, the prover confirms it, a
/// win or loss is reported at its exact distance, and a finished game's draw is a draw.
#[test]
fn late_pyrga_positions_are_solved_exactly() {
    const LATE: u32 = 10;
    let mut seen = [0; 3];
    let mut moves = MoveList::new();
    for seed in 0..16 {
        let mut rng = SmallRng::seed_from_u64(1_000 + seed);
        let mut record = Record::new(pyrga::Position::start(Variants::NONE));
        let mut engine = Engine::<pyrga::Position>::new(16);
        while record.outcome().is_none() {
            let pos = record.position();
            if pos.plies_left().is_some_and(|n| n <= LATE) {
                let mut p = params(64);
                p.limit = Limit::Nodes(1_000_000);
                // One engine per game, its table kept from move to move.
                let report = engine.search(pos, record.history(), &p);
                assert!(
                    report.score.is_proven(),
                    "{pos}: {} is not solved",
                    report.score
                );
                assert!(confirm_report(
                    pos,
                    &[],
                    report.score,
                    report.best(),
                    UNBOUNDED
                ));
                let me = pos.turn();
                match report.score {
                    Score::WinIn(n) => {
                        seen[0] += 1;
                        assert!(
                            !forced(pos, me, n - 1, &mut Vec::new()),
                            "{pos}: win in {n} is not the shortest"
                        );
                    }
                    Score::LossIn(n) => {
                        seen[1] += 1;
                        assert!(
                            !forced(pos, me.other(), n - 1, &mut Vec::new()),
                            "{pos}: loss in {n} is not the longest"
                        );
                    }
                    _ => seen[2] += 1,
                }
            }
            moves.clear();
            record.legal_moves(&mut moves);
            record
                .play(moves[rng.random_range(0..moves.len())])
                .unwrap();
        }
        let over = search(record.position(), record.history(), &params(4));
        let expected = match record.outcome().expect("over").winner {
            Winner::Draw => Score::Draw,
            Winner::Player(p) if p == record.position().turn() => Score::WinIn(0),
            Winner::Player(_) => Score::LossIn(0),
        };
        assert_eq!(over.score, expected, "{}", record.position());
    }
    // Wins, losses and draws all occur among these positions.
    assert!(
        seen.iter().all(|&n| n >= 5),
        "wins, losses, draws: {seen:?}"
    );
}

#[test]
fn alcazar_proven_scores_are_confirmed_with_the_history() {
    assert!(random_games::<alcazar::Position>(4, 4, 4, 5) >= 10);
}

/// Alcazar games (from the start) whose last position's result within three plies depends on
/// the way the game came there, although every move from it is legal either way: the
/// no-repetition rule takes moves away deeper in the tree, where the table could carry a result
/// from one path to another. Found in seeded random games in which the knights shuffle about,
/// so that positions come back.
const PATH_DEPENDENT_GAMES: [&str; 7] = [
    "Kb6 d7f7 Kb8 Kf2 Kd8 Kh2 Kd6 Kh4 Kf6 b5c4 Kh6 Kh2 f7g6 c4b3 Kh8 Kh4 c6c4 Kh2 Kh6 Kf2 f3d3 \
     g6h7 Kf6 Kh2 Kf8 Kf2 Kh8 c4c6 Kf8 Kf4 h5g6 Kf2 Kh8 Kf4 d3c2 g4h5 e8d7 Kf6 Kf8 h7g8 Kd8 \
     h5i4 c2b1 Kd6 Kf8 Kd4 g6f7 Kb4 Kd8 Kd4 Kb8 Kb4 d7e8 Kb6 c6d5 Kb4 Kd8",
    "Kd8 g4f5 e2d3 Kh4 Kb8 Kh2 Kb6 Kh4 b5a6 Kh2 e8d9 Kh4 Kb8 Kh2 Kd8 c6c4 Kf8 Kf2 Kh8 a6a8 Kh6 \
     h5i6 Kf6 Kd2 Kd6 Kf2 Kd4 Kd2 Kf4 d7e6 Kh4 Kf2 Kh6 Kh2 Kh4 f3e2 Kh6 Kf2",
    "Kd8 g4g6 Kb8 Kf2 Kd8 f3g2 Kb8 b5a4 Kd8 Kf4 g2g4 Kd4 Kb8 g4h3 Kd8 a4b5 Kb8 Kd2 e2d3 g6f7 \
     Kb6 h3i2 d3e2 f7e6 Kb8 Kb2 Kb6 Kb4 Kb8 Kd4 e6f7 Kd6 Kb6 i2h1 Kb8 e2d1 Kd8 Kf6 Kb8 Kh6 Kd8 \
     Kh8 c6d5 Kh6 Kb8 Kf6 Kb6",
    "Kd8 Kh4 c6b7 e2e4 Kb8 Kh2 Kd8 Kf2 Kb8 Kd2 Kd8 Kb2 Kb8 Kb4 Kd8 Kd4 Kb8 Kd6 Kd8 b5a4 Kb8 Kf6 \
     Kd8 Kf8 Kb8 b7c6 e8d9",
    "c6d5 Kh4 Kd8 Kh2 g4f5 Kf2 Kb8 e2e4 Kd8 f3g2 b5a4 d5e6 Kb8 Kd2 e8f9 Kb2 Kb6 a4a2 Kb8 Kb4 \
     Kb6 Kd4 Kd6 Kb4 Kd4 Kb2 Kb4 d7e8 Kd4 Kd2 Kd6 Kd4 Kb6 Kb4 Kb8 Kb6 g2g4 e6f7 g4g2 Kd6 Kd8",
    "e8f9 Kf2 e2d1 Kh2 Kd8 Kf2 c6c8 Kd2 Kf8 d7f7 Kh8 Kb2 Kh6 Kd2 Kf6 Kf2 Kf4 Kd2 Kd4 c8d9 Kf4 \
     h5f5 Kd4 d1c2 Kb4 Kd4 c2d1 Kd6 Kb2 Kd8 Kd2 Kf8 Kd4 f3e2 b5a6 f7d7 e2e4 Kf6 Kd2 Kd6 Kf2 Kd4 \
     d1e2 a6a8 f9g8 Kd2 d7c8 Kb2 f5d5 Kd2 Kf4",
    "Kb6 Kf2 Kb8 h5i4 Kb6 Kh2 Kb8 e8f7 Kb6 Kf2 e2f1 Kd2 Kb8 Kb2 Kd8 Kb4 f3e2 Kb2 Kf8 Kd2 Kh8 \
     d7e8 g4g6 Kd4 i4h5 Kf4 Kh6 Kh4 Kh8 f7d7 Kf8",
];

/// Where the history changes the result, one engine (one table, kept between searches as a
/// computer seat keeps it) searches the position with and without its history, in both orders:
/// each proven score must hold for the path it was asked about, the second search must answer
/// as a fresh engine would, and the engine must see that the two paths differ.
#[test]
fn alcazar_results_that_depend_on_the_path_are_never_reused_on_another() {
    let mut differing = 0;
    for game in PATH_DEPENDENT_GAMES {
        let moves = game.split_whitespace().map(|m| m.parse().unwrap());
        let record = Record::replay(alcazar::Position::start(Variants::NONE), moves).unwrap();
        let pos = record.position();
        let me = pos.turn();
        assert!(
            [me, me.other()].into_iter().any(|who| {
                forced(pos, who, 3, &mut record.history().to_vec())
                    != forced(pos, who, 3, &mut Vec::new())
            }),
            "{pos}: the history does not change the result"
        );
        let mut engine = Engine::<alcazar::Position>::new(16);
        let mut fresh = Engine::<alcazar::Position>::new(16);
        for (first, second) in [(&[][..], record.history()), (record.history(), &[][..])] {
            engine.new_game();
            // A deeper first search leaves entries the shallower second one can use.
            let a = engine.search(pos, first, &params(6));
            let b = engine.search(pos, second, &params(4));
            fresh.new_game();
            let alone = fresh.search(pos, second, &params(4));
            confirm_report(pos, first, a.score, a.best(), 3);
            confirm_report(pos, second, b.score, b.best(), 3);
            assert_eq!(
                b.score, alone.score,
                "{pos}: a table filled on another path changed the answer"
            );
            if a.score != b.score && (a.score.is_proven() || b.score.is_proven()) {
                differing += 1;
            }
        }
    }
    assert!(
        differing >= 7,
        "only {differing} searches told the paths apart"
    );
}
