//! Invariants along random games of every game, driven by proptest seeds:
//! - the incremental hash equals the hash computed from scratch;
//! - parse(display(position)) == position, and parse(display(move)) == move, leniently too;
//! - `legal_moves` ⇔ `check`, also for random moves that are mostly illegal;
//! - an illegal `play` hands the position back untouched, and the position accepts a move the
//!   game refuses only when the game's history forbids it (a repetition);
//! - `count_legal` agrees with `legal_moves`;
//! - every game terminates, and it has an outcome exactly when no legal move is left;
//! - pillarz's bit-set shortcuts agree with making the move (`step_threatens`);
//! - Pilastri's `reach` (the evaluation's move counts and sets) agrees with `legal_moves`.

use pillarz::rules::record::Record;
use pillarz::rules::{
    Game, IllegalMove, MoveList, Variant, Variants, alcazar, pilastri, pillarz as pz, pyrga,
};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Random moves of a game, mostly illegal, to probe `check` from the other side.
trait RandomMove: Game {
    fn random_move(rng: &mut SmallRng) -> Self::Move;
}

fn letter(rng: &mut SmallRng, n: u8) -> char {
    (b'a' + rng.random_range(0..n)) as char
}

fn digit(rng: &mut SmallRng, n: u8) -> char {
    (b'1' + rng.random_range(0..n)) as char
}

impl RandomMove for pz::Position {
    fn random_move(rng: &mut SmallRng) -> pz::Move {
        let kind = rng.random_range(0..3);
        let mut sq = || format!("{}{}", letter(rng, 5), digit(rng, 5));
        let text = match kind {
            0 => format!("{}+{}", sq(), sq()),
            1 => format!("{}-{}", sq(), sq()),
            _ => format!("{}-{}^{}", sq(), sq(), sq()),
        };
        text.parse().unwrap()
    }
}

impl RandomMove for pilastri::Position {
    fn random_move(rng: &mut SmallRng) -> pilastri::Move {
        let a = format!("{}{}", letter(rng, 8), digit(rng, 8));
        let b = format!("{}{}", letter(rng, 8), digit(rng, 8));
        format!("{a}-{b}").parse().unwrap()
    }
}

impl RandomMove for pyrga::Position {
    fn random_move(rng: &mut SmallRng) -> pyrga::Move {
        let space = format!("{}{}", letter(rng, 4), digit(rng, 4));
        let text = match rng.random_range(0..3) {
            0 => format!("S{space}"),
            1 => format!("C{space}"),
            _ => format!("T{space}{}", ['N', 'E', 'S', 'W'][rng.random_range(0..4)]),
        };
        text.parse().unwrap()
    }
}

impl RandomMove for alcazar::Position {
    fn random_move(rng: &mut SmallRng) -> alcazar::Move {
        loop {
            let text = if rng.random_bool(0.3) {
                format!(
                    "K{}{}",
                    ['b', 'd', 'f', 'h'][rng.random_range(0..4)],
                    ['2', '4', '6', '8'][rng.random_range(0..4)]
                )
            } else {
                let mut slot = || {
                    let (x, y) = (rng.random_range(0..9u8), rng.random_range(0..9u8));
                    format!("{}{}", (b'a' + x) as char, (b'1' + y) as char)
                };
                format!("{}{}", slot(), slot())
            };
            if let Ok(mv) = text.parse() {
                return mv;
            }
        }
    }
}

/// Plays one random game from the start, checking every invariant at every ply; returns its
/// length.
fn random_game<G: RandomMove>(variants: Variants, seed: u64, max_plies: usize) -> usize {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut record = Record::new(G::start(variants));
    let mut moves = MoveList::new();
    for ply in 0..=max_plies {
        let pos = record.position().clone();
        assert_eq!(
            pos.hash(),
            pos.hash_from_scratch(),
            "hash at ply {ply}: {pos}"
        );
        let text = pos.to_string();
        assert_eq!(
            G::parse_position(&text, variants).unwrap(),
            pos,
            "round trip of {text}"
        );

        moves.clear();
        record.legal_moves(&mut moves);
        if !G::FORBIDS_REPETITION {
            assert_eq!(
                pos.count_legal(),
                moves.len() as u64,
                "count_legal at {text}"
            );
        }
        assert_eq!(
            record.outcome().is_some(),
            moves.is_empty(),
            "outcome at {text}"
        );
        for mv in &moves {
            assert!(
                record.check(mv).is_ok(),
                "{mv} listed but refused at {text}"
            );
            let shown = mv.to_string();
            assert_eq!(G::parse_move(&shown).unwrap(), *mv);
            let sloppy = format!("  {} ", shown.to_uppercase());
            assert_eq!(G::parse_move(&sloppy).unwrap(), *mv, "lenient {sloppy:?}");
        }
        for _ in 0..20 {
            let probe = G::random_move(&mut rng);
            assert_eq!(
                record.check(&probe).is_ok(),
                moves.contains(&probe),
                "{probe} at {text}"
            );
            if !moves.contains(&probe) {
                match pos.clone().play(&probe) {
                    Err(refused) => assert_eq!(
                        refused.position, pos,
                        "an illegal play changed the position"
                    ),
                    // `Game::play` sees the position alone; only the record knows the
                    // positions before it, so a move refused for repeating one passes here.
                    Ok(_) => assert!(
                        matches!(record.check(&probe), Err(IllegalMove::Repetition { .. })),
                        "{probe} is not legal at {text} but the position played it"
                    ),
                }
            }
        }
        if moves.is_empty() {
            return ply;
        }
        let mv = moves[rng.random_range(0..moves.len())];
        record.play(mv).unwrap();
    }
    panic!("game did not end within {max_plies} plies (seed {seed})");
}

