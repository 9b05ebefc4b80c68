//! `pillarz datagen`: self-play games for the tuner, one labelled position per line
//! (`<winner>;<position>`, the winner `p1`, `p2` or `draw`).

use std::io::Write;
use std::process::ExitCode;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::engine::search::Engine;
use crate::engine::{Limit, Searchable, selfplay};
use crate::rules::{GameKind, Variants, alcazar, pilastri, pillarz, pyrga};

use super::CliError;

/// Play the engine against itself and write every position with the game's result.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// Games to play.
    #[arg(long, default_value_t = 1000)]
    games: u32,
    /// The engine's limit per move: `5000n` nodes, `d4` plies (a time would not be reproducible).
    #[arg(long, default_value = "5000n")]
    limit: String,
    /// The fewest random plies that open a game.
    #[arg(long, default_value_t = 2)]
    random_min: usize,
    /// The most random plies that open a game.
    #[arg(long, default_value_t = 6)]
    random_max: usize,
    /// A rules variant (repeatable).
    #[arg(long = "variant")]
    variants: Vec<String>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the positions.
    #[arg(long)]
    out: std::path::PathBuf,
}

fn generate<G: Searchable>(
    args: &Args,
    variants: Variants,
    limit: Limit,
    out: &mut impl Write,
) -> anyhow::Result<usize> {
    let mut engine = Engine::<G>::new(18);
    let mut rng = SmallRng::seed_from_u64(args.seed);
    let mut written = 0;
    for game in 0..args.games {
        let random_plies = rng.random_range(args.random_min..=args.random_max);
        let Some(played) = selfplay::play(&mut engine, variants, limit, random_plies, &mut rng)
        else {
            continue;
        };
        for pos in &played.positions {
            writeln!(out, "{};{pos}", played.winner.as_str())?;
        }
        written += played.positions.len();
        if (game + 1) % 100 == 0 {
            eprintln!("{} games, {written} positions", game + 1);
        }
    }
    Ok(written)
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let usage = |e: String| CliError::Usage(e);
    let kind: GameKind = args.game.parse().map_err(|e| usage(format!("{e}")))?;
    let variants = kind
        .variants(&args.variants)
        .map_err(|e| usage(e.to_string()))?;
    let limit = Limit::parse_short(&args.limit).map_err(|e| usage(e.to_string()))?;
    if matches!(limit, Limit::MovetimeMs(_)) {
        return Err(usage("--limit must be a node count or a depth".into()));
    }
    if args.random_min > args.random_max {
        return Err(usage("--random-min is above --random-max".into()));
    }
    let file = std::fs::File::create(&args.out)
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
    let mut out = std::io::BufWriter::new(file);
    let written = match kind {
        GameKind::Pillarz => generate::<pillarz::Position>(&args, variants, limit, &mut out),
        GameKind::Pilastri => generate::<pilastri::Position>(&args, variants, limit, &mut out),
        GameKind::Pyrga => generate::<pyrga::Position>(&args, variants, limit, &mut out),
        GameKind::Alcazar => generate::<alcazar::Position>(&args, variants, limit, &mut out),
    }?;
    out.flush().map_err(anyhow::Error::from)?;
    println!("{written} positions written to {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
