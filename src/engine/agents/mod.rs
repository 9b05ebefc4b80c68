//! Players for matches: the engine itself, and the baselines its strength is measured against
//! (a uniformly random player, a one-ply greedy player, plain UCT Monte-Carlo tree search).

mod greedy;
mod uct;

use rand::Rng;
use rand::rngs::SmallRng;

use super::eval::{Eval, Searchable};
use super::levels::Level;
use super::limits::{Clock, Limit};
use super::search::{Engine, Params};
use super::tournament::Contender;
use crate::rules::MoveList;
use crate::rules::record::Record;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    /// The engine, with this limit per move (a think time, a node count or a depth) and this
    /// evaluation (`None`: the game's default).
    Engine { limit: Limit, eval: Option<Eval> },
    /// A uniformly random legal move.
    Random,
    /// Takes an immediate win, avoids moves that allow one, otherwise random.
    Greedy,
    /// UCT with random playouts, thinking this long per move.
    Uct { movetime_ms: u64 },
    /// An engine seat of the service, at this level (1–8; each game has its own table).
    Level(u8),
}

impl Agent {
    /// `engine:<limit>[:<eval>]` (`100` ms, `5000n` nodes, `d6` plies; `hand` or `nnue`),
    /// `level:<1-8>`, `random`, `greedy` or `uct:<ms>`.
    pub fn parse(s: &str) -> Result<Agent, String> {
        let (name, arg) = s.split_once(':').unwrap_or((s, ""));
        let ms = || {
            arg.parse::<u64>()
                .ok()
                .filter(|&ms| ms > 0)
                .ok_or_else(|| format!("{name} needs a think time in ms, like {name}:100"))
        };
        match name {
            "engine" => {
                let (limit, eval) = match arg.split_once(':') {
                    Some((limit, eval)) => (limit, Some(Eval::parse(eval)?)),
                    None => (arg, None),
                };
                Limit::parse_short(limit)
                    .map(|limit| Agent::Engine { limit, eval })
                    .map_err(|e| e.to_string())
            }
            "uct" => Ok(Agent::Uct { movetime_ms: ms()? }),
            "level" => arg
                .parse::<u8>()
                .ok()
                .filter(|&n| Level::exists(n))
                .map(Agent::Level)
                .ok_or_else(|| "level needs a level from 1 to 8, like level:3".to_string()),
            "random" if arg.is_empty() => Ok(Agent::Random),
            "greedy" if arg.is_empty() => Ok(Agent::Greedy),
            _ => Err(format!(
                "unknown player {s:?} (expected engine:<limit>, level:<n>, uct:<ms>, greedy or random)"
            )),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Agent::Engine { limit, eval: None } => format!("engine:{limit}"),
            Agent::Engine {
                limit,
                eval: Some(eval),
            } => format!("engine:{limit}:{}", eval.as_str()),
            Agent::Random => "random".into(),
            Agent::Greedy => "greedy".into(),
            Agent::Uct { movetime_ms } => format!("uct:{movetime_ms}"),
            Agent::Level(n) => format!("level:{n}"),
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
            Agent::Level(n) => {
                let level = Level::of::<G>(n).expect("parsed levels exist");
                crate::engine::any::level_choice(record.state(), level, rng, clock)
            }
            Agent::Engine { limit, eval } => {
                EnginePlayer::new(limit, eval).think(record, &moves, clock)
            }
        }
    }
}

impl<G: Searchable> Contender<G> for Agent {
    fn choose(
        &mut self,
        record: &Record<G>,
        clock: &dyn Clock,
        rng: &mut SmallRng,
    ) -> Result<G::Move, String> {
        Agent::choose(self, record, clock, rng).ok_or_else(|| "no legal move".to_string())
    }
}

/// The engine as a match player: one [`Engine`] for the whole game, so its table carries over
/// from move to move, as an engine seat's does.
pub struct EnginePlayer<G: Searchable> {
    engine: Engine<G>,
    limit: Limit,
}

impl<G: Searchable> EnginePlayer<G> {
    /// The engine at `limit` per move, evaluating with `eval` (`None`: the game's default).
    pub fn new(limit: Limit, eval: Option<Eval>) -> EnginePlayer<G> {
        EnginePlayer {
            engine: Engine::with_eval(20, eval.unwrap_or(G::DEFAULT_EVAL)),
            limit,
        }
    }

    /// The engine's move among `moves` (the legal moves of `record`, not empty); a lone legal
    /// move is played at once.
    fn think(
        &mut self,
        record: &Record<G>,
        moves: &[G::Move],
        clock: &dyn Clock,
    ) -> Option<G::Move> {
        if moves.len() == 1 {
            return Some(moves[0]);
        }
        self.engine
            .search(
                record.position(),
                record.history(),
                &Params::play(self.limit, clock),
            )
            .best()
    }
}

impl<G: Searchable> Contender<G> for EnginePlayer<G> {
    fn new_game(&mut self) -> Result<(), String> {
        self.engine.new_game();
        Ok(())
    }

    fn choose(
        &mut self,
        record: &Record<G>,
        clock: &dyn Clock,
        _rng: &mut SmallRng,
    ) -> Result<G::Move, String> {
        let mut moves = MoveList::new();
        record.legal_moves(&mut moves);
        self.think(record, &moves, clock)
            .ok_or_else(|| "no legal move".to_string())
    }
}
