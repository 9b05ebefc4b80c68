//! The named "win in N" suites: each position is proven by an exhaustive AND/OR search written
//! here (sharing nothing with the engine), and the engine must find the win at depth N (a few
//! plies more in games whose search reduces late moves), reporting exactly N. With the
//! service's ply cap (`Params::plies_to_limit`) N plies away or farther the win stands; one ply
//! nearer there is no win (the prover shows no win in N - 1, so the defender reaches the cap),
//! nor, after the winning move, a loss for the defender.

use std::path::Path;

mod common;
use common::prover::forced;

use pillarz::engine::{Engine, FrozenClock, Limit, Params, Score, Searchable, search};
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
        let report = search(&pos, &[], &params(depth, None));
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
        check_limit(&pos, &after, n, depth, name);
        count += 1;
    }
    count
}

fn params(depth: u32, plies_to_limit: Option<u32>) -> Params<'static> {
    Params {
        tt_bits: 18,
        plies_to_limit,
        ..Params::analysis(Limit::Depth(depth), &FrozenClock)
    }
}

/// The win in `n` from `pos` (`after`: once its winning move is played) against a ply cap.
fn check_limit<G: Searchable>(pos: &G, after: &G, n: u32, depth: u32, name: &str) {
    let at = search(pos, &[], &params(depth, Some(n)));
    assert_eq!(at.score, Score::WinIn(n), "{name}: a cap {n} plies away");
    let short = search(pos, &[], &params(depth, Some(n - 1)));
    assert!(
        !matches!(short.score, Score::WinIn(_) | Score::LossIn(_)),
        "{name}: a cap {} plies away, yet {:?}",
        n - 1,
        short.score
    );
    if n == 1 {
        // At the cap the game is over: a draw, with no move to play.
        assert_eq!(short.score, Score::Draw, "{name}");
        assert!(short.lines.is_empty(), "{name}");
    }
    // An engine keeps its table between searches: what it learned without the cap (or with
    // it farther off) must not pass for what holds near it, nor the other way round.
    let mut engine = Engine::<G>::new(18);
    let first = engine.search(pos, &[], &params(depth, None)).score;
    assert_eq!(first, Score::WinIn(n), "{name}");
    let kept = engine.search(pos, &[], &params(depth, Some(n - 1))).score;
    assert!(
        !matches!(kept, Score::WinIn(_) | Score::LossIn(_)),
        "{name}: from the table, {kept:?}"
    );
    let again = engine.search(pos, &[], &params(depth, Some(n))).score;
    assert_eq!(
        again,
        Score::WinIn(n),
        "{name}: after a search with the cap nearer"
    );
    if n >= 2 {
        // The defender, a cap away that it can reach, is not lost.
        let history = [pos.repetition_key()];
        let defended = search(after, &history, &params(depth, Some(n - 2))).score;
        assert!(
            !matches!(defended, Score::LossIn(_) | Score::WinIn(_)),
            "{name}: the defender a cap {} plies away, yet {defended:?}",
            n - 2
        );
        let lost = search(after, &history, &params(depth, Some(n - 1))).score;
        assert_eq!(
            lost,
            Score::LossIn(n - 1),
            "{name}: the defender, a cap {} plies away",
            n - 1
        );
    }
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
