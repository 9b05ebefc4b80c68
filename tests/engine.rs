//! The engine's contract: determinism, limits and caps, multi-PV, finished positions, and the
//! bench fingerprint.

use std::cell::Cell;
use std::sync::atomic::AtomicBool;

use pillarz::engine::bench::run_all;
use pillarz::engine::limits::{CHECK_EVERY, MAX_PLY};
use pillarz::engine::{
    Caps, Clock, Eval, FrozenClock, Limit, Params, Report, Score, Searchable, search,
};
use pillarz::rules::{Game, MoveList, Variants, alcazar, pilastri, pillarz as pz, pyrga};

fn params(limit: Limit) -> Params<'static> {
    Params {
        limit,
        caps: Caps::NONE,
        multipv: 1,
        clock: &FrozenClock,
        stop: None,
        tt_bits: 16,
        contempt: 0,
        plies_to_limit: None,
    }
}

fn start<G: Searchable>() -> G {
    G::start(Variants::NONE)
}

fn same_twice<G: Searchable>(limit: Limit) {
    let pos = start::<G>();
    let a: Report<G::Move> = search(&pos, &[], &params(limit));
    let b = search(&pos, &[], &params(limit));
    assert_eq!(a, b);
    let mut legal = MoveList::new();
    pos.legal_moves(&mut legal);
    assert!(legal.contains(&a.best().unwrap()));
}

#[test]
fn fixed_depth_and_node_searches_are_deterministic() {
    same_twice::<pz::Position>(Limit::Depth(3));
    same_twice::<pilastri::Position>(Limit::Nodes(30_000));
    same_twice::<pyrga::Position>(Limit::Depth(4));
    same_twice::<alcazar::Position>(Limit::Nodes(30_000));
}

#[test]
fn the_node_limit_and_the_caps_hold() {
    let pos = start::<pilastri::Position>();
    let report = search(&pos, &[], &params(Limit::Nodes(10_000)));
    assert!(
        report.nodes <= 10_000 + CHECK_EVERY,
        "{} nodes",
        report.nodes
    );
    let mut capped = params(Limit::Depth(40));
    capped.caps = Caps {
        max_depth: 3,
        max_nodes: u64::MAX,
        max_time_ms: u64::MAX,
    };
    assert_eq!(search(&pos, &[], &capped).depth, 3);
    let mut capped = params(Limit::Nodes(u64::MAX));
    capped.caps.max_nodes = 5_000;
    assert!(search(&pos, &[], &capped).nodes <= 5_000 + CHECK_EVERY);
}

/// A clock that advances one millisecond every time it is read: movetime is enforced by the
/// engine itself, deterministically.
struct TickingClock(Cell<u64>);

impl Clock for TickingClock {
    fn elapsed_ms(&self) -> u64 {
        self.0.set(self.0.get() + 1);
        self.0.get()
    }
}

#[test]
fn movetime_is_enforced_through_the_clock_it_is_given() {
    let pos = start::<alcazar::Position>();
    let clock = TickingClock(Cell::new(0));
    let mut p = params(Limit::MovetimeMs(40));
    p.clock = &clock;
    let report = search(&pos, &[], &p);
    assert!(report.best().is_some());
    // The clock is read every CHECK_EVERY nodes and after every iteration.
    assert!(report.nodes <= 41 * CHECK_EVERY, "{} nodes", report.nodes);
}

#[test]
fn a_stop_flag_ends_the_search() {
    let stop = AtomicBool::new(true);
    let pos = start::<pz::Position>();
    let mut p = params(Limit::Depth(30));
    p.stop = Some(&stop);
    let report = search(&pos, &[], &p);
    assert!(report.nodes <= CHECK_EVERY * 2);
    assert!(report.best().is_some(), "still names a legal move");
}

