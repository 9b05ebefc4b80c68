//! An engine in another process, driven through the engine protocol: how `pillarz match` plays
//! one `pillarz` binary (an older build, say) against another.

use std::io::{BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel, sync_channel};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;

use crate::engine::limits::Clock;
use crate::engine::tournament::Contender;
use crate::engine::{Limit, Searchable};
use crate::rules::record::Record;
use crate::rules::{GameKind, Variants};

use super::capped_lines::{LineError, next_line};
use super::engine_protocol::parse_bestmove;

/// How long past its think time an engine may take to answer before it counts as hung.
const GRACE: Duration = Duration::from_secs(10);

/// The longest line an engine may write (its longest honest line, an `info` with a whole
/// principal variation, is a few hundred bytes).
const MAX_LINE: usize = 64 * 1024;

/// Lines read ahead of the match: an engine that writes faster than the match reads waits.
const LINES_AHEAD: usize = 256;

/// `<path> engine`, running. Its output is read on one thread and its input written on
/// another, so that an engine that writes without end, or stops reading, can hold neither
/// the match's memory nor the match itself: every wait has a deadline, and at its end the
/// engine is killed.
pub struct ExternalEngine {
    name: String,
    child: Child,
    /// Lines to write to the engine (the writer thread ends when this is dropped).
    input: Option<Sender<String>>,
    lines: Receiver<Result<String, LineError>>,
    limit: Limit,
    game: GameKind,
    variants: Variants,
}

/// Sends the engine's lines, each at most [`MAX_LINE`] bytes of UTF-8, until its output ends
/// or a line is refused (the refusal is the last item: the rest of the output is not read).
fn read_lines(stdout: ChildStdout, lines: SyncSender<Result<String, LineError>>) {
    let mut out = BufReader::new(stdout);
    while let Some(line) = next_line(&mut out, MAX_LINE) {
        let last = line.is_err();
        if lines.send(line).is_err() || last {
            return;
        }
    }
}

impl ExternalEngine {
    /// Starts `<path> engine`, which will search with `limit` per move in `game`.
    pub fn spawn(
        path: &str,
        limit: Limit,
        game: GameKind,
        variants: Variants,
    ) -> Result<ExternalEngine, String> {
        let mut child = Command::new(path)
            .arg("engine")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {path}: {e}"))?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = sync_channel(LINES_AHEAD);
        std::thread::spawn(move || read_lines(stdout, tx));
        let (input, to_write) = channel::<String>();
        std::thread::spawn(move || {
            for line in to_write {
                if writeln!(stdin, "{line}")
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    return;
                }
            }
        });
        Ok(ExternalEngine {
            name: format!("cmd:{path}@{limit}"),
            child,
            input: Some(input),
            lines,
            limit,
            game,
            variants,
        })
    }

    /// Queues a line for the engine. It never blocks the match, and never fails: an engine
    /// that stopped reading, or closed its input, is caught by the wait for its answer, which
    /// then tells why (a refused line, its exit, or no answer in time).
    fn send(&mut self, line: &str) {
        if let Some(input) = &self.input {
            let _ = input.send(line.to_string());
        }
    }

    /// Reads lines until `bestmove`; an `error` line, a refused line, or no `bestmove` by the
    /// think time plus [`GRACE`] (however much else the engine writes meanwhile) fails.
    fn await_bestmove(&mut self) -> Result<Option<String>, String> {
        let think = match self.limit {
            Limit::MovetimeMs(ms) => Duration::from_millis(ms),
            // A node or depth limit has no time to it: allow a generous minute.
            _ => Duration::from_secs(60),
        };
        let allowed = think + GRACE;
        let deadline = Instant::now() + allowed;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Ok(line)) => line,
                Ok(Err(refused)) => {
                    return Err(format!("{}: the engine wrote {refused}", self.name));
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("{}: no bestmove within {allowed:?}", self.name));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{}: the engine exited", self.name));
                }
            };
            if let Some(rest) = line.strip_prefix("error ") {
                return Err(format!("{}: {rest}", self.name));
            }
            if let Some(best) = parse_bestmove(&line) {
                return Ok(best);
            }
        }
    }
}

impl<G: Searchable> Contender<G> for ExternalEngine {
    fn new_game(&mut self) -> Result<(), String> {
        let mut line = format!("newgame {}", self.game);
        for v in self.variants.names() {
            line.push(' ');
            line.push_str(v);
        }
        self.send(&line);
        Ok(())
    }

    fn choose(
        &mut self,
        record: &Record<G>,
        _clock: &dyn Clock,
        _rng: &mut SmallRng,
    ) -> Result<G::Move, String> {
        let mut position = format!("position {} moves", record.start());
        for mv in record.moves() {
            position.push(' ');
            position.push_str(&mv.to_string());
        }
        self.send(&position);
        self.send(&match self.limit {
            Limit::MovetimeMs(ms) => format!("go movetime {ms}"),
            Limit::Nodes(n) => format!("go nodes {n}"),
            Limit::Depth(d) => format!("go depth {d}"),
        });
        let best = self
            .await_bestmove()?
            .ok_or_else(|| format!("{}: bestmove none in a game that goes on", self.name))?;
        G::parse_move(&best).map_err(|e| format!("{}: {e}", self.name))
    }
}

impl Drop for ExternalEngine {
    fn drop(&mut self) {
        self.send("quit");
        // The writer closes the engine's input once it has written what is queued.
        self.input = None;
        // Give it a moment to leave by itself, then make sure it is gone.
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
