//! What the commands print on standard output, and what happens when nobody reads it.
//!
//! A reader that has what it wanted goes away: `pillarz perft pillarz 5 --divide | head -3`,
//! `pillarz watch ID | grep -m1 finished`. Its end of the pipe closes, and the next write
//! fails with `EPIPE` (Rust ignores `SIGPIPE`, so the process is not killed by it). `println!`
//! panics on that failure (exit 101, "failed printing to stdout"), and an error passed up as
//! any other would say "error: Broken pipe" (exit 1): both report a failure where the reader
//! merely stopped listening. So every command writes through [`out!`] and [`outln!`], which
//! turn that one failure into [`OutputError::Closed`], and the process ends quietly with exit
//! 0, as ripgrep does. Where the output is all the command does, it stops there: there is no
//! one to do the rest for. Where its work goes past its output (`tune --write` still has a
//! file to write, `loadgen` an exit status to give), the write is [`unless_closed`]. Where the
//! output is the only copy of something (`keys create`'s key), a closed output is a failure.
//! Any other failure to write (a full disk behind a redirection) is an error as usual.
//!
//! Only standard output is treated so: a broken pipe to an engine that a `match` drives is
//! that engine's failure, and is reported as one.

use std::fmt;
use std::io::{self, Write};

use super::CliError;

/// A failed write to standard output.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The reader closed its end: the command stops, quietly (exit 0).
    #[error("standard output was closed")]
    Closed,
    /// Any other failure to write: an error (exit 1).
    #[error("cannot write to standard output")]
    Failed(#[source] io::Error),
}

impl From<io::Error> for OutputError {
    fn from(e: io::Error) -> OutputError {
        if e.kind() == io::ErrorKind::BrokenPipe {
            OutputError::Closed
        } else {
            OutputError::Failed(e)
        }
    }
}

impl From<OutputError> for CliError {
    fn from(e: OutputError) -> CliError {
        match e {
            OutputError::Closed => CliError::StdoutClosed,
            failed => CliError::Failure(failed.into()),
        }
    }
}

/// Writes to standard output (the body of [`out!`] and [`outln!`]).
pub fn write(args: fmt::Arguments<'_>) -> Result<(), OutputError> {
    Ok(io::stdout().lock().write_fmt(args)?)
}

/// Flushes standard output (after a prompt without a newline).
pub fn flush() -> Result<(), OutputError> {
    Ok(io::stdout().lock().flush()?)
}

/// A write whose reader may have gone without harm: the command's work goes on past it (a
/// file still to write, an exit status still to give), so only another failure stops it.
pub fn unless_closed(written: Result<(), OutputError>) -> Result<(), OutputError> {
    match written {
        Err(OutputError::Closed) => Ok(()),
        other => other,
    }
}

/// `print!` that returns a [`Result<(), OutputError>`] instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::write(format_args!($($arg)*))
    };
}

/// `println!` that returns a [`Result<(), OutputError>`] instead of panicking.
macro_rules! outln {
    () => {
        $crate::cli::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
