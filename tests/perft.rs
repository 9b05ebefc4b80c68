//! Perft against the data files in `tests/data/perft/`: one generic test for every game.

use std::path::Path;
use std::process::Command;

use pillarz::rules::perft::{perft, perft_every_leaf};
use pillarz::rules::{
    AnyRecord, Game, GameKind, Variants, alcazar, pilastri, pillarz as pz, pyrga,
};

struct Case {
    game: GameKind,
    variants: Vec<String>,
    position: String,
    counts: Vec<u64>,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perft");
    let mut cases = Vec::new();
    for game in GameKind::ALL {
        let text = std::fs::read_to_string(dir.join(format!("{game}.txt"))).unwrap();
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let fields: Vec<&str> = line.split(';').map(str::trim).collect();
            let [position, variants, counts] = fields[..] else {
                panic!("malformed data line {line:?}");
            };
            let variants = variants.strip_prefix("variants=").expect("variants=");
            cases.push(Case {
                game,
                variants: variants
                    .split(',')
                    .filter(|v| !v.is_empty())
                    .map(String::from)
                    .collect(),
                position: position.to_string(),
                counts: counts
                    .split_whitespace()
                    .map(|n| n.parse().unwrap())
                    .collect(),
            });
        }
    }
    assert!(
        cases.len() >= 40,
        "the data files hold {} cases",
        cases.len()
    );
    cases
}

#[test]
fn perft_matches_the_data_files() {
    for case in cases() {
        let variants = case.game.variants(&case.variants).unwrap();
        let record = AnyRecord::new(case.game, variants, Some(&case.position))
            .unwrap_or_else(|e| panic!("{}: {e}", case.position));
        assert_eq!(record.position(), case.position, "notation round trip");
        for (i, &expected) in case.counts.iter().enumerate() {
            let depth = i as u32 + 1;
            assert_eq!(
                record.perft(depth),
                expected,
                "{} {} depth {depth}",
                case.game,
                case.position
            );
        }
    }
}

/// Bulk counting at the last ply must agree with generating and playing every leaf.
#[test]
fn bulk_counting_agrees_with_every_leaf() {
    fn agree<G: Game>(position: &str, variants: Variants, counts: &[u64]) {
        let pos = G::parse_position(position, variants).unwrap();
        let depth = counts.iter().take_while(|&&n| n <= 300_000).count() as u32;
        assert_eq!(
            perft(&pos, depth, &[]),
            perft_every_leaf(&pos, depth, &[]),
            "{position} depth {depth}"
        );
    }
    for case in cases() {
        let variants = case.game.variants(&case.variants).unwrap();
        match case.game {
            GameKind::Pillarz => agree::<pz::Position>(&case.position, variants, &case.counts),
            GameKind::Pilastri => {
                agree::<pilastri::Position>(&case.position, variants, &case.counts)
            }
            GameKind::Pyrga => agree::<pyrga::Position>(&case.position, variants, &case.counts),
            GameKind::Alcazar => agree::<alcazar::Position>(&case.position, variants, &case.counts),
        }
    }
}

fn pillarz_cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_perft_prints_the_count_on_the_last_line() {
    let out = pillarz_cli(&["perft", "pilastri", "3", "--variant", "jumpers"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().last(), Some("178708"));

    let out = pillarz_cli(&[
        "perft",
        "pyrga",
        "1",
        "--position",
        "-,-,-,-/-,-,-,-/-,S,t^,-/-,-,-,- 1 Tc2N",
    ]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "9\n");
}

#[test]
fn cli_divide_lists_every_root_move_then_the_total() {
    let out = pillarz_cli(&["perft", "alcazar", "2", "--divide"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 31, "30 root moves and the total");
    let sum: u64 = lines[..30]
        .iter()
        .map(|l| l.split_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 758);
    assert_eq!(lines[30], "758");
    assert!(lines.iter().any(|l| l.starts_with("e8d9 ")));
}

#[test]
fn cli_perft_refuses_bad_input_with_exit_code_2() {
    for args in [
        &["perft", "chess", "1"][..],
        &["perft", "pillarz", "1", "--variant", "size-8"],
        &["perft", "pilastri", "1", "--variant", "huge"],
        &["perft", "pillarz", "1", "--position", "00000/00000 1"],
    ] {
        let out = pillarz_cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_finished_game_has_nothing_below_it() {
    // p1 has reached level 3 on d3; p2 would be to move.
    let won = "00000/00000/0o003x0/00o210/0x0000 2";
    let record = AnyRecord::new(GameKind::Pillarz, Variants::NONE, Some(won)).unwrap();
    assert!(record.outcome().is_some());
    assert_eq!(record.perft(1), 0);
    assert_eq!(record.perft(3), 0);
    assert_eq!(record.perft(0), 1);
}
