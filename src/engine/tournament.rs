//! Matches between two players: games with alternating seats, and the Elo difference the score
//! implies, with its 95% error bar.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::SmallRng;

use super::eval::Searchable;
use super::limits::Clock;
use crate::rules::record::Record;
use crate::rules::{MoveList, Player, Variants, Winner};

/// How one game ended, from player A's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameScore {
    Win,
    Loss,
    Draw,
}

/// A player in a match: an agent in this process, or an engine in another one.
pub trait Contender<G: Searchable> {
    /// Called before each game (an engine forgets what it learned in the last one).
    fn new_game(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// The move to play in `record`, which is not over; `clock` started with this move.
    fn choose(
        &mut self,
        record: &Record<G>,
        clock: &dyn Clock,
        rng: &mut SmallRng,
    ) -> Result<G::Move, String>;
}

/// Plays one game; A has `a_seat`. The first `random_opening` plies are random, so that
/// deterministic players do not replay one game. `clock` makes a fresh clock per move. An
/// error is a player that failed (an external engine that died or answered nonsense). Returns
/// the result and the moves played.
pub fn play_game<G: Searchable, C: Clock>(
    variants: Variants,
    a: &mut dyn Contender<G>,
    b: &mut dyn Contender<G>,
    a_seat: Player,
    random_opening: usize,
    seed: u64,
    clock: impl Fn() -> C,
) -> Result<(GameScore, Vec<G::Move>), String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut record = Record::new(G::start(variants));
    let mut moves = MoveList::new();
    a.new_game()?;
    b.new_game()?;
    loop {
        if let Some(outcome) = record.outcome() {
            let score = match outcome.winner {
                Winner::Player(p) if p == a_seat => GameScore::Win,
                Winner::Player(_) => GameScore::Loss,
                Winner::Draw => GameScore::Draw,
            };
            return Ok((score, record.moves().to_vec()));
        }
        let mv = if record.moves().len() < random_opening {
            moves.clear();
            record.legal_moves(&mut moves);
            moves[rng.random_range(0..moves.len())]
        } else {
            if record.position().turn() == a_seat {
                a.choose(&record, &clock(), &mut rng)?
            } else {
                b.choose(&record, &clock(), &mut rng)?
            }
        };
        record
            .play(mv)
            .map_err(|e| format!("a player chose an illegal move: {e}"))?;
    }
}

/// A match's tally from A's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
}

impl Tally {
    pub fn add(&mut self, s: GameScore) {
        match s {
            GameScore::Win => self.wins += 1,
            GameScore::Loss => self.losses += 1,
            GameScore::Draw => self.draws += 1,
        }
    }

    pub fn games(&self) -> u32 {
        self.wins + self.losses + self.draws
    }

    /// A's score fraction (draws count half).
    pub fn score(&self) -> f64 {
        (f64::from(self.wins) + 0.5 * f64::from(self.draws)) / f64::from(self.games().max(1))
    }

    /// The Elo difference A − B and the half-width of its 95% interval (by the delta method;
    /// infinite when the score is 0 or 1, where only [`Tally::elo_lower_bound`] means much).
    pub fn elo(&self) -> (f64, f64) {
        let n = f64::from(self.games().max(1));
        let p = self.score();
        if p <= 0.0 || p >= 1.0 {
            let inf = if p >= 1.0 {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
            return (inf, f64::INFINITY);
        }
        let elo = -400.0 * (1.0 / p - 1.0).log10();
        let se = (p * (1.0 - p) / n).sqrt();
        let slope = 400.0 / std::f64::consts::LN_10 / (p * (1.0 - p));
        (elo, 1.96 * se * slope)
    }

    /// A's Elo lower bound at 95% (useful when A won every game).
    pub fn elo_lower_bound(&self) -> f64 {
        let n = f64::from(self.games().max(1));
        let p = self.score();
        // Wilson score interval lower bound.
        let z = 1.96f64;
        let lower = (p + z * z / (2.0 * n) - z * ((p * (1.0 - p) + z * z / (4.0 * n)) / n).sqrt())
            / (1.0 + z * z / n);
        -400.0 * (1.0 / lower.clamp(1e-9, 1.0 - 1e-9) - 1.0).log10()
    }
}
