//! `pillarz perft`: the public check of the rules.

use std::io::Write;
use std::process::ExitCode;

use crate::rules::{AnyRecord, GameKind};

use super::CliError;

/// Count the move sequences of a given length (leaf count on the last line).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// Plies to look ahead.
    depth: u32,
    /// A rules variant (repeatable): size-8, jumpers (Pilastri only).
    #[arg(long = "variant", value_name = "VARIANT")]
    variants: Vec<String>,
    /// Start from this position (in the game's notation) instead of the initial one.
    #[arg(long, value_name = "NOTATION", allow_hyphen_values = true)]
    position: Option<String>,
    /// Print "<move> <count>" for every root move before the total.
    #[arg(long)]
    divide: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let usage = |e: &dyn std::fmt::Display| CliError::Usage(e.to_string());
    let kind: GameKind = args.game.parse().map_err(|e| usage(&e))?;
    let variants = kind.variants(&args.variants).map_err(|e| usage(&e))?;
    let record = AnyRecord::new(kind, variants, args.position.as_deref()).map_err(|e| usage(&e))?;
    let mut out = std::io::stdout().lock();
    let total = if args.divide && args.depth > 0 {
        let lines = record.divide(args.depth);
        for (mv, n) in &lines {
            writeln!(out, "{mv} {n}").map_err(super::output::OutputError::from)?;
        }
        lines.iter().map(|(_, n)| n).sum()
    } else {
        record.perft(args.depth)
    };
    writeln!(out, "{total}").map_err(super::output::OutputError::from)?;
    Ok(ExitCode::SUCCESS)
}
