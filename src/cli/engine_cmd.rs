//! `pillarz engine`: the engine behind a line protocol on stdin/stdout (see
//! [`super::engine_protocol`]), so that GUIs, scripts and other `pillarz` binaries can drive it.
//!
//! Commands are handled on one thread; a search runs on another, so `stop`, `isready` and
//! `quit` are answered while it thinks. Any other command waits for a bounded search to answer
//! first (so a script can pipe a whole session in), and stops a `go infinite`. Input is read on
//! a third thread, so that while a command waits, a `stop` or `quit` sent after it (with no
//! `go` between) still ends the search: a bound too large to reach (`go nodes
//! 18446744073709551615`) does not leave the engine deaf.

use std::collections::VecDeque;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::engine::any::{Analysis, AnyEngine};
use crate::engine::{Eval, Limit, Params};
use crate::rules::{AnyRecord, GameKind, RulesError, Variants};
use crate::wall_clock::WallClock;

use super::CliError;
use super::capped_lines::{LineError, next_line, skip_line};
use super::engine_protocol::{Command, format_score};

/// Run the engine protocol on stdin/stdout (documented in the README).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transposition table size, as a power of two of entries.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(10..=26))]
    hash_bits: u32,
    /// The evaluation: `hand` or `nnue` (pillarz's network); the game's default when absent.
    #[arg(long, value_parser = Eval::parse)]
    eval: Option<Eval>,
}

/// The first failed write to standard output, from whichever thread wrote (the session's or a
/// search's): the session ends at its next command then, as any command does (see `output`).
static WRITE_FAILED: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

/// Writes one line and flushes it (a driver waits for whole lines).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
        WRITE_FAILED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e);
    }
}

