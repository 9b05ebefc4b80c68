//! The `pillarz` binary: every subcommand lives in the library's `cli` module.
//!
//! mimalloc is the allocator: a request allocates and frees many small buffers (headers,
//! JSON, Redis commands) on the worker thread that serves it, and mimalloc's thread-local free
//! lists serve that pattern with less work than glibc's allocator (the load test's CPU per move,
//! README "Measured", issue 12).

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    pillarz::cli::main()
}