#[test]
fn multipv_reports_distinct_moves_best_first() {
    let pos = pz::Position::parse_position("00000/00o00x0/00000/00x00o0/00000 1", Variants::NONE)
        .unwrap();
    let mut p = params(Limit::Depth(3));
    p.multipv = 4;
    let report = search(&pos, &[], &p);
    assert_eq!(report.lines.len(), 4);
    let mut moves: Vec<_> = report.lines.iter().map(|l| l.mv).collect();
    moves.dedup();
    assert_eq!(moves.len(), 4);
    let value = |s: Score| match s {
        Score::Value(v) => i64::from(v),
        Score::WinIn(n) => 10_000_000 - i64::from(n),
        Score::LossIn(n) => -10_000_000 + i64::from(n),
        Score::Draw => 0,
    };
    for pair in report.lines.windows(2) {
        assert!(value(pair[0].score) >= value(pair[1].score));
    }
    for line in &report.lines {
        assert_eq!(line.pv[0], line.mv);
    }
    // The best line of a multi-PV search scores what a single-line search says — exactly so
    // in a position searched without pruning (with pruning, the later moves searched with a
    // full window instead of a null one can score differently): a late Pyrga one.
    let mut pos = start::<pyrga::Position>();
    while pos.prunes() {
        let mut moves = MoveList::new();
        pos.legal_moves(&mut moves);
        pos.play_unchecked(&moves[0]);
    }
    assert!(pos.outcome().is_none());
    let mut p = params(Limit::Depth(4));
    p.multipv = 3;
    let multi = search(&pos, &[], &p);
    assert_eq!(multi.lines.len(), 3);
    assert_eq!(
        search(&pos, &[], &params(Limit::Depth(4))).score,
        multi.score
    );
}

/// A search stopped before its first iteration finished reports the moves it searched and
/// no other: a move it never reached has no score (it was reported as lost in 4,294,967,295
/// plies, and the levels that pick among the lines near the best could pick such a move).
/// The limits are looked at every `CHECK_EVERY` nodes, so a node limit stops a search halfway
/// through depth 1 only where depth 1 takes more: as in this pillarz position, full of threats
/// (3,066 nodes; the most of 3,000 random games' positions).
#[test]
fn an_unfinished_first_iteration_reports_only_moves_it_searched() {
    let pos = pz::Position::parse_position("00011/22210/022x31o/01o1x10/20220 1", Variants::NONE)
        .unwrap();
    let mut legal = MoveList::new();
    pos.legal_moves(&mut legal);
    let mut p = params(Limit::Depth(1));
    // Every move a line: more than depth 1 can search before the limit stops it.
    p.multipv = legal.len();
    let whole = search(&pos, &[], &p);
    assert!(whole.nodes > CHECK_EVERY, "{} nodes", whole.nodes);
    assert_eq!(whole.lines.len(), legal.len());
    p.limit = Limit::Nodes(1);
    let report = search(&pos, &[], &p);
    assert_eq!(report.depth, 0, "stopped within depth 1");
    assert!(
        report.lines.len() > 1 && report.lines.len() < whole.lines.len(),
        "some moves searched, not all: {}",
        report.lines.len()
    );
    let mut moves: Vec<String> = report.lines.iter().map(|l| l.mv.to_string()).collect();
    moves.sort_unstable();
    moves.dedup();
    assert_eq!(moves.len(), report.lines.len(), "distinct moves");
    for pair in report.lines.windows(2) {
        assert!(
            pair[0].score.ordinal() >= pair[1].score.ordinal(),
            "best first"
        );
    }
    for line in &report.lines {
        assert!(legal.contains(&line.mv), "{}", line.mv);
        match line.score {
            Score::WinIn(n) | Score::LossIn(n) => {
                assert!(n <= MAX_PLY, "{} {:?}", line.mv, line.score)
            }
            Score::Value(_) | Score::Draw => {}
        }
        // Each was searched to depth 1 with a full window: the complete search agrees.
        let same = whole.lines.iter().find(|l| l.mv == line.mv);
        if let Some(same) = same {
            assert_eq!(same.score, line.score, "{}", line.mv);
        }
    }
}

