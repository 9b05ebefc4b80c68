//! The command line: `pillarz <subcommand>`. Arguments are parsed by clap, turned into a
//! validated configuration, and only then does any work (or I/O) start.
//!
//! Exit codes: 0 success, 1 a runtime failure, 2 bad arguments or bad input (clap's own usage
//! errors exit 2 as well).

mod bench;
mod bench_movegen;
mod match_cmd;
mod openapi;
mod perft;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code for bad arguments or bad input (a malformed position, an unknown game …).
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a failure while doing the work.
pub const EXIT_FAILURE: u8 = 1;

/// pillarz: a game service for pillarz, Pilastri, Pyrga and Alcazar, with its tools.
#[derive(Debug, Parser)]
#[command(name = "pillarz", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve(crate::service::configuration::ServeArgs),
    /// Count move sequences (the public check of the rules).
    Perft(perft::Args),
    /// Measure move-generation speed on fixed positions.
    BenchMovegen(bench_movegen::Args),
    /// Print the OpenAPI document.
    Openapi(openapi::Args),
    /// Run the engine's fixed bench (node-count fingerprint and speed).
    Bench(bench::Args),
    /// Play a match between two players and estimate their Elo difference.
    Match(match_cmd::Args),
}

/// An error that already knows its exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad arguments or input: exit 2.
    #[error("{0}")]
    Usage(String),
    /// Anything else: exit 1.
    #[error(transparent)]
    Failure(#[from] anyhow::Error),
}

impl CliError {
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Failure(_) => EXIT_FAILURE,
        }
    }
}

/// Parses the command line, runs it, and turns errors into a message and an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(err.exit_code())
        }
    }
}

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Perft(args) => perft::run(args),
        Command::Openapi(args) => openapi::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Match(args) => match_cmd::run(args),
        Command::BenchMovegen(args) => bench_movegen::run(args),
    }
}