/// Along a random pillarz game: `step_threatens` of every legal step is whether the child has
/// a winning step for the mover. Returns how many steps threatened (so the test sees both
/// answers).
fn pillarz_threats(seed: u64) -> usize {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut pos = pz::Position::start(Variants::NONE);
    let mut moves = MoveList::new();
    let mut threats = 0;
    loop {
        moves.clear();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            return threats;
        }
        for mv in &moves {
            if let pz::Move::Step { from, to, build } = *mv {
                let mut child = pos;
                child.play_unchecked(mv);
                let made = child.winning_step(pos.turn()).is_some();
                assert_eq!(pos.step_threatens(from, to, build), made, "{mv} at {pos}");
                threats += usize::from(made);
            }
        }
        pos.play_unchecked(&moves[rng.random_range(0..moves.len())]);
    }
}

#[test]
fn pillarz_threats_agree_with_the_move_made() {
    let threats: usize = (0..300).map(pillarz_threats).sum();
    assert!(threats > 100, "{threats} threatening steps seen");
}

/// Along a random Pilastri game of `variants`: what `reach` says of each side (the moves, the
/// stacks they leave, the stacks they land on) is what `legal_moves` lists when that side is
/// to move. Returns the number of positions checked.
fn pilastri_reach(seed: u64, variants: Variants) -> usize {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut pos = pilastri::Position::start(variants);
    let mut moves = MoveList::new();
    for checked in 0.. {
        let text = pos.to_string();
        for side in ['1', '2'] {
            let as_side = format!("{}{side}", &text[..text.len() - 1]);
            let view = pilastri::Position::parse_position(&as_side, variants).unwrap();
            moves.clear();
            view.legal_moves(&mut moves);
            let bit = |sq: pilastri::Square| 1u64 << sq.index();
            let reach = view.reach(view.turn());
            assert_eq!(reach.moves as usize, moves.len(), "moves at {as_side}");
            assert_eq!(
                reach.from,
                moves.iter().fold(0, |b, m| b | bit(m.from)),
                "from at {as_side}"
            );
            assert_eq!(
                reach.onto,
                moves.iter().fold(0, |b, m| b | bit(m.to)),
                "onto at {as_side}"
            );
        }
        moves.clear();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            return checked;
        }
        pos.play_unchecked(&moves[rng.random_range(0..moves.len())]);
    }
    unreachable!("the loop returns")
}

#[test]
fn pilastri_reach_agrees_with_the_legal_moves() {
    let mut checked = 0;
    for seed in 0..40 {
        for variants in [
            Variants::NONE,
            Variants::NONE.with(Variant::Jumpers),
            Variants::NONE.with(Variant::Size8),
        ] {
            checked += pilastri_reach(seed, variants);
        }
    }
    assert!(checked > 1_000, "{checked} positions checked");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn pillarz_random_games(seed in any::<u64>()) {
        // Two placements, then every turn adds a block to a board that holds 100.
        let plies = random_game::<pz::Position>(Variants::NONE, seed, 102);
        prop_assert!(plies >= 3);
    }

    #[test]
    fn pilastri_random_games(seed in any::<u64>(), size8 in any::<bool>(), jumpers in any::<bool>()) {
        let mut v = Variants::NONE;
        if size8 { v = v.with(Variant::Size8); }
        if jumpers { v = v.with(Variant::Jumpers); }
        let plies = random_game::<pilastri::Position>(v, seed, 4096);
        prop_assert!(plies >= 6, "no game ends within six plies");
    }

    #[test]
    fn pyrga_random_games(seed in any::<u64>()) {
        random_game::<pyrga::Position>(Variants::NONE, seed, 30);
    }

    #[test]
    fn alcazar_random_games(seed in any::<u64>()) {
        random_game::<alcazar::Position>(Variants::NONE, seed, 20_000);
    }
}
