//! `pillarz bench-storage`: bytes in Redis per game, and `GET` latency on a 10-ply versus a
//! 1,000-ply game (see `load-tests/storage.sh`, which starts what it needs).

use std::process::ExitCode;

use crate::loadgen::storage::{Config, run};

use super::CliError;

/// Measure what games cost in Redis and whether long games cost more per request.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The replica to play and time against.
    #[arg(long)]
    target: String,
    /// More replicas to time against too (comma-separated), e.g. one with `--cache-mb 0`.
    #[arg(long, value_delimiter = ',')]
    more_targets: Vec<String>,
    /// The Redis URL the replicas use.
    #[arg(long)]
    redis: String,
    /// Timed requests per game and replica.
    #[arg(long, default_value_t = 2000)]
    rounds: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run_cmd(args: Args) -> Result<ExitCode, CliError> {
    if args.rounds == 0 {
        return Err(CliError::Usage("--rounds must be at least 1".into()));
    }
    let config = Config {
        target: args.target,
        more_targets: args.more_targets,
        redis: args.redis,
        rounds: args.rounds,
        seed: args.seed,
    };
    let report = super::client_args::block_on(async {
        run(config)
            .await
            .map_err(|e| CliError::Failure(anyhow::anyhow!(e)))
    })?;
    out!("{report}")?;
    Ok(ExitCode::SUCCESS)
}
