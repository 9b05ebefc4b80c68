//! The named "win in N" suites: each position is proven by an exhaustive AND/OR search written
//! here (sharing nothing with the engine), and the engine must find the win at depth N (a few
//! plies more in games whose search reduces late moves), reporting exactly N.

use std::path::Path;

mod common;
use common::prover::forced;

use pillarz::engine::{Caps, FrozenClock, Limit, Params, Score, Searchable, search};
use pillarz::rules::{GameKind, Variants, alcazar, pilastri, pillarz as pz, pyrga};

fn check_suite<G: Searchable>(game: GameKind) -> usize {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/win_in/{game}.txt"));
    let text = std::fs::read_to_string(file).unwrap();
    let mut count = 0;
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let fields: Vec<&str> = line.split(';').map(str::trim).collect();
        let [name, plies, position] = fields[..] else {
            panic!("bad line {line:?}")
        };
        let n: u32 = plies.parse().unwrap();
        let pos = G::parse_position(position, Variants::NONE).unwrap();
        let me = pos.turn();
        assert!(
            forced(&pos, me, n, &mut Vec::new()),
            "{name}: no forced win in {n}"
        );
        assert!(
            n == 1 || !forced(&pos, me, n - 1, &mut Vec::new()),
            "{name}: a shorter win exists"
        );
        // A selective search (late-move reductions) may need a few more nominal plies to
        // see a win n plies away; the distance it reports must still be the shortest.
        let depth = if pos.prunes() { n + 6 } else { n };
        let report = search(
            &pos,
            &[],
            &Params {
                limit: Limit::Depth(depth),
                caps: Caps::NONE,
                multipv: 1,
                clock: &FrozenClock,
                stop: None,
                tt_bits: 18,
                contempt: 0,
            },
        );
        assert_eq!(report.score, Score::WinIn(n), "{name}");
        let best = report.best().unwrap();
        let mut after = pos.clone();
        after.play_unchecked(&best);
        assert!(
            forced(&after, me, n - 1, &mut vec![pos.repetition_key()]),
            "{name}: {best} does not keep the win"
        );
        assert_eq!(
            report.lines[0].pv.len() as u32,
            n,
            "{name}: the pv plays the win out"
        );
        count += 1;
    }
    count
}

#[test]
fn pillarz_wins() {
    assert!(check_suite::<pz::Position>(GameKind::Pillarz) >= 5);
}

#[test]
fn pilastri_wins() {
    assert!(check_suite::<pilastri::Position>(GameKind::Pilastri) >= 5);
}

#[test]
fn pyrga_wins() {
    assert!(check_suite::<pyrga::Position>(GameKind::Pyrga) >= 5);
}

#[test]
fn alcazar_wins() {
    assert!(check_suite::<alcazar::Position>(GameKind::Alcazar) >= 5);
}
