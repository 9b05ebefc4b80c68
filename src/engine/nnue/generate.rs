//! Training data from self-play: the engine plays itself from random placements (and a few
//! random plies after them, for variety) at a fixed node budget, and each position it searched
//! becomes a [`Sample`] labelled with the search's score and the game's result.
//!
//! A game is a pure function of its seed, so a run is reproducible whatever the number of
//! threads that play its games. Positions the search settles without the evaluation — the
//! side to move wins on the spot or must stop a win on the spot — are left out: the network
//! is never asked about them.

use rand::SeedableRng;
use rand::rngs::SmallRng;

use super::features::Board;
use super::sample::{SCORE_CAP, Sample};
use crate::engine::eval::Searchable;
use crate::engine::score::Score;
use crate::engine::search::Engine;
use crate::engine::selfplay::{self, SelfPlayConfig};
use crate::rules::pillarz::Position;
use crate::rules::{Game, Variants, Winner};

/// The seed of game `index` of a run: games are independent of each other and of threads.
fn game_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z ^ (z >> 31)
}

/// Plays game `index` of a run with `engine` (any engine: it is cleared first) and returns its
/// samples, in the order played (none for a game abandoned as too long).
pub fn play_game(
    engine: &mut Engine<Position>,
    config: &SelfPlayConfig,
    index: u64,
) -> Vec<Sample> {
    use rand::Rng;
    let mut rng = SmallRng::seed_from_u64(game_seed(config.seed, index));
    let (lo, hi) = config.random_plies;
    let random_plies = rng.random_range(lo..=hi.max(lo));
    let Some(game) = selfplay::play(engine, Variants::NONE, config.limit, random_plies, &mut rng)
    else {
        return Vec::new();
    };
    game.positions
        .iter()
        .zip(&game.scores)
        .filter(|(pos, _)| pos.pawns(pos.turn()) != 0 && pos.pawns(pos.turn().other()) != 0)
        .filter(|(pos, _)| pos.winning_move().is_none() && !pos.threatened())
        .map(|(pos, score)| {
            let result = match game.winner {
                Winner::Draw => 0,
                Winner::Player(p) if p == pos.turn() => 1,
                Winner::Player(_) => -1,
            };
            let (score, proven) = match *score {
                Score::Value(v) => (v.clamp(-i32::from(SCORE_CAP), i32::from(SCORE_CAP)), false),
                Score::Draw => (0, true),
                Score::WinIn(_) => (i32::from(SCORE_CAP), true),
                Score::LossIn(_) => (-i32::from(SCORE_CAP), true),
            };
            Sample {
                board: Board::from_position(pos),
                score: score as i16,
                result,
                proven,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::limits::Limit;

    fn config(seed: u64) -> SelfPlayConfig {
        SelfPlayConfig {
            limit: Limit::Nodes(300),
            random_plies: (2, 4),
            seed,
        }
    }

    #[test]
    fn a_game_is_a_function_of_its_seed() {
        let mut a = Engine::<Position>::new(12);
        let mut b = Engine::<Position>::new(12);
        let first = play_game(&mut a, &config(5), 3);
        // Another engine, used for another game first, plays game 3 alike.
        let _ = play_game(&mut b, &config(5), 4);
        assert_eq!(play_game(&mut b, &config(5), 3), first);
        assert!(!first.is_empty());
        assert_ne!(play_game(&mut a, &config(6), 3), first);
    }

    #[test]
    fn samples_are_labelled_from_the_side_to_move() {
        let mut engine = Engine::<Position>::new(12);
        let (mut proven, mut sides) = (0, [0, 0]);
        for index in 0..8 {
            for s in play_game(&mut engine, &config(9), index) {
                assert!(s.result != 0, "a pillarz game has a winner");
                assert!(s.board.us.iter().chain(&s.board.them).all(|&sq| sq < 25));
                sides[usize::from(s.result > 0)] += 1;
                if s.proven {
                    // A proven score agrees with how the game ended: the engine, having
                    // proven a win, plays it out.
                    assert_eq!(s.score.abs(), SCORE_CAP);
                    assert_eq!(s.score.signum(), i16::from(s.result), "{s:?}");
                    proven += 1;
                }
            }
        }
        assert!(proven > 0, "decisive games end with proven scores");
        assert!(
            sides[0] > 0 && sides[1] > 0,
            "winners' and losers' positions both"
        );
    }
}
