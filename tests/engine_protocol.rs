//! The engine protocol end to end: the real binary driven through stdin/stdout, and a match
//! that drives a second copy of it through `cmd:`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use pillarz::rules::{AnyRecord, GameKind, Variants};

#[path = "common/engine_session.rs"]
mod engine_session;

const BIN: &str = env!("CARGO_BIN_EXE_pillarz");

/// Runs `pillarz engine` with `input` piped in; returns its output lines.
fn session(input: &str) -> Vec<String> {
    engine_session::session(&["engine"], input)
}

fn bestmove(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .find(|l| l.starts_with("bestmove "))
        .unwrap_or_else(|| panic!("no bestmove in {lines:?}"))
        .split_whitespace()
        .collect()
}

#[test]
fn every_game_answers_a_legal_bestmove_with_score_and_pv() {
    for (game, moves) in [
        ("pillarz", "a1+b2 d4+e5"),
        ("pilastri", ""),
        ("pyrga", ""),
        ("alcazar", ""),
    ] {
        let lines = session(&format!(
            "newgame {game}\nposition startpos moves {moves}\ngo depth 3\nisready\n"
        ));
        assert!(lines.contains(&"readyok".to_string()), "{lines:?}");
        let words = bestmove(&lines);
        let mut record =
            AnyRecord::new(game.parse::<GameKind>().unwrap(), Variants::NONE, None).unwrap();
        for mv in moves.split_whitespace() {
            record.play(mv).unwrap();
        }
        record
            .check(words[1])
            .unwrap_or_else(|e| panic!("{game}: {} is not legal: {e}", words[1]));
        assert_eq!(words[2], "score");
        assert!(["value", "win", "loss"].contains(&words[3]));
        let depth = words.iter().position(|w| *w == "depth").unwrap();
        assert_eq!(words[depth + 1], "3");
        let pv = words.iter().position(|w| *w == "pv").unwrap();
        assert_eq!(words[pv + 1], words[1], "the line starts with the move");
    }
}

#[test]
fn a_won_position_is_reported_as_proven_and_a_finished_one_has_no_move() {
    // p2's pawn on c3 (level 2) can step onto the level-3 square b3.
    let lines = session("position 00000/00000/032o0x0/00000/0o000x0 2\ngo depth 2\n");
    let words = bestmove(&lines);
    assert_eq!(&words[1..5], &["c3-b3", "score", "win", "1"]);
    let lines = session("position 00000o/0000o0/00000/44400/0x0x200 1\ngo depth 2\n");
    assert_eq!(&bestmove(&lines)[1..5], &["none", "score", "loss", "0"]);
}

#[test]
fn bad_commands_get_an_error_line_and_the_session_goes_on() {
    let lines = session("fly\nnewgame chess\nposition 99999\ngo depth x\nisready\n");
    let errors: Vec<&String> = lines.iter().filter(|l| l.starts_with("error ")).collect();
    assert_eq!(errors.len(), 4, "{lines:?}");
    assert_eq!(lines.last().unwrap(), "readyok");
}

/// A running `pillarz engine` whose output lines arrive on a channel, so a test can wait for
/// one with a deadline instead of hanging with the engine.
struct Live {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Live {
    fn start() -> Live {
        let mut child = Command::new(BIN)
            .arg("engine")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Live {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The first line starting with `prefix` within 30 s (a hang fails the test), skipping
    /// `info` lines only.
    fn expect(&self, prefix: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("no line starting with {prefix:?}: {e}"));
            if line.starts_with(prefix) {
                return line;
            }
            assert!(line.starts_with("info "), "{line:?} before {prefix:?}");
        }
    }

