//! Runs the real `pillarz` binary's engine protocol with a whole session piped in (shared by
//! the protocol tests and the network tests).

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `pillarz <args…>` (an `engine` command line) with `input` on stdin; returns its
/// output lines, after checking that it exited successfully.
pub fn session(args: &[&str], input: &str) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "pillarz {args:?} failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}
