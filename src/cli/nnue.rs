//! `pillarz nnue gen|train`: the learned evaluation's data generator and trainer (see
//! `engine::nnue`). The engine modules are pure; this file does the files, the threads and the
//! progress on the terminal.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use crate::engine::Eval;
use crate::engine::nnue::generate::play_game;
use crate::engine::nnue::sample::{MAGIC, decode_all};
use crate::engine::nnue::train::{TrainConfig, train};
use crate::engine::search::Engine;
use crate::rules::pillarz::Position;

use super::CliError;
use super::selfplay_args::SelfPlayArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: NnueCommand,
}

#[derive(Debug, clap::Subcommand)]
enum NnueCommand {
    /// Play self-play games and write their positions (search score and result) to a file.
    Gen(GenArgs),
    /// Fit a network to generated positions and write it (compile it in as
    /// `src/engine/nnue/pillarz.nnue`).
    Train(TrainArgs),
}

#[derive(Debug, clap::Args)]
struct TrainArgs {
    /// A file written by `pillarz nnue gen` (repeatable; read in order).
    #[arg(long = "data", required = true)]
    data: Vec<PathBuf>,
    /// Train on the first this many positions of the data only (to reproduce a network from
    /// a generator run that was stopped early: its file is a prefix of the whole run's).
    #[arg(long)]
    positions: Option<usize>,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 30)]
    epochs: usize,
    /// Positions per optimiser step.
    #[arg(long, default_value_t = 4096)]
    batch: usize,
    /// Adam's learning rate at the start (it falls linearly to a tenth).
    #[arg(long, default_value_t = 0.002)]
    learning_rate: f32,
    /// The weight of the search score in the target, the rest being the game's result (0–1).
    #[arg(long, default_value_t = 0.5)]
    lambda: f32,
    /// The share of the positions (the last ones) held out to measure the validation loss.
    #[arg(long, default_value_t = 0.05)]
    validation: f32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the network.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, clap::Args)]
struct GenArgs {
    /// Games to play.
    #[arg(long, default_value_t = 10_000)]
    games: u64,
    #[command(flatten)]
    selfplay: SelfPlayArgs,
    /// The playing engine's evaluation: hand or nnue (the network compiled in).
    #[arg(long, default_value = "hand", value_parser = Eval::parse)]
    eval: Eval,
    /// Games played at once (the output is the same for any number).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// The file to write (replaced).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    match args.command {
        NnueCommand::Gen(args) => gen_cmd(args),
        NnueCommand::Train(args) => train_cmd(args),
    }
}

fn train_cmd(args: TrainArgs) -> Result<ExitCode, CliError> {
    let usage = CliError::Usage;
    if !(0.0..=1.0).contains(&args.lambda) {
        return Err(usage("--lambda must be within 0 and 1".into()));
    }
    if !(0.0..1.0).contains(&args.validation) {
        return Err(usage("--validation must be at least 0 and below 1".into()));
    }
    if args.epochs == 0 || args.batch == 0 {
        return Err(usage("--epochs and --batch must be at least 1".into()));
    }
    if args.learning_rate.is_nan() || args.learning_rate <= 0.0 {
        return Err(usage("--learning-rate must be positive".into()));
    }
    let mut samples = Vec::new();
    for path in &args.data {
        let bytes = std::fs::read(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        let mut read = decode_all(&bytes).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        eprintln!("{}: {} positions", path.display(), read.len());
        samples.append(&mut read);
    }
    if let Some(n) = args.positions {
        if n > samples.len() {
            return Err(usage(format!(
                "--positions {n}: the data holds only {}",
                samples.len()
            )));
        }
        samples.truncate(n);
    }
    if samples.len() < 100 {
        return Err(usage(format!(
            "{} positions are too few to train on",
            samples.len()
        )));
    }
    let config = TrainConfig {
        epochs: args.epochs,
        batch: args.batch,
        learning_rate: args.learning_rate,
        lambda: args.lambda,
        validation: args.validation,
        seed: args.seed,
    };
    let started = std::time::Instant::now();
    let net = train(&samples, &config, |r| {
        eprintln!(
            "epoch {:>3}  train loss {:.6}  validation loss {:.6}  {:.0} s",
            r.epoch,
            r.train_loss,
            r.validation_loss,
            started.elapsed().as_secs_f64()
        );
    });
    std::fs::write(&args.out, net.to_bytes())
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
    outln!("{net:?} written to {}", args.out.display())?;
    Ok(ExitCode::SUCCESS)
}

fn gen_cmd(args: GenArgs) -> Result<ExitCode, CliError> {
    let usage = CliError::Usage;
    if args.threads == 0 {
        return Err(usage("--threads must be at least 1".into()));
    }
    let eval = args.eval;
    let config = args.selfplay.validate()?;
    let file = std::fs::File::create(&args.out)
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
    let mut out = std::io::BufWriter::new(file);
    out.write_all(MAGIC).map_err(anyhow::Error::from)?;

    let progress = indicatif::ProgressBar::with_draw_target(
        Some(args.games),
        indicatif::ProgressDrawTarget::stderr(),
    );
    progress.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} games, {msg}, {elapsed} (eta {eta})",
        )
        .expect("a valid template"),
    );
    let next = AtomicU64::new(0);
    let (tx, rx) = mpsc::channel();
    let mut positions = 0u64;
    let written: anyhow::Result<()> = std::thread::scope(|scope| {
        for _ in 0..args.threads {
            let tx = tx.clone();
            let (next, config) = (&next, &config);
            scope.spawn(move || {
                let mut engine =
                    Engine::<Position>::with_eval(crate::engine::search::TT_BITS, eval);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= args.games {
                        return;
                    }
                    let samples = play_game(&mut engine, config, index);
                    if tx.send((index, samples)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Games finish out of order; they are written in order, so a run's file is the same
        // for any number of threads.
        let mut pending = BTreeMap::new();
        let mut due = 0;
        let mut bytes = Vec::new();
        for (index, samples) in rx {
            pending.insert(index, samples);
            while let Some(samples) = pending.remove(&due) {
                bytes.clear();
                for s in &samples {
                    s.encode(&mut bytes);
                }
                out.write_all(&bytes)?;
                positions += samples.len() as u64;
                due += 1;
                progress.inc(1);
                progress.set_message(format!("{positions} positions"));
                if progress.is_hidden() && due % 1000 == 0 {
                    // Not a terminal (a log file): a line now and then instead of the bar.
                    eprintln!("{due}/{} games, {positions} positions", args.games);
                }
            }
        }
        Ok(())
    });
    written?;
    out.flush().map_err(anyhow::Error::from)?;
    progress.finish();
    outln!("{positions} positions written to {}", args.out.display())?;
    Ok(ExitCode::SUCCESS)
}
