//! Board pictures: well-formed SVG for many random positions of every game, and snapshots of a
//! few fixed ones (set PILLARZ_UPDATE_SNAPSHOTS=1 to rewrite them after a deliberate change;
//! look at them rendered to PNG before committing).

use std::path::Path;

use pillarz::rules::{AnyRecord, GameKind, Variant, Variants};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn check_svg(svg: &str, context: &str) {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{context}: {e}\n{svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg", "{context}");
    assert!(root.attribute("viewBox").is_some(), "{context}");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(
        texts.contains(&"a") && texts.contains(&"1"),
        "{context}: coordinates on the edge"
    );
}

/// Pilastri's notation reaches h8 on every board; a `last` move off a 6×6 board is not drawn
/// (its coordinates once wrapped around, and a debug build panicked).
#[test]
fn a_last_move_off_the_board_is_not_marked() {
    let record = AnyRecord::new(GameKind::Pilastri, Variants::NONE, None).unwrap();
    let unmarked = pillarz::svg::render(record.state(), None);
    for last in ["h8-h7", "a1-a7", "g1-a1", "a8-a1"] {
        assert_eq!(
            pillarz::svg::render(record.state(), Some(last)),
            unmarked,
            "{last}"
        );
    }
    let marked = pillarz::svg::render(record.state(), Some("a1-a2"));
    assert_ne!(marked, unmarked);
    check_svg(&marked, "a1-a2");
}

#[test]
fn random_positions_of_every_game_are_well_formed_svg() {
    let mut rng = SmallRng::seed_from_u64(9);
    let setups = [
        (GameKind::Pillarz, Variants::NONE),
        (GameKind::Pilastri, Variants::NONE),
        (
            GameKind::Pilastri,
            Variants::NONE.with(Variant::Size8).with(Variant::Jumpers),
        ),
        (GameKind::Pyrga, Variants::NONE),
        (GameKind::Alcazar, Variants::NONE),
    ];
    for (kind, variants) in setups {
        for game in 0..40 {
            let mut record = AnyRecord::new(kind, variants, None).unwrap();
            check_svg(
                &pillarz::svg::render(record.state(), None),
                &format!("{kind} start"),
            );
            let plies = rng.random_range(1..80);
            for _ in 0..plies {
                let moves = record.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.random_range(0..moves.len())].clone();
                record.play(&mv).unwrap();
                let svg = pillarz::svg::render(record.state(), Some(&mv));
                check_svg(&svg, &format!("{kind} game {game}: {}", record.position()));
            }
        }
    }
}

#[test]
fn snapshots() {
    let cases = [
        (
            "pillarz",
            "00100/00o120/0230x0/0x0041/001o00 2",
            Some("c2-d3^d2"),
        ),
        (
            "pilastri",
            "-,x,-,xoo,-,x/-,oxooox,-,-,-,o/oxx,-,-,-,-,xox/-,-,xo,oxox,-,-/o,-,oxxoox,-,o,-/-,-,x,-,xox,- 1",
            None,
        ),
        (
            "pyrga",
            "S,T>c,s,-/St^C,sTvc,T<,-/Stv,t^,-,-/ST>c,st<C,St<,T<c 1 Cb4",
            None,
        ),
        (
            "alcazar",
            "b5,c6,d7,d9,e2,f3,g4,h5 b8 h2 2 d9",
            Some("e8d9"),
        ),
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/svg");
    for (game, position, last) in cases {
        let kind: GameKind = game.parse().unwrap();
        let record = AnyRecord::new(kind, Variants::NONE, Some(position)).unwrap();
        let svg = pillarz::svg::render(record.state(), last);
        let file = dir.join(format!("{game}.svg"));
        if std::env::var_os("PILLARZ_UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&file, &svg).unwrap();
        }
        let expected = std::fs::read_to_string(&file).unwrap();
        assert!(
            svg == expected,
            "{game}: the picture changed (see {})",
            file.display()
        );
    }
}