#[test]
fn a_finished_position_has_no_move_and_a_proven_score() {
    let trapped =
        pz::Position::parse_position("00000o/0000o0/00000/44400/0x0x200 1", Variants::NONE)
            .unwrap();
    let report = search(&trapped, &[], &params(Limit::Depth(5)));
    assert!(report.lines.is_empty());
    assert_eq!(report.score, Score::LossIn(0));
    let won = pz::Position::parse_position("00000/00000/0o003x0/00o210/0x0000 2", Variants::NONE)
        .unwrap();
    assert_eq!(
        search(&won, &[], &params(Limit::Depth(5))).score,
        Score::LossIn(0)
    );
}

#[test]
fn alcazar_search_respects_the_game_history() {
    // Red steps b8-d8-b8 while Green steps h2-f2: Green stepping back to h2 would recreate
    // the start position, which the no-repetition rule forbids.
    let mut pos = alcazar::Position::start(Variants::NONE);
    let mut history = Vec::new();
    for mv in ["Kd8", "Kf2", "Kb8"] {
        history.push(pos.repetition_key());
        pos = pos.play(&mv.parse().unwrap()).unwrap();
    }
    let mut p = params(Limit::Depth(3));
    p.multipv = 64;
    let report = search(&pos, &history, &p);
    assert!(!report.lines.is_empty());
    for line in &report.lines {
        assert_ne!(line.mv.to_string(), "Kh2");
        let mut child = pos;
        child.play_unchecked(&line.mv);
        assert!(
            !history.contains(&child.repetition_key()),
            "{} repeats",
            line.mv
        );
    }
    // Without the history the same move is fine.
    let free = search(&pos, &[], &p);
    assert!(free.lines.iter().any(|l| l.mv.to_string() == "Kh2"));
}

/// The bench's node count is the search's fingerprint: a pure refactor must not change it.
/// (A deliberate change to the search or an evaluation updates this number in the same commit.)
#[test]
fn bench_fingerprint() {
    let nodes = |eval| run_all(eval, |_| Ok::<_, std::convert::Infallible>(()));
    assert_eq!(nodes(None), Ok(BENCH_NODES));
    // The hand-written evaluations have a fingerprint of their own (pillarz's network is the
    // default; `--eval hand` keeps the hand-written one).
    assert_eq!(nodes(Some(Eval::Hand)), Ok(BENCH_NODES_HAND));
}

const BENCH_NODES: u64 = 823_757;
const BENCH_NODES_HAND: u64 = 819_337;

/// A position with a single legal move is still analysed: a real depth, score and line, not
/// just the forced move.
#[test]
fn a_lone_legal_move_is_still_analysed() {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    let mut rng = SmallRng::seed_from_u64(7);
    let mut moves = MoveList::new();
    let lone = (0..200)
        .find_map(|_| {
            let mut pos = start::<pz::Position>();
            while pos.outcome().is_none() {
                moves.clear();
                pos.legal_moves(&mut moves);
                if moves.len() == 1 {
                    return Some(pos);
                }
                pos.play_unchecked(&moves[rng.random_range(0..moves.len())]);
            }
            None
        })
        .expect("random games reach a position with one legal move");
    let report = search(&lone, &[], &params(Limit::Depth(4)));
    assert_eq!(report.lines.len(), 1);
    assert!(report.depth >= 2, "searched only {} plies", report.depth);
    let line = &report.lines[0];
    assert!(line.pv.len() >= 2 || matches!(line.score, Score::WinIn(1)));
}

