//! The `pillarz` binary: every subcommand lives in the library's `cli` module.

use std::process::ExitCode;

fn main() -> ExitCode {
    pillarz::cli::main()
}
