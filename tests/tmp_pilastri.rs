use pillarz::rules::{perft::perft, pilastri::Position, Game, Variants, Variant};
#[test]
fn quick() {
    for (v, counts) in [
        (Variants::NONE, [60u64, 3324, 165408, 7516476]),
        (Variants::NONE.with(Variant::Jumpers), [60, 3372, 178708, 8837116]),
        (Variants::NONE.with(Variant::Size8), [112, 12016, 1216472, 117583508]),
        (Variants::NONE.with(Variant::Size8).with(Variant::Jumpers), [112, 12112, 1268004, 128023204]),
    ] {
        let p = Position::start(v);
        let s = p.to_string();
        assert_eq!(Position::parse_position(&s, v).unwrap(), p);
        for (d, n) in counts.iter().enumerate() { assert_eq!(perft(&p, d as u32 + 1, &[]), *n, "{v:?} d{}", d+1); }
    }
    assert_eq!(Position::start(Variants::NONE).to_string(), "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 1");
}
