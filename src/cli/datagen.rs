//! `pillarz datagen`: self-play games for the tuner, one labelled position per line
//! (`<winner>;<position>`, the winner `p1`, `p2` or `draw`).

use std::io::Write;
use std::process::ExitCode;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::engine::Searchable;
use crate::engine::search::Engine;
use crate::engine::selfplay::{self, SelfPlayConfig};
use crate::rules::{GameKind, Variants, alcazar, pilastri, pillarz, pyrga};

use super::CliError;
use super::selfplay_args::SelfPlayArgs;

/// Play the engine against itself and write every position with the game's result.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// Games to play.
    #[arg(long, default_value_t = 1000)]
    games: u32,
    #[command(flatten)]
    selfplay: SelfPlayArgs,
    /// A rules variant (repeatable).
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Where to write the positions.
    #[arg(long)]
    out: std::path::PathBuf,
}

fn generate<G: Searchable>(
    games: u32,
    variants: Variants,
    config: SelfPlayConfig,
    out: &mut impl Write,
) -> anyhow::Result<usize> {
    let mut engine = Engine::<G>::new(18);
    let mut rng = SmallRng::seed_from_u64(config.seed);
    let mut written = 0;
    let (lo, hi) = config.random_plies;
    for game in 0..games {
        let random_plies = rng.random_range(lo..=hi);
        let Some(played) =
            selfplay::play(&mut engine, variants, config.limit, random_plies, &mut rng)
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
    let config = args.selfplay.validate()?;
    let file = std::fs::File::create(&args.out)
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
    let mut out = std::io::BufWriter::new(file);
    let written = match kind {
        GameKind::Pillarz => generate::<pillarz::Position>(args.games, variants, config, &mut out),
        GameKind::Pilastri => {
            generate::<pilastri::Position>(args.games, variants, config, &mut out)
        }
        GameKind::Pyrga => generate::<pyrga::Position>(args.games, variants, config, &mut out),
        GameKind::Alcazar => generate::<alcazar::Position>(args.games, variants, config, &mut out),
    }?;
    out.flush().map_err(anyhow::Error::from)?;
    outln!("{written} positions written to {}", args.out.display())?;
    Ok(ExitCode::SUCCESS)
}