/// An engine kept between moves (a computer seat, the protocol) answers like a fresh one on a
/// fixed-depth search of a position it has seen, and remembers: the second search is cheaper.
#[test]
fn a_kept_engine_reuses_its_table() {
    let pos = pz::Position::parse_position("00000/00o00x0/00000/00x00o0/00000 1", Variants::NONE)
        .unwrap();
    let mut engine = pillarz::engine::Engine::new(16);
    let first = engine.search(&pos, &[], &params(Limit::Depth(4)));
    let again = engine.search(&pos, &[], &params(Limit::Depth(4)));
    assert!(
        again.nodes < first.nodes,
        "{} vs {}",
        again.nodes,
        first.nodes
    );
    assert_eq!(again.depth, 4);
    engine.new_game();
    let fresh = engine.search(&pos, &[], &params(Limit::Depth(4)));
    assert_eq!(fresh.nodes, first.nodes);
}

/// Every level plays a win in one when it has one (the margin never picks a lesser move over a
/// proven win), in every game.
#[test]
fn no_level_misses_a_win_in_one() {
    use pillarz::engine::any::level_choice;
    use pillarz::engine::levels::Level;
    use pillarz::rules::record::Record;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;
    fn check<G: Searchable>(position: &str) {
        let pos = G::parse_position(position, Variants::NONE).unwrap();
        for n in 1..=8 {
            for seed in 0..5 {
                let record = Record::new(pos.clone());
                let mut rng = SmallRng::seed_from_u64(seed);
                let mv = level_choice(
                    record.state(),
                    Level::of::<G>(n).unwrap(),
                    &mut rng,
                    &FrozenClock,
                )
                .unwrap();
                let mut after = pos.clone();
                after.play_unchecked(&mv);
                assert!(
                    matches!(after.outcome(), Some(o) if o.winner == pillarz::rules::Winner::Player(pos.turn())),
                    "level {n} played {mv} in {position}"
                );
            }
        }
    }
    check::<pz::Position>("2o0x310/23431/21x430o/10320/03122 2");
    check::<pilastri::Position>(
        "-,-,-,x,-,-/-,o,-,oooxoxxoox,x,-/oxoxo,-,o,-,oxoxoxx,xo/-,-,-,-,x,-/oxo,-,-,x,-,-/-,-,-,-,xox,- 2",
    );
    check::<pyrga::Position>("sT>C,St<,t<,-/s,tv,tvC,-/C,Sc,T^c,sC/sT>c,ST>,ST<c,st<C 1 Cc2");
    check::<alcazar::Position>("b1,b5,b7,d5,d9,e6,f1,f9 b8 h6 2 b1");
}

/// Levels 5–7 cap depth and nodes (Pyrga: depth): on a clock that never moves they still stop,
/// having reached their depth or searched their node budget (not far less, not more), in every
/// game; each searches more than the one below.
#[test]
fn the_middle_levels_stop_at_their_depth_or_node_caps() {
    use pillarz::engine::levels::Level;
    fn check<G: Searchable>() {
        let pos = start::<G>();
        let mut below = 0;
        for n in 5..=7 {
            let level = Level::of::<G>(n).unwrap();
            let mut p = params(level.limit());
            p.caps = level.caps();
            let report = search(&pos, &[], &p);
            assert!(
                report.nodes <= level.max_nodes.saturating_add(CHECK_EVERY),
                "level {n} searched {} nodes for a budget of {}",
                report.nodes,
                level.max_nodes
            );
            assert!(
                report.depth == level.max_depth || report.nodes > level.max_nodes / 2,
                "level {n} stopped at depth {} after {} nodes",
                report.depth,
                report.nodes
            );
            assert!(
                report.nodes > below,
                "level {n} searched no more than level {}",
                n - 1
            );
            below = report.nodes;
        }
    }
    check::<pz::Position>();
    check::<pilastri::Position>();
    check::<pyrga::Position>();
    check::<alcazar::Position>();
}

