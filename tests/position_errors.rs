//! Every malformed position is refused with its own precise error, and nothing panics.

use pillarz::rules::alcazar::{self, Point, Slot, Square as ASquare};
use pillarz::rules::pilastri::{self, Square as PSquare};
use pillarz::rules::pillarz::{self as pz, Square};
use pillarz::rules::pyrga::{self, Move as PyMove, Shape, Space};
use pillarz::rules::{Game, Player, Variant, Variants};

fn sq(s: &str) -> Square {
    Square::parse(s).unwrap()
}

#[test]
fn pillarz_errors() {
    use pillarz::rules::PositionError::{Rule, Syntax};
    use pz::{NotationError as N, SetupError as S};
    let table: Vec<(&str, pz::PositionError)> = vec![
        (
            "00000/00000/00000/00000/00000",
            Syntax(N::FieldCount { found: 1 }),
        ),
        (
            "00000/00000/00000/00000/00000 1 x",
            Syntax(N::FieldCount { found: 3 }),
        ),
        (
            "00000/00000/00000/00000 1",
            Syntax(N::RankCount { found: 4 }),
        ),
        (
            "00000/00000/00000/00000/00000/00000 1",
            Syntax(N::RankCount { found: 6 }),
        ),
        (
            "00000/0000/00000/00000/00000 1",
            Syntax(N::SquareCount { rank: 4, found: 4 }),
        ),
        (
            "00000/00000/00000/00000/000000 1",
            Syntax(N::SquareCount { rank: 1, found: 6 }),
        ),
        (
            "00000/00000/00500/00000/00000 1",
            Rule(S::LevelOutOfRange {
                square: sq("c3"),
                level: 5,
            }),
        ),
        (
            "00000/00000/00a00/00000/00000 1",
            Syntax(N::UnexpectedChar {
                rank: 3,
                found: 'a',
            }),
        ),
        (
            "x00000/00000/00000/00000/00000 1",
            Syntax(N::UnexpectedChar {
                rank: 5,
                found: 'x',
            }),
        ),
        (
            "00000/00000/0000x0/0x0xo00/00o00 1",
            Syntax(N::TwoPawnsOnSquare { square: sq("b2") }),
        ),
        (
            "00000/00000/004x00/0x0000/0o0o000 1",
            Rule(S::PawnOnCap { square: sq("c3") }),
        ),
        (
            "00000/00000/00000/00000/00000 3",
            Syntax(N::BadSide { found: "3".into() }),
        ),
        (
            "00000/00000/00000/00000/0x0000 2",
            Rule(S::PawnCount {
                player: Player::P1,
                found: 1,
            }),
        ),
        (
            "0x0x0x00/00000/00000/00000/00000 2",
            Rule(S::PawnCount {
                player: Player::P1,
                found: 3,
            }),
        ),
        ("0o0o000/00000/00000/00000/00000 1", Rule(S::PlacementOrder)),
        (
            "00000/00000/00000/00000/00000 2",
            Rule(S::PlacementSide {
                expected: Player::P1,
                found: Player::P2,
            }),
        ),
        (
            "0x0x000/00000/00000/00000/00000 1",
            Rule(S::PlacementSide {
                expected: Player::P2,
                found: Player::P1,
            }),
        ),
        (
            "00000/00000/00100/00000/00000 1",
            Rule(S::BuiltBeforePlacement),
        ),
        ("3x3o000/00000/00000/00000/0x0o000 1", Rule(S::BothOnTop)),
        (
            "3x3x000/00000/00000/00000/0o0o000 2",
            Rule(S::TwoOnTop { player: Player::P1 }),
        ),
        (
            "3x0x000/00000/00000/00000/0o0o000 1",
            Rule(S::WinnerToMove { player: Player::P1 }),
        ),
    ];
    for (input, expected) in table {
        assert_eq!(
            pz::Position::parse_position(input, Variants::NONE).unwrap_err(),
            expected,
            "{input}"
        );
    }
}

fn pq(s: &str) -> PSquare {
    PSquare::parse(s).unwrap()
}

const PILASTRI_START: &str =
    "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o";

