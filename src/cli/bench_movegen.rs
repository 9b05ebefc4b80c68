//! `pillarz bench-movegen`: move-generation speed on fixed positions, in leaves per second.
//!
//! Each line also runs the same perft without bulk counting (every leaf generated and played),
//! the baseline measured in the same run, so the printed ratio does not depend on the machine.

use std::process::ExitCode;
use std::time::Instant;

use crate::rules::perft::{perft, perft_every_leaf};
use crate::rules::{Game, Variant, Variants, alcazar, pilastri, pillarz, pyrga};

use super::CliError;

/// Measure move-generation speed (leaves/s) on fixed positions of every game.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Use one ply less everywhere (a quick run).
    #[arg(long)]
    quick: bool,
}

struct Report {
    name: &'static str,
    depth: u32,
    leaves: u64,
    seconds: f64,
    baseline_seconds: f64,
}

fn measure<G: Game>(name: &'static str, pos: G, depth: u32) -> Report {
    let t = Instant::now();
    let leaves = perft(&pos, depth, &[]);
    let seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let check = perft_every_leaf(&pos, depth, &[]);
    let baseline_seconds = t.elapsed().as_secs_f64();
    assert_eq!(leaves, check, "bulk and full perft disagree on {name}");
    Report {
        name,
        depth,
        leaves,
        seconds,
        baseline_seconds,
    }
}

fn parse<G: Game>(s: &str, v: Variants) -> G {
    G::parse_position(s, v).unwrap_or_else(|e| panic!("bench position {s:?}: {e}"))
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let less = u32::from(args.quick);
    let reports = [
        measure(
            "pillarz 00000/00o00x0/00000/00x00o0/00000 1",
            parse::<pillarz::Position>("00000/00o00x0/00000/00x00o0/00000 1", Variants::NONE),
            5 - less,
        ),
        measure(
            "pilastri 6x6 start",
            pilastri::Position::start(Variants::NONE),
            5 - less,
        ),
        measure(
            "pilastri size-8 start",
            pilastri::Position::start(Variants::NONE.with(Variant::Size8)),
            4 - less,
        ),
        measure(
            "pyrga start",
            pyrga::Position::start(Variants::NONE),
            5 - less,
        ),
        measure(
            "alcazar start",
            alcazar::Position::start(Variants::NONE),
            5 - less,
        ),
    ];
    outln!(
        "{:<46} {:>5} {:>14} {:>9} {:>12} {:>14}",
        "position",
        "depth",
        "leaves",
        "seconds",
        "M leaves/s",
        "vs every-leaf"
    )?;
    for r in &reports {
        outln!(
            "{:<46} {:>5} {:>14} {:>9.3} {:>12.1} {:>13.1}x",
            r.name,
            r.depth,
            r.leaves,
            r.seconds,
            r.leaves as f64 / r.seconds / 1e6,
            r.baseline_seconds / r.seconds
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