/// A level with a margin plays moves within its margin of the best, in the game's units (Pyrga
/// counts four times pillarz's, so level 1 there chooses among moves 1,000 apart), and no move
/// outside it.
#[test]
fn a_level_chooses_within_its_margin() {
    use pillarz::engine::any::level_choice;
    use pillarz::engine::levels::Level;
    use pillarz::rules::record::Record;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;
    fn check<G: Searchable>(position: &str) -> (i64, Vec<i64>) {
        let pos = G::parse_position(position, Variants::NONE).unwrap();
        let level = Level::of::<G>(1).unwrap();
        let mut p = params(Limit::Depth(level.max_depth));
        p.multipv = 8;
        let report = search(&pos, &[], &p);
        let score_of = |mv: &G::Move| {
            let line = report.lines.iter().find(|l| &l.mv == mv);
            line.expect("a choice among the eight best").score.ordinal()
        };
        let best = report.lines[0].score.ordinal();
        let margin = i64::from(level.margin);
        let chosen: Vec<i64> = (0..40)
            .map(|seed| {
                let record = Record::new(pos.clone());
                let mut rng = SmallRng::seed_from_u64(seed);
                let mv = level_choice(record.state(), level, &mut rng, &FrozenClock).unwrap();
                score_of(&mv)
            })
            .collect();
        for &score in &chosen {
            assert!(
                score >= best - margin,
                "{score} against {best} in {position}"
            );
        }
        (best, chosen)
    }
    let (best, chosen) = check::<pyrga::Position>("-,-,-,-/-,-,-,-/-,S,t^,-/-,-,-,- 1 Tc2N");
    let unscaled = i64::from(Level::of::<pz::Position>(1).unwrap().margin);
    assert!(
        chosen.iter().any(|&s| s < best - unscaled),
        "Pyrga's level 1 chooses beyond pillarz's margin: {chosen:?} (best {best})"
    );
    check::<pz::Position>("00000/00o00x0/00000/00x00o0/00000 1");
}

/// The cheap win-on-the-spot test the search trusts only ever names a legal move that wins, in
/// every game, on positions of seeded random games; and in pillarz and Alcazar it finds the wins
/// it is meant to find (pillarz: a step to the top; Alcazar: a step into the fortress, a knight
/// or a wall that walls the other knight in). Wins by leaving the opponent without a move are
/// the search's to find.
#[test]
fn winning_moves_are_moves_that_win() {
    use pillarz::rules::Winner;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    /// `meant`: whether a winning move is of the kind the game's test looks for.
    fn check<G: Searchable>(games: u64, meant: impl Fn(&G, &G) -> bool) -> usize {
        let mut rng = SmallRng::seed_from_u64(5);
        let mut moves = MoveList::new();
        let mut wins = 0;
        for _ in 0..games {
            let mut pos = start::<G>();
            while pos.outcome().is_none() {
                moves.clear();
                pos.legal_moves(&mut moves);
                let child = |mv: &G::Move| {
                    let mut child = pos.clone();
                    child.play_unchecked(mv);
                    child
                };
                let wins_now = |c: &G| matches!(c.outcome(), Some(o) if o.winner == Winner::Player(pos.turn()));
                match pos.winning_move() {
                    Some(mv) => {
                        assert!(moves.contains(&mv), "{pos}: {mv} is not legal");
                        assert!(wins_now(&child(&mv)), "{pos}: {mv} does not win");
                        wins += 1;
                    }
                    None => assert!(
                        !moves
                            .iter()
                            .map(child)
                            .any(|c| wins_now(&c) && meant(&pos, &c)),
                        "{pos}: a win was missed"
                    ),
                }
                pos.play_unchecked(&moves[rng.random_range(0..moves.len())]);
            }
        }
        wins
    }
    use pillarz::rules::Termination;
    let by =
        |t: Termination| move |_: &_, c: &_| Game::outcome(c).is_some_and(|o| o.termination == t);
    assert!(check::<pz::Position>(200, by(Termination::Goal)) > 50);
    assert!(
        check::<alcazar::Position>(100, |_, c| {
            c.outcome()
                .is_some_and(|o| matches!(o.termination, Termination::Fortress | Termination::Trap))
        }) > 50
    );
    check::<pilastri::Position>(20, |_, _| false);
    check::<pyrga::Position>(50, |_, _| false);
}
