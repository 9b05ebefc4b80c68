//! `pillarz bench`: the engine's fixed bench. The total node count is a fingerprint of the
//! search (a pure refactor must not change it); nodes per second measure its speed.

use std::process::ExitCode;
use std::time::Instant;

use crate::engine::bench::run_all;

use super::CliError;

/// Search fixed positions of every game to fixed depths; print nodes and nodes per second.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evaluation: `hand` or `nnue` (pillarz's network; the other games have only the
    /// hand-written one); each game's default when absent.
    #[arg(long, value_parser = crate::engine::Eval::parse)]
    eval: Option<crate::engine::Eval>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let started = Instant::now();
    let mut last = Instant::now();
    let total = run_all(args.eval, |line| {
        let secs = last.elapsed().as_secs_f64();
        outln!(
            "{:<70} depth {:>2} {:>10} nodes {:>10.0} nodes/s",
            line.name,
            line.depth,
            line.nodes,
            line.nodes as f64 / secs.max(1e-9)
        )?;
        last = Instant::now();
        Ok::<_, super::output::OutputError>(())
    })?;
    let secs = started.elapsed().as_secs_f64();
    outln!("nodes {total}")?;
    outln!("nps {:.0}", total as f64 / secs.max(1e-9))?;
    Ok(ExitCode::SUCCESS)
}
