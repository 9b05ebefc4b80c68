//! The local token file: seat tokens saved by `pillarz new`, so later commands need no
//! copy-paste. JSON `{"<game id>": {"p1": "<token>", ...}}`, at `$PILLARZ_TOKENS` or
//! `$XDG_STATE_HOME/pillarz/tokens.json` (default `~/.local/state/pillarz/tokens.json`).
//!
//! Why the care in [`save`]: several `pillarz new` may run at once (a script, two shells), and
//! each rewrites the whole file. Without a lock held from the read to the write, the last to
//! write drops what the others saved in between (20 parallel runs kept 16 games' tokens), while
//! each of them said its tokens were saved. The tokens are bearer credentials, so the file is
//! never readable by others, not even for the moment between its creation and a chmod.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::api::Seat;

pub type Tokens = BTreeMap<String, BTreeMap<Seat, String>>;

/// Why the token file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// Reading, locking, creating or replacing a file failed.
    #[error("token file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not the JSON this module writes.
    #[error("token file {}: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TokenFileError + '_ {
    move |source| TokenFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub fn default_path() -> PathBuf {
    if let Some(path) = std::env::var_os("PILLARZ_TOKENS") {
        return PathBuf::from(path);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    state.join("pillarz/tokens.json")
}

pub fn load(path: &Path) -> Result<Tokens, TokenFileError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|source| TokenFileError::Json {
            path: path.to_path_buf(),
            source,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tokens::new()),
        Err(e) => Err(io(path)(e)),
    }
}

/// The lock file beside the token file: `tokens.json.lock`. A file of its own, because the
/// token file itself is replaced by a rename at every save, and a lock on the replaced file
/// would not keep out a writer that opened the new one.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// How long [`save`] waits for the lock another process holds before it gives up: a save holds
/// it for milliseconds, so a lock held this long belongs to a process that is stuck.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Takes the exclusive lock on `file`, waiting at most [`LOCK_WAIT`] for it.
fn lock_within(file: &std::fs::File, path: &Path) -> Result<(), TokenFileError> {
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(io(path)(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "another process has held the lock for over {} s",
                        LOCK_WAIT.as_secs()
                    ),
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(path)(e)),
        }
    }
}

/// Adds a game's tokens to the file: under an exclusive lock from the read to the rename,
/// through a temporary file of its own in the same directory, owner-only (0600) from its
/// creation on. The lock is waited for at most [`LOCK_WAIT`].
pub fn save(path: &Path, game: &str, seats: &BTreeMap<Seat, String>) -> Result<(), TokenFileError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let lock_path = lock_path(path);
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    options.mode(0o600);
    let lock = options.open(&lock_path).map_err(io(&lock_path))?;
    // Released when `lock` is closed, at the end of this function (or by the kernel if the
    // process dies holding it).
    lock_within(&lock, &lock_path)?;
    let mut all = load(path)?;
    all.insert(game.to_string(), seats.clone());
    let text = serde_json::to_string_pretty(&all).expect("tokens serialize");
    // `tempfile` creates the file with O_EXCL and mode 0600, under a name no other process
    // uses, and removes it if anything below fails.
    let mut tmp = tempfile::Builder::new()
        .prefix(".tokens-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io(dir))?;
    tmp.write_all(text.as_bytes()).map_err(io(tmp.path()))?;
    tmp.as_file().sync_all().map_err(io(tmp.path()))?;
    tmp.persist(path).map_err(|e| io(path)(e.error))?;
    drop(lock);
    Ok(())
}