/// Whether a line could not be written: `Err` with how (a closed standard output is the
/// driver gone, which ends the session quietly; see `output`).
fn output_failed() -> Result<(), super::output::OutputError> {
    match WRITE_FAILED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

fn bestmove_line(a: &Analysis) -> String {
    format!(
        "bestmove {} score {} depth {} nodes {} time {} pv {}",
        a.best_move.as_deref().unwrap_or("none"),
        format_score(a.score),
        a.depth,
        a.nodes,
        a.time_ms,
        a.pv.join(" ")
    )
}

/// The longest command line read (a position with thousands of moves is a few tens of KiB).
const MAX_LINE: usize = 1 << 20;

/// The most lines kept while a command waits: past it, the driver's writes wait as they did
/// before input had its own thread (a `stop` after so many commands was not meant for the
/// search that runs).
const MAX_PENDING: usize = 1024;

/// The driver's lines, read on a thread of their own.
struct Input {
    /// Each line, or why it was refused (too long, not UTF-8); ends with the input.
    lines: Receiver<Result<String, LineError>>,
    /// Lines read while a command waited for a search, to be handled next, in order.
    pending: VecDeque<Result<String, LineError>>,
}

impl Input {
    fn stdin() -> Input {
        let (tx, lines) = sync_channel(64);
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            while let Some(line) = next_line(&mut stdin, MAX_LINE) {
                if line == Err(LineError::TooLong(MAX_LINE)) {
                    skip_line(&mut stdin);
                }
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Input {
            lines,
            pending: VecDeque::new(),
        }
    }

    /// Whether a `stop` or `quit` is queued with no `go` before it.
    fn stop_queued(&self) -> bool {
        for line in self.pending.iter().flatten() {
            match line.trim().parse::<Command>() {
                Ok(Command::Stop | Command::Quit) => return true,
                Ok(Command::Go { .. }) => return false,
                _ => {}
            }
        }
        false
    }

    /// The next line to handle; `None` at the end of the input.
    fn next(&mut self) -> Option<Result<String, LineError>> {
        self.pending.pop_front().or_else(|| self.lines.recv().ok())
    }
}

/// What the engine knows between commands.
struct Session {
    kind: GameKind,
    variants: Variants,
    record: AnyRecord,
    /// The engine of this game, kept between searches; lent to the search thread meanwhile.
    engine: Arc<std::sync::Mutex<AnyEngine>>,
    hash_bits: u32,
    eval: Option<Eval>,
    /// The running search, its stop flag, and whether it runs until stopped (`go infinite`).
    search: Option<(JoinHandle<()>, Arc<AtomicBool>, bool)>,
}

impl Session {
    fn new(hash_bits: u32, eval: Option<Eval>) -> Session {
        let kind = GameKind::Pillarz;
        Session {
            kind,
            variants: Variants::NONE,
            record: AnyRecord::new(kind, Variants::NONE, None).expect("the start position"),
            engine: Arc::new(std::sync::Mutex::new(AnyEngine::with_eval(
                kind, hash_bits, eval,
            ))),
            hash_bits,
            eval,
            search: None,
        }
    }

    /// Stops a running search (its bestmove is still printed) and waits for it.
    fn finish_search(&mut self) {
        if let Some((handle, stop, _)) = self.search.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    }

    /// Waits for a bounded search to end by itself (an unbounded one is stopped). Meanwhile
    /// the driver's lines are kept, in order, for later; but a `stop` or `quit` among them that
    /// no `go` precedes was meant for the search that runs, so it ends that search at once
    /// (and is still handled in its turn).
    fn await_search(&mut self, input: &mut Input) {
        match self.search.take() {
            Some((handle, stop, false)) => {
                while !handle.is_finished() && !input.stop_queued() {
                    if input.pending.len() >= MAX_PENDING {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    match input.lines.recv_timeout(Duration::from_millis(5)) {
                        Ok(line) => input.pending.push_back(line),
                        // The input ended: the search still answers.
                        Err(RecvTimeoutError::Disconnected) => break,
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                }
                if input.stop_queued() {
                    stop.store(true, Ordering::Relaxed);
                }
                let _ = handle.join();
            }
            Some(running) => {
                self.search = Some(running);
                self.finish_search();
            }
            None => {}
        }
    }

    fn set_position(&mut self, start: Option<&str>, moves: &[String]) -> Result<(), RulesError> {
        let mut record = AnyRecord::new(self.kind, self.variants, start)?;
        for mv in moves {
            record.play(mv)?;
        }
        self.record = record;
        Ok(())
    }

    fn go(&mut self, limit: Option<Limit>, multipv: usize, input: &mut Input) {
        self.await_search(input);
        let record = self.record.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let engine = Arc::clone(&self.engine);
        let handle = std::thread::spawn(move || {
            let clock = WallClock::start();
            let mut engine = engine.lock().unwrap_or_else(|e| e.into_inner());
            let analysis = engine.analyse(
                record.state(),
                &Params {
                    multipv,
                    stop: Some(&flag),
                    ..Params::play(
                        limit.unwrap_or(Limit::Depth(crate::engine::limits::MAX_PLY)),
                        &clock,
                    )
                },
            );
            let Some(analysis) = analysis else {
                say("error the engine and the position are of different games");
                return;
            };
            for (i, line) in analysis.lines.iter().enumerate() {
                say(&format!(
                    "info multipv {} depth {} score {} nodes {} time {} pv {}",
                    i + 1,
                    analysis.depth,
                    format_score(line.score),
                    analysis.nodes,
                    analysis.time_ms,
                    line.pv.join(" ")
                ));
            }
            say(&bestmove_line(&analysis));
        });
        self.search = Some((handle, stop, limit.is_none()));
    }

    /// Handles one line; `false` once the driver said `quit`.
    fn handle(&mut self, line: &str, input: &mut Input) -> bool {
        let command = match line.parse::<Command>() {
            Ok(c) => c,
            Err(super::engine_protocol::CommandError::Empty) => return true,
            Err(e) => {
                say(&format!("error {e}"));
                return true;
            }
        };
        match command {
            Command::NewGame { game, variants } => {
                self.await_search(input);
                let parsed = game
                    .parse::<GameKind>()
                    .map_err(RulesError::from)
                    .and_then(|kind| Ok((kind, kind.variants(&variants)?)));
                match parsed {
                    Ok((kind, variants)) => {
                        self.kind = kind;
                        self.variants = variants;
                        self.engine = Arc::new(std::sync::Mutex::new(AnyEngine::with_eval(
                            kind,
                            self.hash_bits,
                            self.eval,
                        )));
                        if let Err(e) = self.set_position(None, &[]) {
                            say(&format!("error {e}"));
                        }
                    }
                    Err(e) => say(&format!("error {e}")),
                }
            }
            Command::Position { start, moves } => {
                self.await_search(input);
                if let Err(e) = self.set_position(start.as_deref(), &moves) {
                    say(&format!("error {e}"));
                }
            }
            Command::Go { limit, multipv } => self.go(limit, multipv, input),
            Command::Stop => self.finish_search(),
            Command::IsReady => say("readyok"),
            Command::Quit => {
                self.finish_search();
                return false;
            }
        }
        true
    }
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let mut session = Session::new(args.hash_bits, args.eval);
    let mut input = Input::stdin();
    while let Some(line) = input.next() {
        output_failed()?;
        match line {
            Ok(line) => {
                if !session.handle(line.trim(), &mut input) {
                    output_failed()?;
                    return Ok(ExitCode::SUCCESS);
                }
            }
            Err(refused) => say(&format!("error {refused}")),
        }
    }
    // End of input (`echo "go depth 8" | pillarz engine`): a bounded search finishes and answers.
    session.await_search(&mut input);
    output_failed()?;
    Ok(ExitCode::SUCCESS)
}
