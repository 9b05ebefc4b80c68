//! `pillarz loadgen`: drive one or more replicas with games, readers and analyses; print
//! throughput and latency per endpoint, and the count of lost or duplicated moves.

use std::process::ExitCode;
use std::time::Duration;

use crate::client::duration::parse_ms;
use crate::loadgen::{Config, Mode, run};

use super::CliError;

/// Load-test running servers (see load-tests/run.sh).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Base URLs of the replicas, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    targets: Vec<String>,
    /// How long to run (e.g. 30s).
    #[arg(long, default_value = "30s")]
    duration: String,
    /// Games played at once.
    #[arg(long, default_value_t = 32)]
    players: usize,
    /// Tasks polling game state and clocks.
    #[arg(long, default_value_t = 8)]
    readers: usize,
    /// Analyses per second.
    #[arg(long, default_value_t = 2.0)]
    analyses_per_sec: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Only `GET /healthz/live` with the same players: the HTTP floor to compare with.
    #[arg(long)]
    floor: bool,
    /// Pace the players to about this many moves per second in all (default: as fast as
    /// they can).
    #[arg(long)]
    moves_per_sec: Option<f64>,
}

pub fn run_cmd(args: Args) -> Result<ExitCode, CliError> {
    let duration = parse_ms(&args.duration).map_err(CliError::Usage)?;
    let config = Config {
        mode: if args.floor { Mode::Floor } else { Mode::Games },
        targets: args.targets,
        duration: Duration::from_millis(duration),
        players: args.players,
        readers: args.readers,
        analyses_per_sec: args.analyses_per_sec,
        moves_per_sec: args.moves_per_sec.filter(|r| *r > 0.0),
        seed: args.seed,
    };
    // One thread: the generator shares the machine with what it measures, and a task that
    // never changes threads costs the least per request.
    let report = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?
        .block_on(run(config))
        .map_err(CliError::Usage)?;
    // The exit status is the audit's verdict, read or not (see `output`).
    super::output::unless_closed(outln!("{report}"))?;
    Ok(if report.lost + report.duplicated + report.illegal == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_FAILURE)
    })
}
