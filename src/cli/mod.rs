//! The command line: `pillarz <subcommand>`. Arguments are parsed by clap, turned into a
//! validated configuration, and only then does any work (or I/O) start.
//!
//! Exit codes: 0 success, 1 a runtime failure, 2 bad arguments or bad input (clap's own usage
//! errors exit 2 as well); the client commands add 3 (the server refused the request), 4 (the
//! server failed or is unavailable), 5 (the server cannot be reached), 6 (no answer in time)
//! and 7 (an answer that breaks the API). A command whose standard output is closed by its reader
//! stops there and exits 0, quietly (see `output`). With `--json`, an error is one JSON line on
//! stderr, `{"error": {"code", "detail", "status"?, "request_id"?}}`, for the scripts that
//! asked for JSON: the same exit code, and the same stable `code`s as `analyze-batch`'s failed
//! lines (the server's own, or `bad_input`, `failure`, `network`, `timeout` …).

#[macro_use]
mod output;

mod analyze;
mod bench;
mod bench_movegen;
mod bench_storage;
mod capped_lines;
mod client_args;
mod datagen;
mod engine_cmd;
mod engine_protocol;
mod external_engine;
mod game_cmds;
mod keys;
mod loadgen;
mod match_cmd;
mod nnue;
mod openapi;
mod perft;
mod play;
mod selfplay_args;
mod serve;
mod tune;

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
    /// A pillarz network file (`pillarz nnue train`) to evaluate with instead of the one
    /// compiled in: for measuring a network before compiling it in.
    #[arg(long, global = true, env = "PILLARZ_NNUE")]
    network: Option<std::path::PathBuf>,
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
    /// Drive the engine through a line protocol on stdin/stdout (see the README).
    Engine(engine_cmd::Args),
    /// Play a match between two players and estimate their Elo difference.
    Match(match_cmd::Args),
    /// Self-play games for the evaluation tuner: labelled positions, one per line.
    Datagen(datagen::Args),
    /// pillarz's learned evaluation: generate self-play data (`gen`), train a network (`train`).
    Nnue(nnue::Args),
    /// Fit a game's evaluation weights to self-play positions (Texel's method).
    Tune(tune::Args),
    /// List the games the server plays.
    Catalog(game_cmds::CatalogArgs),
    /// Create a game; prints its id and saves the seat tokens locally.
    New(game_cmds::NewArgs),
    /// Show a game: board, moves, result, clocks.
    Show(game_cmds::IdArgs),
    /// List a game's legal moves.
    Moves(game_cmds::IdArgs),
    /// Play a move (with a saved seat token).
    Move(game_cmds::MoveArgs),
    /// Resign a game (with a saved seat token).
    Resign(game_cmds::ResignArgs),
    /// Show a game's clocks.
    Clock(game_cmds::IdArgs),
    /// Analyse a stored game or any position with the server's engine.
    Analyze(analyze::AnalyzeArgs),
    /// Analyse many positions from a file; NDJSON results on stdout.
    AnalyzeBatch(analyze::BatchArgs),
    /// Play against the server's engine in the terminal.
    Play(play::PlayArgs),
    /// Follow a game live, redrawing the board at every change.
    Watch(game_cmds::WatchArgs),
    /// Save a game's board as SVG.
    Board(game_cmds::BoardArgs),
    /// Load-test running replicas (games, readers, analyses) and audit every move.
    Loadgen(loadgen::Args),
    /// Measure bytes in Redis per game and request latency on short and long games.
    BenchStorage(bench_storage::Args),
    /// Make and revoke integrators' API keys (in Redis).
    Keys(keys::Args),
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
    /// A failed request to the server: exit 3 to 7 (see `ClientError::exit_code`).
    #[error(transparent)]
    Client(crate::client::ClientError),
    /// A game was created, but its seat tokens could not be saved: exit 1, with the tokens
    /// shown (on stderr, as `{"game": id, "tokens": {...}}`) so that the game can be played.
    #[error("the game {game} was created, but its seat tokens could not be saved: {cause}")]
    TokensNotSaved {
        game: String,
        tokens: serde_json::Value,
        cause: String,
    },
    /// Standard output's reader went away: exit 0, with nothing said (see `output`).
    #[error("standard output was closed")]
    StdoutClosed,
}

impl CliError {
    /// The error as `--json` prints it.
    fn to_json(&self) -> serde_json::Value {
        use crate::client::ClientError;
        let mut error = serde_json::json!({
            "code": match self {
                CliError::Usage(_) => "bad_input",
                CliError::Failure(_) => "failure",
                CliError::Client(e) => e.code(),
                CliError::TokensNotSaved { .. } => "tokens_not_saved",
                CliError::StdoutClosed => "stdout_closed",
            },
            "detail": format!("{self:#}"),
        });
        if let CliError::TokensNotSaved { game, tokens, .. } = self {
            error["game"] = game.clone().into();
            error["tokens"] = tokens.clone();
        }
        if let CliError::Client(ClientError::Refused(p) | ClientError::ServerError(p)) = self {
            error["detail"] = p.detail.clone().into();
            error["status"] = p.status.into();
            if let Some(id) = &p.request_id {
                error["request_id"] = id.clone().into();
            }
        }
        serde_json::json!({ "error": error })
    }

    fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Failure(_) | CliError::TokensNotSaved { .. } => EXIT_FAILURE,
            CliError::Client(e) => e.exit_code(),
            CliError::StdoutClosed => 0,
        }
    }
}

/// Parses the command line, runs it, and turns errors into a message and an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A usage error of a command line that asked for JSON (not `--help` or `--version`).
        Err(e) if e.use_stderr() && asks_for_json(std::env::args_os()) => {
            let detail = e.render().to_string();
            let error =
                serde_json::json!({"error": {"code": "bad_input", "detail": detail.trim()}});
            report_json(&error);
            return ExitCode::from(EXIT_USAGE);
        }
        Err(e) => e.exit(),
    };
    let json = cli.command.client().is_some_and(|client| client.json);
    match run(cli) {
        Ok(code) => code,
        Err(CliError::StdoutClosed) => ExitCode::SUCCESS,
        Err(err) if json => {
            report_json(&err.to_json());
            ExitCode::from(err.exit_code())
        }
        Err(err) => {
            if let CliError::TokensNotSaved { game, tokens, .. } = &err {
                eprintln!("keep the seat tokens of the game:");
                report_json(&serde_json::json!({"game": game, "tokens": tokens}));
            }
            // One line, whatever the server put in its detail (see `client::terminal`).
            let message = format!("{err:#}");
            eprintln!(
                "error: {}",
                crate::client::terminal::escape_controls(&message, false)
            );
            ExitCode::from(err.exit_code())
        }
    }
}

/// Whether a command line has `--json` among its options (before a `--`).
fn asks_for_json(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    args.skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// An error as one JSON line on stderr, with no raw control character of the server's in it.
fn report_json(error: &serde_json::Value) {
    eprintln!(
        "{}",
        crate::client::terminal::escape_json_controls(&error.to_string())
    );
}

impl Command {
    /// The options of a client command (one that talks to a server).
    fn client(&self) -> Option<&client_args::ClientArgs> {
        match self {
            Command::Catalog(a) => Some(&a.client),
            Command::New(a) => Some(&a.client),
            Command::Show(a) | Command::Moves(a) | Command::Clock(a) => Some(&a.client),
            Command::Move(a) => Some(&a.client),
            Command::Resign(a) => Some(&a.client),
            Command::Analyze(a) => Some(&a.client),
            Command::AnalyzeBatch(a) => Some(&a.client),
            Command::Play(a) => Some(&a.client),
            Command::Watch(a) => Some(&a.client),
            Command::Board(a) => Some(&a.client),
            Command::Serve(_)
            | Command::Perft(_)
            | Command::BenchMovegen(_)
            | Command::Openapi(_)
            | Command::Bench(_)
            | Command::Engine(_)
            | Command::Match(_)
            | Command::Datagen(_)
            | Command::Nnue(_)
            | Command::Tune(_)
            | Command::Loadgen(_)
            | Command::BenchStorage(_)
            | Command::Keys(_) => None,
        }
    }
}

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    if let Some(path) = &cli.network {
        let bytes =
            std::fs::read(path).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
        let net = crate::engine::nnue::network::Network::from_bytes(&bytes)
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
        if !crate::engine::nnue::install(net) {
            return Err(anyhow::anyhow!("a network was in use before --network was read").into());
        }
    }
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Perft(args) => perft::run(args),
        Command::Openapi(args) => openapi::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Engine(args) => engine_cmd::run(args),
        Command::Match(args) => match_cmd::run(args),
        Command::Datagen(args) => datagen::run(args),
        Command::Tune(args) => tune::run(args),
        Command::Nnue(args) => nnue::run(args),
        Command::Catalog(args) => game_cmds::catalog(args),
        Command::New(args) => game_cmds::new(args),
        Command::Show(args) => game_cmds::show(args),
        Command::Moves(args) => game_cmds::moves(args),
        Command::Move(args) => game_cmds::play_move(args),
        Command::Resign(args) => game_cmds::resign(args),
        Command::Clock(args) => game_cmds::clock(args),
        Command::Analyze(args) => analyze::analyze(args),
        Command::AnalyzeBatch(args) => analyze::batch(args),
        Command::Play(args) => play::play(args),
        Command::Watch(args) => game_cmds::watch(args),
        Command::Board(args) => game_cmds::board(args),
        Command::Loadgen(args) => loadgen::run_cmd(args),
        Command::BenchMovegen(args) => bench_movegen::run(args),
        Command::BenchStorage(args) => bench_storage::run_cmd(args),
        Command::Keys(args) => keys::run(args),
    }
}
