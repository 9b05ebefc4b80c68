//! `pillarz match`: many games between two players with alternating seats; prints the tally
//! and the Elo difference with its 95% error bar.

use std::process::ExitCode;

use crate::engine::Searchable;
use crate::engine::agents::Agent;
use crate::engine::tournament::{Tally, play_game};
use crate::rules::{GameKind, Player, Variants, alcazar, pilastri, pillarz, pyrga};

use super::CliError;
use crate::wall_clock::WallClock;

/// Play a match between two players, e.g. `pillarz match pyrga engine:100 uct:100 --games 50`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// Player A: engine:<ms>, uct:<ms>, greedy or random.
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
    /// Print one line per game.
    #[arg(long)]
    verbose: bool,
}

fn play<G: Searchable>(args: &Args, variants: Variants, a: Agent, b: Agent) -> Tally {
    let mut tally = Tally::default();
    for i in 0..args.games {
        let a_seat = if i % 2 == 0 { Player::P1 } else { Player::P2 };
        let (score, plies) = play_game::<G, _>(
            variants,
            a,
            b,
            a_seat,
            args.random_opening,
            args.seed.wrapping_mul(1_000_003).wrapping_add(u64::from(i)),
            WallClock::start,
        );
        tally.add(score);
        if args.verbose {
            println!(
                "game {:>4}: A as {a_seat}, {score:?} in {plies} plies",
                i + 1
            );
        }
    }
    tally
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let usage = |e: String| CliError::Usage(e);
    let kind: GameKind = args.game.parse().map_err(|e| usage(format!("{e}")))?;
    let variants = kind
        .variants(&args.variants)
        .map_err(|e| usage(e.to_string()))?;
    let a = Agent::parse(&args.a).map_err(usage)?;
    let b = Agent::parse(&args.b).map_err(usage)?;
    if args.games == 0 {
        return Err(usage("--games must be at least 1".into()));
    }
    let tally = match kind {
        GameKind::Pillarz => play::<pillarz::Position>(&args, variants, a, b),
        GameKind::Pilastri => play::<pilastri::Position>(&args, variants, a, b),
        GameKind::Pyrga => play::<pyrga::Position>(&args, variants, a, b),
        GameKind::Alcazar => play::<alcazar::Position>(&args, variants, a, b),
    };
    let (elo, error) = tally.elo();
    println!(
        "{kind}: {} vs {}: {} games, +{} -{} ={}, score {:.1}%",
        a.name(),
        b.name(),
        tally.games(),
        tally.wins,
        tally.losses,
        tally.draws,
        100.0 * tally.score()
    );
    if elo.is_finite() {
        println!("Elo difference {elo:+.0} ± {error:.0} (95%)");
    } else {
        println!(
            "Elo difference {} (every game one way); 95% bound {:+.0}",
            if elo > 0.0 { "+inf" } else { "-inf" },
            tally.elo_lower_bound()
        );
    }
    Ok(ExitCode::SUCCESS)
}
