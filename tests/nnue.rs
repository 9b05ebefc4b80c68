//! The learned evaluation's tools end to end, as a user runs them: `pillarz nnue gen` writes
//! self-play positions, `pillarz nnue train` fits a network to them, and the engine searches
//! with that network (`--network`) through the engine protocol.

use std::process::{Command, Output};

#[path = "common/engine_session.rs"]
mod engine_session;
use engine_session::session;

const BIN: &str = env!("CARGO_BIN_EXE_pillarz");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("pillarz runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pillarz-nnue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn generate(out: &std::path::Path, threads: &str) -> Vec<u8> {
    let o = run(&[
        "nnue",
        "gen",
        "--games",
        "12",
        "--limit",
        "400n",
        "--threads",
        threads,
        "--seed",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("positions written"),
        "{}",
        text(&o.stdout)
    );
    std::fs::read(out).unwrap()
}

#[test]
fn generate_train_and_search_with_the_network() {
    let data = temp("data.bin");
    let bytes = generate(&data, "2");
    assert!(bytes.starts_with(b"PZNNDAT1"));
    assert_eq!((bytes.len() - 8) % 16, 0);
    assert!(bytes.len() > 8 + 16 * 200, "{} bytes", bytes.len());
    // The same seed gives the same file, whatever the number of threads.
    assert_eq!(generate(&temp("again.bin"), "1"), bytes);

    let net = temp("net.nnue");
    let o = run(&[
        "nnue",
        "train",
        "--data",
        data.to_str().unwrap(),
        "--epochs",
        "3",
        "--batch",
        "128",
        "--out",
        net.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let log = text(&o.stderr);
    assert_eq!(log.matches("validation loss").count(), 3, "{log}");
    assert!(std::fs::read(&net).unwrap().starts_with(b"PZNNUE01"));

    // The engine searches with it, and its scores differ from the compiled-in network's.
    let search = |network: Option<&str>| {
        let mut args = Vec::new();
        if let Some(n) = network {
            args.extend(["--network", n]);
        }
        args.extend(["engine", "--eval", "nnue"]);
        let lines = session(
            &args,
            "newgame pillarz\nposition startpos moves a1+b2 d4+e5\ngo depth 3\nisready\n",
        );
        lines
            .into_iter()
            .find(|l| l.starts_with("bestmove "))
            .expect("a bestmove line")
    };
    let trained = search(Some(net.to_str().unwrap()));
    assert!(trained.contains(" score "), "{trained}");
    assert_ne!(trained, search(None));
}

#[test]
fn bad_input_is_refused_with_a_usage_error() {
    let junk = temp("junk.bin");
    std::fs::write(&junk, b"not a training file").unwrap();
    let o = run(&[
        "nnue",
        "train",
        "--data",
        junk.to_str().unwrap(),
        "--out",
        "/dev/null",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not a pillarz training file"),
        "{}",
        text(&o.stderr)
    );

    let o = run(&["--network", junk.to_str().unwrap(), "bench"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not a pillarz network"),
        "{}",
        text(&o.stderr)
    );

    let o = run(&["nnue", "gen", "--limit", "100", "--out", "/dev/null"]);
    assert_eq!(o.status.code(), Some(2), "a time limit would not reproduce");
}
