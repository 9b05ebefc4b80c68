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

#[test]
fn stop_ends_an_infinite_search_with_a_bestmove() {
    let mut child = Command::new(BIN)
        .arg("engine")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "position startpos moves a1+b2 d4+e5\ngo infinite").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    writeln!(stdin, "isready").unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(
        line.trim(),
        "readyok",
        "isready is answered while searching"
    );
    writeln!(stdin, "stop").unwrap();
    let best = loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the engine went away"
        );
        if line.starts_with("bestmove ") {
            break line.clone();
        }
    };
    assert!(!best.contains("bestmove none"));
    writeln!(stdin, "quit").unwrap();
    assert!(child.wait().unwrap().success());
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
