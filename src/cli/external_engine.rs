//! An engine in another process, driven through the engine protocol: how `pillarz match` plays
//! one `pillarz` binary (an older build, say) against another.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use rand::rngs::SmallRng;

use crate::engine::limits::Clock;
use crate::engine::tournament::Contender;
use crate::engine::{Limit, Searchable};
use crate::rules::record::Record;
use crate::rules::{GameKind, Variants};

use super::engine_protocol::parse_bestmove;

/// How long past its think time an engine may take to answer before it counts as hung.
const GRACE: Duration = Duration::from_secs(10);

/// `<path> engine`, running.
pub struct ExternalEngine {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    limit: Limit,
    game: GameKind,
    variants: Variants,
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
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(ExternalEngine {
            name: format!("cmd:{path}@{limit}"),
            child,
            stdin,
            lines,
            limit,
            game,
            variants,
        })
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("{}: cannot write to the engine: {e}", self.name))
    }

    /// Reads lines until `bestmove`; an `error` line or silence past the grace time fails.
    fn await_bestmove(&mut self) -> Result<Option<String>, String> {
        let think = match self.limit {
            Limit::MovetimeMs(ms) => Duration::from_millis(ms),
            // A node or depth limit has no time to it: allow a generous minute.
            _ => Duration::from_secs(60),
        };
        let deadline = think + GRACE;
        loop {
            let line = match self.lines.recv_timeout(deadline) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("{}: no bestmove within {deadline:?}", self.name));
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
        self.send(&line)
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
        self.send(&position)?;
        self.send(&match self.limit {
            Limit::MovetimeMs(ms) => format!("go movetime {ms}"),
            Limit::Nodes(n) => format!("go nodes {n}"),
            Limit::Depth(d) => format!("go depth {d}"),
        })?;
        let best = self
            .await_bestmove()?
            .ok_or_else(|| format!("{}: bestmove none in a game that goes on", self.name))?;
        G::parse_move(&best).map_err(|e| format!("{}: {e}", self.name))
    }
}

impl Drop for ExternalEngine {
    fn drop(&mut self) {
        let _ = self.send("quit");
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