#[test]
fn pilastri_errors() {
    use pilastri::{NotationError as N, SetupError as S};
    use pillarz::rules::PositionError::{Rule, Syntax};
    let six = Variants::NONE;
    let table: Vec<(String, Variants, pilastri::PositionError)> = vec![
        (
            PILASTRI_START.to_string(),
            six,
            Syntax(N::FieldCount { found: 1 }),
        ),
        (
            "o,x/x,o 1".to_string(),
            six,
            Syntax(N::RankCount { found: 2 }),
        ),
        (
            format!("{PILASTRI_START} 1"),
            six.with(Variant::Size8),
            Rule(S::SizeMismatch { found: 6 }),
        ),
        (
            PILASTRI_START.replacen("o,x,o,x,o,x/", "o,x,o,x,o/", 1) + " 1",
            six,
            Syntax(N::SquareCount {
                rank: 6,
                found: 5,
                expected: 6,
            }),
        ),
        (
            PILASTRI_START.replacen("o,x,o,x,o,x/", "o,,o,x,o,x/", 1) + " 1",
            six,
            Syntax(N::EmptySquare { square: pq("b6") }),
        ),
        (
            PILASTRI_START.replacen("o,x,o,x,o,x/", "o,y,o,x,o,x/", 1) + " 1",
            six,
            Syntax(N::UnexpectedChar {
                square: pq("b6"),
                found: 'y',
            }),
        ),
        (
            PILASTRI_START.replacen("o,x,o,x,o,x/", "o,x-,o,x,o,x/", 1) + " 1",
            six,
            Syntax(N::UnexpectedChar {
                square: pq("b6"),
                found: '-',
            }),
        ),
        (
            format!("{PILASTRI_START} 0"),
            six,
            Syntax(N::BadSide { found: "0".into() }),
        ),
        (
            PILASTRI_START.replacen("o,x,o,x,o,x/", "o,-,o,x,o,x/", 1) + " 1",
            six,
            Rule(S::PieceCount {
                player: Player::P1,
                found: 17,
                expected: 18,
            }),
        ),
        (
            PILASTRI_START.replacen("o,x,o,x,o,x/", "o,xo,o,x,o,x/", 1) + " 1",
            six,
            Rule(S::PieceCount {
                player: Player::P2,
                found: 19,
                expected: 18,
            }),
        ),
    ];
    for (input, variants, expected) in table {
        assert_eq!(
            pilastri::Position::parse_position(&input, variants).unwrap_err(),
            expected,
            "{input}"
        );
    }
}

fn space(s: &str) -> Space {
    Space::parse(s).unwrap()
}

