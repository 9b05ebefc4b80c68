//! `pillarz match`: many games between two players with alternating seats; prints the tally
//! and the Elo difference with its 95% error bar.

use std::process::ExitCode;

use crate::engine::agents::{Agent, EnginePlayer};
use crate::engine::tournament::{Contender, Tally, play_game};
use crate::engine::{Limit, Searchable};
use crate::rules::{GameKind, Player, Variants, alcazar, pilastri, pillarz, pyrga};

use super::CliError;
use super::external_engine::ExternalEngine;
use crate::wall_clock::WallClock;

/// A player named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Spec {
    Agent(Agent),
    /// `cmd:<path>[@<limit>]`: `<path> engine`, driven through the engine protocol.
    External {
        path: String,
        limit: Limit,
    },
}

impl Spec {
    fn parse(s: &str) -> Result<Spec, String> {
        let Some(rest) = s.strip_prefix("cmd:") else {
            return Agent::parse(s).map(Spec::Agent);
        };
        let (path, limit) = match rest.rsplit_once('@') {
            Some((path, limit)) => (
                path,
                Limit::parse_short(limit).map_err(|e| format!("{s:?}: {e}"))?,
            ),
            None => (rest, Limit::MovetimeMs(100)),
        };
        if path.is_empty() {
            return Err("cmd: needs the path of an engine, like cmd:./pillarz@100".into());
        }
        Ok(Spec::External {
            path: path.to_string(),
            limit,
        })
    }

    fn name(&self) -> String {
        match self {
            Spec::Agent(a) => a.name(),
            Spec::External { path, limit } => format!("cmd:{path}@{limit}"),
        }
    }

    fn build<G: Searchable>(
        &self,
        kind: GameKind,
        variants: Variants,
    ) -> Result<Box<dyn Contender<G>>, String> {
        Ok(match self {
            Spec::Agent(Agent::Engine { limit, eval }) => {
                Box::new(EnginePlayer::new(*limit, *eval))
            }
            Spec::Agent(a) => Box::new(*a),
            Spec::External { path, limit } => {
                Box::new(ExternalEngine::spawn(path, *limit, kind, variants)?)
            }
        })
    }
}

/// Play a match between two players, e.g. `pillarz match pyrga engine:100 uct:100 --games 50`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// Player A: engine:<limit>[:hand|nnue], level:<1-8>, uct:<ms>, greedy, random, or cmd:<path>[@<limit>]
    /// (the program at <path> run as `<path> engine` and driven through the engine protocol).
    /// A limit is a think time in ms (`100`, the default), a node count (`5000n`) or a depth
    /// (`d6`) per move.
    a: String,
    /// Player B, as A.
    b: String,
    /// Games to play (seats alternate).
    #[arg(long, default_value_t = 20)]
    games: u32,
    /// A rules variant (repeatable).
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Random plies at the start of every game, for variety.
    #[arg(long, default_value_t = 2)]
    random_opening: usize,
    /// Seed of the random openings and random players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one line per game: the seats, the result and the moves.
    #[arg(long)]
    verbose: bool,
}

fn play<G: Searchable>(
    args: &Args,
    kind: GameKind,
    variants: Variants,
    a: &Spec,
    b: &Spec,
) -> Result<Tally, CliError> {
    let mut a = a.build::<G>(kind, variants).map_err(CliError::Usage)?;
    let mut b = b.build::<G>(kind, variants).map_err(CliError::Usage)?;
    let mut tally = Tally::default();
    for i in 0..args.games {
        // Both colours from every opening: games 2k and 2k+1 share a seed, seats swapped.
        let a_seat = if i % 2 == 0 { Player::P1 } else { Player::P2 };
        let (score, moves) = play_game::<G, _>(
            variants,
            a.as_mut(),
            b.as_mut(),
            a_seat,
            args.random_opening,
            args.seed
                .wrapping_mul(1_000_003)
                .wrapping_add(u64::from(i / 2)),
            WallClock::start,
        )
        .map_err(|e| CliError::Failure(anyhow::anyhow!("game {}: {e}", i + 1)))?;
        tally.add(score);
        if args.verbose {
            let moves: Vec<String> = moves.iter().map(ToString::to_string).collect();
            outln!(
                "game {:>4}: A as {a_seat}, {score:?} in {} plies: {}",
                i + 1,
                moves.len(),
                moves.join(" ")
            )?;
        }
    }
    Ok(tally)
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let usage = |e: String| CliError::Usage(e);
    let kind: GameKind = args.game.parse().map_err(|e| usage(format!("{e}")))?;
    let variants = kind
        .variants(&args.variants)
        .map_err(|e| usage(e.to_string()))?;
    let a = Spec::parse(&args.a).map_err(usage)?;
    let b = Spec::parse(&args.b).map_err(usage)?;
    if args.games == 0 {
        return Err(usage("--games must be at least 1".into()));
    }
    let tally = match kind {
        GameKind::Pillarz => play::<pillarz::Position>(&args, kind, variants, &a, &b),
        GameKind::Pilastri => play::<pilastri::Position>(&args, kind, variants, &a, &b),
        GameKind::Pyrga => play::<pyrga::Position>(&args, kind, variants, &a, &b),
        GameKind::Alcazar => play::<alcazar::Position>(&args, kind, variants, &a, &b),
    }?;
    let (elo, error) = tally.elo();
    outln!(
        "{kind}: {} vs {}: {} games, +{} -{} ={}, score {:.1}%",
        a.name(),
        b.name(),
        tally.games(),
        tally.wins,
        tally.losses,
        tally.draws,
        100.0 * tally.score()
    )?;
    if elo.is_finite() {
        outln!("Elo difference {elo:+.0} ± {error:.0} (95%)")?;
    } else {
        outln!(
            "Elo difference {} (every game one way); 95% bound {:+.0}",
            if elo > 0.0 { "+inf" } else { "-inf" },
            tally.elo_lower_bound()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