    /// The engine leaves by itself within 30 s, successfully.
    fn expect_exit(mut self) {
        for _ in 0..3000 {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{status}");
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the engine did not leave");
    }
}

/// A test that fails leaves no engine searching.
impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn stop_ends_an_infinite_search_with_a_bestmove() {
    let mut engine = Live::start();
    engine.send(b"position startpos moves a1+b2 d4+e5\ngo infinite\n");
    std::thread::sleep(std::time::Duration::from_millis(300));
    engine.send(b"isready\n");
    assert_eq!(
        engine
            .lines
            .recv_timeout(std::time::Duration::from_secs(30)),
        Ok("readyok".to_string()),
        "isready is answered while searching"
    );
    engine.send(b"stop\n");
    let best = engine.expect("bestmove ");
    assert!(!best.contains("bestmove none"), "{best}");
    engine.send(b"quit\n");
    engine.expect_exit();
}

#[test]
fn a_match_drives_another_binary_through_the_protocol() {
    let out = Command::new(BIN)
        .args([
            "match",
            "pyrga",
            "engine:20",
            &format!("cmd:{BIN}@20"),
            "--games",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("2 games"), "{text}");
    let bad = Command::new(BIN)
        .args([
            "match",
            "pyrga",
            "engine:20",
            "cmd:/nonexistent/engine",
            "--games",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot start"));
}

/// `match --verbose` prints each game's moves: they replay, in the rules' notation, to a
/// finished game of the length the line states, and the two games of a pair open alike.
#[test]
fn a_verbose_match_prints_games_that_replay() {
    let out = Command::new(BIN)
        .args([
            "match",
            "pillarz",
            "greedy",
            "random",
            "--games",
            "2",
            "--verbose",
            "--seed",
            "7",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let games: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("game "))
        .map(|line| {
            let (head, moves) = line.split_once(" plies: ").expect("moves after the plies");
            let plies: usize = head.rsplit(' ').next().unwrap().parse().unwrap();
            let moves: Vec<&str> = moves.split_whitespace().collect();
            assert_eq!(moves.len(), plies, "{line}");
            let mut record = AnyRecord::new(GameKind::Pillarz, Variants::NONE, None).unwrap();
            for mv in &moves {
                record
                    .play(mv)
                    .unwrap_or_else(|e| panic!("{mv} in {line}: {e}"));
            }
            assert!(record.outcome().is_some(), "unfinished: {line}");
            moves
        })
        .collect();
    assert_eq!(games.len(), 2, "{text}");
    assert_eq!(games[0][..2], games[1][..2], "one opening a pair");
}

/// A command sent while a search with a bound too large to reach runs waits for it, but a
/// `stop` sent after that command still ends the search (the engine read no more input while
/// it waited), and so does a `quit`.
#[test]
fn stop_and_quit_reach_a_search_a_waiting_command_is_stuck_behind() {
    let mut engine = Live::start();
    engine.send(b"go nodes 18446744073709551615\n");
    std::thread::sleep(std::time::Duration::from_millis(200));
    engine.send(b"position startpos moves a1+b2 d4+e5\nstop\n");
    let best = engine.expect("bestmove ");
    assert!(!best.contains("bestmove none"), "{best}");
    // The position was set after the search (no `error` line came): a new search answers.
    engine.send(b"go depth 1\n");
    let best = engine.expect("bestmove ");
    assert!(!best.contains("bestmove none"), "{best}");
    engine.send(b"isready\n");
    engine.expect("readyok");

    // A `stop` queued behind other waiting commands still reaches the search.
    engine.send(b"go nodes 18446744073709551615\n");
    std::thread::sleep(std::time::Duration::from_millis(200));
    engine.send(b"position startpos\nposition startpos moves a1+b2\nstop\nisready\n");
    engine.expect("bestmove ");
    engine.expect("readyok");

    // A `quit` too.
    engine.send(b"go depth 64\n");
    std::thread::sleep(std::time::Duration::from_millis(200));
    engine.send(b"newgame pyrga\nquit\n");
    engine.expect("bestmove ");
    engine.expect_exit();
}

/// A line that is not UTF-8, or longer than the engine reads, is refused with an error line
/// and the session goes on.
#[test]
fn a_line_not_utf8_or_endless_is_refused_and_the_session_goes_on() {
    let mut engine = Live::start();
    engine.send(b"go depth \xff\n");
    assert_eq!(engine.expect("error "), "error a line that is not UTF-8");
    let mut long = vec![b'x'; 3 << 20];
    long.push(b'\n');
    engine.send(&long);
    assert_eq!(engine.expect("error "), "error a line over 1048576 bytes");
    engine.send(b"isready\nquit\n");
    engine.expect("readyok");
    engine.expect_exit();
}

/// `pillarz match pyrga engine:20 cmd:/bin/sh@20` in a directory whose file `engine` is the
/// shell script `script` (`cmd:` runs `<path> engine`: the shell runs the script, which need
/// not be an executable written by this test, so never "text file busy"), misbehaving: the
/// match must end within `deadline` with exit 1, saying `why`.
fn assert_match_fails(script: &str, deadline: std::time::Duration, why: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("engine"), format!("{script}\n")).unwrap();
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .args(["match", "pyrga", "engine:20", "cmd:/bin/sh@20"])
        .args(["--games", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        text
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the match still runs after {deadline:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let err = err.join().unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains(why), "{err}");
}

/// An engine that chatters without ever answering gets the move's deadline (think time plus
/// 10 s), not a fresh one per line it writes.
#[test]
fn a_match_gives_up_on_an_engine_that_chatters_without_answering() {
    assert_match_fails(
        "while true; do echo 'info depth 1'; sleep 0.1; done",
        std::time::Duration::from_secs(40),
        "no bestmove within",
    );
}

/// An engine that writes a line without end is refused once the line passes 64 KiB, not
/// buffered until the deadline.
#[test]
fn a_match_refuses_an_engine_line_without_end() {
    assert_match_fails(
        "exec tr -d '\\n' < /dev/zero",
        std::time::Duration::from_secs(40),
        "wrote a line over 65536 bytes",
    );
}