#[test]
fn pyrga_errors() {
    use pillarz::rules::PositionError::{Rule, Syntax};
    use pyrga::{NotationError as N, SetupError as S};
    let mv = |s: &str| s.parse::<PyMove>().unwrap();
    let table: Vec<(&str, pyrga::PositionError)> = vec![
        (
            "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1",
            Syntax(N::FieldCount { found: 2 }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,-,-,- 1 -",
            Syntax(N::RankCount { found: 3 }),
        ),
        (
            "-,-,-,-/-,-,-/-,-,-,-/-,-,-,- 1 -",
            Syntax(N::SpaceCount { rank: 3, found: 3 }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,,-,-/-,-,-,- 1 -",
            Syntax(N::EmptySpace { space: space("b2") }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,X,-,-/-,-,-,- 2 Sb2",
            Syntax(N::UnexpectedChar {
                space: space("b2"),
                found: 'X',
            }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,T,-,-/-,-,-,- 2 Sb2",
            Syntax(N::MissingArrow { space: space("b2") }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,-,-,-/T<,-,-,- 2 Ta1W",
            Rule(S::TriangleOffBoard { space: space("a1") }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,CS,-,-/-,-,-,t^ 1 Cb2",
            Syntax(N::PieceOrder { space: space("b2") }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,Ss,-,-/-,-,-,- 1 Sb2",
            Syntax(N::PieceOrder { space: space("b2") }),
        ),
        (
            "S,S,S,-/S,S,S,-/s,s,s,s/s,s,c,c 1 Sa4",
            Rule(S::TooManyPieces {
                player: Player::P1,
                shape: Shape::Square,
                found: 6,
            }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 3 -",
            Syntax(N::BadSide { found: "3".into() }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,S,-,-/-,-,-,- 1 Sb2",
            Rule(S::PieceBalance {
                p1: 1,
                p2: 0,
                side: Player::P1,
            }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,S,s,-/-,-,-,- 2 Sc2",
            Rule(S::PieceBalance {
                p1: 1,
                p2: 1,
                side: Player::P2,
            }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,S,-,-/-,-,-,- 2 Xb2",
            Syntax(N::BadLast {
                found: "Xb2".into(),
            }),
        ),
        ("-,-,-,-/-,-,-,-/-,S,-,-/-,-,-,- 2 -", Rule(S::MissingLast)),
        (
            "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 Sb2",
            Rule(S::LastOnEmptyBoard { last: mv("Sb2") }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,S,-,-/-,-,-,- 2 Sc3",
            Rule(S::LastNotOnBoard {
                last: mv("Sc3"),
                player: Player::P1,
            }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,S,s,-/-,-,-,- 1 Sb2",
            Rule(S::LastNotOnBoard {
                last: mv("Sb2"),
                player: Player::P2,
            }),
        ),
        (
            "-,-,-,-/-,-,-,-/-,T^,-,-/-,-,-,- 2 Tb2E",
            Rule(S::LastNotOnBoard {
                last: mv("Tb2E"),
                player: Player::P1,
            }),
        ),
        (
            "ST>C,ST>C,ST>C,-/-,-,-,-/stvc,stvc,stvc,-/-,-,-,- 1 Cc2",
            Rule(S::BothWon),
        ),
    ];
    for (input, expected) in table {
        assert_eq!(
            pyrga::Position::parse_position(input, Variants::NONE).unwrap_err(),
            expected,
            "{input}"
        );
    }
}

fn slot(s: &str) -> Slot {
    Slot::from_point(Point::parse(s).unwrap()).unwrap()
}

#[test]
fn alcazar_errors() {
    use alcazar::{NotationError as N, SetupError as S};
    use pillarz::rules::PositionError::{Rule, Syntax};
    let walls = "b5,c6,d7,e2,e8,f3,g4,h5";
    let table: Vec<(String, alcazar::PositionError)> = vec![
        (
            format!("{walls} b8 h2 1"),
            Syntax(N::FieldCount { found: 4 }),
        ),
        (
            "b5,c6,d7,e2,e8,f3,g4,b2 b8 h2 1 -".into(),
            Syntax(N::NotASlot { found: "b2".into() }),
        ),
        (
            "b5,c6,d7,e2,e8,f3,g4,a1 b8 h2 1 -".into(),
            Syntax(N::NotASlot { found: "a1".into() }),
        ),
        (
            "b5,c6,d7,e2,e8,f3,g4,j5 b8 h2 1 -".into(),
            Syntax(N::NotASlot { found: "j5".into() }),
        ),
        (
            "b5,c6,d7,e2,e8,f3,g4 b8 h2 1 -".into(),
            Rule(S::WallCount { found: 7 }),
        ),
        (
            "b5,c6,d7,e2,e8,f3,g4,h5,h7 b8 h2 1 -".into(),
            Rule(S::WallCount { found: 9 }),
        ),
        (
            "c6,b5,d7,e2,e8,f3,g4,h5 b8 h2 1 -".into(),
            Syntax(N::WallsUnsorted { found: slot("b5") }),
        ),
        (
            "b5,c6,d7,e2,e8,e8,g4,h5 b8 h2 1 -".into(),
            Syntax(N::WallsUnsorted { found: slot("e8") }),
        ),
        (
            format!("{walls} b7 h2 1 -"),
            Syntax(N::NotASquare { found: "b7".into() }),
        ),
        (
            format!("{walls} d4 d4 1 -"),
            Rule(S::KnightsTogether {
                square: ASquare::from_point(Point::parse("d4").unwrap()).unwrap(),
            }),
        ),
        (
            format!("{walls} b8 h2 red -"),
            Syntax(N::BadSide {
                found: "red".into(),
            }),
        ),
        (
            "b5,c6,d7,d9,e2,f3,g4,h5 b8 h2 2 f3,d9".into(),
            Syntax(N::FrozenUnsorted { found: slot("d9") }),
        ),
        (
            "b5,c6,d7,d9,e2,f3,g4,h5 b8 h2 2 e8".into(),
            Rule(S::FrozenNotAWall { slot: slot("e8") }),
        ),
        (
            "b5,c6,d7,d9,e2,f3,g4,h5 b8 h2 2 c6".into(),
            Rule(S::FrozenInconsistent),
        ),
        (
            format!("{walls} h2 d4 1 -"),
            Rule(S::WinnerToMove { player: Player::P1 }),
        ),
        (format!("{walls} h2 b8 2 -"), Rule(S::BothInFortress)),
        (
            "b5,c6,d7,e8,f3,g2,g4,h3 b8 h2 1 -".into(),
            Rule(S::MoverTrapped { player: Player::P2 }),
        ),
    ];
    for (input, expected) in table {
        assert_eq!(
            alcazar::Position::parse_position(&input, Variants::NONE).unwrap_err(),
            expected,
            "{input}"
        );
    }
}

/// Arbitrary text and mutated valid positions never panic the parsers.
#[test]
fn garbage_never_panics() {
    let seeds = [
        "00100/00o120/0230x0/0x0041/001o00 2",
        PILASTRI_START,
        "-,-,-,-/-,-,-,-/-,S,t^,-/-,-,-,- 1 Tc2N",
        "b5,c6,d7,d9,e2,f3,g4,h5 b8 h2 2 d9",
    ];
    let alphabet: Vec<char> = "0123456789xo-,/ ^<>vSTCstcKabcdefghij".chars().collect();
    let mut state = 0x1234_5678_9abc_def0_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let base: Vec<char> = seeds[(next() % 4) as usize].chars().collect();
        let mut text = base.clone();
        for _ in 0..(next() % 4 + 1) {
            let i = (next() as usize) % (text.len() + 1);
            let c = alphabet[(next() as usize) % alphabet.len()];
            match next() % 3 {
                0 if i < text.len() => text[i] = c,
                1 if i < text.len() => {
                    text.remove(i);
                }
                _ => text.insert(i, c),
            }
        }
        let text: String = text.into_iter().collect();
        for v in [Variants::NONE, Variants::NONE.with(Variant::Size8)] {
            let _ = pz::Position::parse_position(&text, v).map(|p| p.to_string());
            let _ = pilastri::Position::parse_position(&text, v).map(|p| p.to_string());
            let _ = pyrga::Position::parse_position(&text, v).map(|p| p.to_string());
            let _ = alcazar::Position::parse_position(&text, v).map(|p| p.to_string());
        }
    }
}

/// Positions built without text: a position's setup makes it again, and a setup the notation
/// could not even write is refused by the same constructor, with its own error.
#[test]
fn setups_built_without_text_meet_the_same_rules() {
    let start = pz::Position::start(Variants::NONE);
    assert_eq!(pz::Position::from_setup(&start.setup()), Ok(start));
    let mut setup = start.setup();
    setup.levels[sq("a1").index()] = 5;
    assert_eq!(
        pz::Position::from_setup(&setup),
        Err(pz::SetupError::LevelOutOfRange {
            square: sq("a1"),
            level: 5
        })
    );

    for variants in [Variants::NONE, Variants::NONE.with(Variant::Size8)] {
        let start = pilastri::Position::start(variants);
        assert_eq!(
            pilastri::Position::from_setup(&start.setup(), variants),
            Ok(start)
        );
    }
    let mut setup = pilastri::Position::start(Variants::NONE).setup();
    setup.size = 7;
    assert_eq!(
        pilastri::Position::from_setup(&setup, Variants::NONE),
        Err(pilastri::SetupError::BadSize { size: 7 })
    );
    let mut setup = pilastri::Position::start(Variants::NONE).setup();
    setup.stacks[pq("h8").index()].push(Player::P1);
    assert_eq!(
        pilastri::Position::from_setup(&setup, Variants::NONE),
        Err(pilastri::SetupError::OffBoard {
            square: pq("h8"),
            size: 6
        })
    );

    let start = pyrga::Position::start(Variants::NONE);
    assert_eq!(pyrga::Position::from_setup(&start.setup()), Ok(start));

    let start = alcazar::Position::start(Variants::NONE);
    assert_eq!(alcazar::Position::from_setup(&start.setup()), Ok(start));
    let mut setup = start.setup();
    let first = setup.walls[0];
    setup.walls[1] = first;
    assert_eq!(
        alcazar::Position::from_setup(&setup),
        Err(alcazar::SetupError::WallCount { found: 7 })
    );
}
