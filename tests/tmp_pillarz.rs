use pillarz::rules::{perft::perft, pillarz::Position, Game, Variants};
#[test]
fn quick() {
    let p = Position::start(Variants::NONE);
    assert_eq!(perft(&p, 1, &[]), 300);
    assert_eq!(perft(&p, 2, &[]), 75900);
    assert_eq!(perft(&p, 3, &[]), 4313232);
    let p = Position::parse_position("00000/00o00x0/00000/00x00o0/00000 1", Variants::NONE).unwrap();
    assert_eq!(p.to_string(), "00000/00o00x0/00000/00x00o0/00000 1");
    for (d, n) in [(1, 80), (2, 6176), (3, 426384), (4, 29096316)] { assert_eq!(perft(&p, d, &[]), n, "d{d}"); }
    let p = Position::parse_position("00000o/0000o0/00000/44400/0x0x200 1", Variants::NONE).unwrap();
    assert_eq!(perft(&p, 1, &[]), 0);
    let p = Position::parse_position("00100/00o120/0230x0/0x0041/001o00 2", Variants::NONE).unwrap();
    assert_eq!(p.to_string(), "00100/00o120/0230x0/0x0041/001o00 2");
}
