use pillarz::rules::{perft::perft, pyrga::Position, Game, Variants, record::Record};
#[test]
fn quick() {
    let p = Position::start(Variants::NONE);
    for (d, n) in [80u64, 792, 7000, 59872, 514776].iter().enumerate() { assert_eq!(perft(&p, d as u32 + 1, &[]), *n, "d{}", d+1); }
    let q = Position::parse_position("-,-,-,-/-,-,-,-/-,S,t^,-/-,-,-,- 1 Tc2N", Variants::NONE).unwrap();
    assert_eq!(q.to_string(), "-,-,-,-/-,-,-,-/-,S,t^,-/-,-,-,- 1 Tc2N");
    assert_eq!(perft(&q, 1, &[]), 9);
    let mut r = Record::new(p);
    for m in ["Sb2", "Tc2N"] { r.play(Position::parse_move(m).unwrap()).unwrap(); }
    assert_eq!(r.position(), &q);
    let mut r = Record::new(p);
    for m in ["Sa4", "Tb4W", "Ta4S", "Ta3N", "Ca4"] { r.play(Position::parse_move(m).unwrap()).unwrap(); }
    assert_eq!(perft(r.position(), 1, &[]), 66);
}
