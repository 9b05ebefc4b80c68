//! The named "win in N" suites: each position is proven by an exhaustive AND/OR search written
//! here (sharing nothing with the engine), and the engine must find the win at depth N.

use std::path::Path;

use pillarz::engine::{Caps, FrozenClock, Limit, Params, Score, Searchable, search};
use pillarz::rules::{
    Game, GameKind, MoveList, Player, Variants, Winner, alcazar, pilastri, pillarz as pz, pyrga,
};

/// Whether `me` can force a win within `plies` plies from `pos`; `path` holds the repetition
/// keys of the positions before `pos` (Alcazar never repeats one).
fn forced<G: Game>(pos: &G, me: Player, plies: u32, path: &mut Vec<u64>) -> bool {
    if let Some(o) = pos.outcome() {
        return o.winner == Winner::Player(me);
    }
    let mut moves = MoveList::new();
    pos.legal_moves(&mut moves);
    path.push(pos.repetition_key());
    let children: Vec<G> = moves
        .iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            child
        })
        .filter(|c| !G::FORBIDS_REPETITION || !path.contains(&c.repetition_key()))
        .collect();
    let result = if children.is_empty() {
        // Every move repeats: the side to move has none and loses.
        pos.turn() != me
    } else if plies == 0 {
        false
    } else if pos.turn() == me {
        children.iter().any(|c| forced(c, me, plies - 1, path))
    } else {
        children.iter().all(|c| forced(c, me, plies - 1, path))
    };
    path.pop();
    result
}

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
        let report = search(
            &pos,
            &[],
            &Params {
                limit: Limit::Depth(n),
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
