//! Players for matches: the engine itself, and the baselines its strength is measured against
//! (a uniformly random player, a one-ply greedy player, plain UCT Monte-Carlo tree search).

mod greedy;
mod uct;

use rand::Rng;
use rand::rngs::SmallRng;

use super::eval::Searchable;
use super::limits::{Caps, Clock, Limit};
use super::search::{Params, search};
use crate::rules::MoveList;
use crate::rules::record::Record;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    /// The engine, thinking this long per move.
    Engine { movetime_ms: u64 },
    /// A uniformly random legal move.
    Random,
    /// Takes an immediate win, avoids moves that allow one, otherwise random.
    Greedy,
    /// UCT with random playouts, thinking this long per move.
    Uct { movetime_ms: u64 },
}

impl Agent {
    /// `engine:<ms>`, `random`, `greedy` or `uct:<ms>`.
    pub fn parse(s: &str) -> Result<Agent, String> {
        let (name, arg) = s.split_once(':').unwrap_or((s, ""));
        let ms = || {
            arg.parse::<u64>()
                .ok()
                .filter(|&ms| ms > 0)
                .ok_or_else(|| format!("{name} needs a think time in ms, like {name}:100"))
        };
        match name {
            "engine" => Ok(Agent::Engine { movetime_ms: ms()? }),
            "uct" => Ok(Agent::Uct { movetime_ms: ms()? }),
            "random" if arg.is_empty() => Ok(Agent::Random),
            "greedy" if arg.is_empty() => Ok(Agent::Greedy),
            _ => Err(format!(
                "unknown player {s:?} (expected engine:<ms>, uct:<ms>, greedy or random)"
            )),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Agent::Engine { movetime_ms } => format!("engine:{movetime_ms}"),
            Agent::Random => "random".into(),
            Agent::Greedy => "greedy".into(),
            Agent::Uct { movetime_ms } => format!("uct:{movetime_ms}"),
        }
    }

    /// This player's move in `record` (none if the game is over).
    pub fn choose<G: Searchable>(
        &self,
        record: &Record<G>,
        clock: &dyn Clock,
        rng: &mut SmallRng,
    ) -> Option<G::Move> {
        let mut moves = MoveList::new();
        record.legal_moves(&mut moves);
        if moves.is_empty() {
            return None;
        }
        match *self {
            Agent::Random => Some(moves[rng.random_range(0..moves.len())]),
            Agent::Greedy => Some(greedy::choose(record.position(), &moves, rng)),
            Agent::Uct { movetime_ms } => {
                Some(uct::choose(record, &moves, movetime_ms, clock, rng))
            }
            Agent::Engine { movetime_ms } => search(
                record.position(),
                record.history(),
                &Params {
                    limit: Limit::MovetimeMs(movetime_ms),
                    caps: Caps::NONE,
                    multipv: 1,
                    clock,
                    stop: None,
                    tt_bits: 20,
                    contempt: 20,
                },
            )
            .best(),
        }
    }
}
