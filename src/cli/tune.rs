//! `pillarz tune`: fits a game's evaluation weights to positions labelled by self-play results
//! (from `pillarz datagen`), and can write them where the evaluation reads them
//! (`src/engine/eval/weights/<game>.rs`).

use std::fmt::Write as _;
use std::process::ExitCode;

use crate::engine::Searchable;
use crate::engine::eval::linear::Linear;
use crate::engine::tuner::{self, Sample, Settings};
use crate::rules::{GameKind, Player, Variants, Winner, alcazar, pilastri, pillarz, pyrga};

use super::CliError;

/// Tune a game's evaluation weights on self-play positions.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// Files of `<winner>;<position>` lines (repeatable).
    #[arg(long = "data", required = true)]
    data: Vec<std::path::PathBuf>,
    /// Full passes over the positions.
    #[arg(long, default_value_t = 1000)]
    epochs: usize,
    /// Adam's step size, in evaluation units.
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// A rules variant (repeatable), for parsing the positions.
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Write the tuned weights to this file (the game's `eval/weights/<game>.rs`).
    #[arg(long)]
    write: Option<std::path::PathBuf>,
}

/// The side to move's result in a game `winner` won.
fn result_for(winner: Winner, side: Player) -> f64 {
    match winner {
        Winner::Player(p) if p == side => 1.0,
        Winner::Player(_) => 0.0,
        Winner::Draw => 0.5,
    }
}

/// Reads the labelled positions, keeping the quiet ones: nobody can win on the spot, so the
/// evaluation, not a tactic, has to explain the result.
fn load<G: Searchable + Linear>(args: &Args, variants: Variants) -> Result<Vec<Sample>, CliError> {
    let mut samples = Vec::new();
    for path in &args.data {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
        for (n, line) in text.lines().enumerate() {
            let bad = |why: String| CliError::Usage(format!("{}:{}: {why}", path.display(), n + 1));
            let (winner, position) = line
                .split_once(';')
                .ok_or_else(|| bad("expected <winner>;<position>".into()))?;
            let winner = match winner {
                "p1" => Winner::Player(Player::P1),
                "p2" => Winner::Player(Player::P2),
                "draw" => Winner::Draw,
                other => return Err(bad(format!("unknown winner {other:?}"))),
            };
            let pos = G::parse_position(position, variants).map_err(|e| bad(e.to_string()))?;
            if pos.outcome().is_some() || pos.winning_move().is_some() || pos.threatened() {
                continue;
            }
            samples.push(Sample {
                features: pos.feature_counts(),
                result: result_for(winner, pos.turn()),
            });
        }
    }
    Ok(samples)
}

/// The weights file: one weight per line, named.
fn weights_file<G: Linear>(game: GameKind, weights: &[i32], note: &str) -> String {
    let mut text = format!(
        "// The weights of the {game} evaluation, one per feature of `eval/{game}.rs` in its order.\n// {note}\n[\n"
    );
    let width = weights
        .iter()
        .map(|w| w.to_string().len())
        .max()
        .unwrap_or(1)
        + 1;
    for (w, name) in weights.iter().zip(G::FEATURES) {
        let number = format!("{w},");
        let _ = writeln!(text, "    {number:<width$} // {name}");
    }
    text.push_str("]\n");
    text
}

fn tune<G: Searchable + Linear>(
    args: &Args,
    kind: GameKind,
    variants: Variants,
) -> Result<(), CliError> {
    let samples = load::<G>(args, variants)?;
    if samples.is_empty() {
        return Err(CliError::Usage("no quiet positions in the data".into()));
    }
    let start: Vec<f64> = G::WEIGHTS.iter().map(|&w| f64::from(w)).collect();
    let scale = tuner::fit_scale(&samples, &start);
    let before = tuner::error(&samples, &start, scale);
    // With `--write`, the file is the work: the summary is printed whether or not anybody
    // reads it. Without, the summary is all there is, and nobody to print it for ends the
    // command (see `output`).
    let shown = |written| match &args.write {
        Some(_) => super::output::unless_closed(written),
        None => written,
    };
    shown(outln!(
        "{} quiet positions; scale {scale:.6}; error {before:.6} with the current weights",
        samples.len()
    ))?;
    let fitted = tuner::tune(
        &samples,
        &start,
        scale,
        Settings {
            epochs: args.epochs,
            rate: args.rate,
        },
        |epoch, e| eprintln!("epoch {epoch}: error {e:.6}"),
    );
    let rounded: Vec<i32> = fitted.iter().map(|w| w.round() as i32).collect();
    let after = tuner::error(
        &samples,
        &rounded.iter().map(|&w| f64::from(w)).collect::<Vec<_>>(),
        scale,
    );
    shown(outln!("error {after:.6} with the tuned weights"))?;
    for ((name, old), new) in G::FEATURES.iter().zip(G::WEIGHTS).zip(&rounded) {
        shown(outln!("{old:>7} -> {new:>7}  {name}"))?;
    }
    if let Some(path) = &args.write {
        let note = format!(
            "Tuned by `pillarz tune` on {} quiet self-play positions ({} epochs): error {before:.5} -> {after:.5}.",
            samples.len(),
            args.epochs
        );
        std::fs::write(path, weights_file::<G>(kind, &rounded, &note))
            .map_err(|e| CliError::Failure(anyhow::anyhow!("{}: {e}", path.display())))?;
        shown(outln!("written to {}", path.display()))?;
    }
    Ok(())
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let usage = |e: String| CliError::Usage(e);
    let kind: GameKind = args.game.parse().map_err(|e| usage(format!("{e}")))?;
    let variants = kind
        .variants(&args.variants)
        .map_err(|e| usage(e.to_string()))?;
    match kind {
        GameKind::Pillarz => tune::<pillarz::Position>(&args, kind, variants),
        GameKind::Pilastri => tune::<pilastri::Position>(&args, kind, variants),
        GameKind::Pyrga => tune::<pyrga::Position>(&args, kind, variants),
        GameKind::Alcazar => tune::<alcazar::Position>(&args, kind, variants),
    }?;
    Ok(ExitCode::SUCCESS)
}
