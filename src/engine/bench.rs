//! The fixed bench: the same positions searched to the same depths every time. Its total node
//! count is a fingerprint of the search: a pure refactor must not change it.

use super::eval::Eval;
use super::eval::Searchable;
use super::limits::{FrozenClock, Limit};
use super::search::{Engine, Params, TT_BITS};
use crate::rules::{Variant, Variants, alcazar, pilastri, pillarz, pyrga};

/// One bench position's result.
pub struct BenchLine {
    pub name: String,
    pub depth: u32,
    pub nodes: u64,
}

fn run<G: Searchable>(
    eval: Option<Eval>,
    name: &str,
    notation: Option<&str>,
    variants: Variants,
    depth: u32,
) -> BenchLine {
    let pos = match notation {
        Some(s) => G::parse_position(s, variants).unwrap_or_else(|e| panic!("bench {s}: {e}")),
        None => G::start(variants),
    };
    let mut engine = Engine::<G>::with_eval(TT_BITS, eval.unwrap_or(G::DEFAULT_EVAL));
    let report = engine.search(
        &pos,
        &[],
        &Params::analysis(Limit::Depth(depth), &FrozenClock),
    );
    BenchLine {
        name: format!("{name} {}", notation.unwrap_or("start")),
        depth,
        nodes: report.nodes,
    }
}

/// Runs every bench position with evaluation `eval` (`None`: each game's default); `each` is
/// called after each one (to time it, or print), and an error of it stops the bench there.
pub fn run_all<E>(
    eval: Option<Eval>,
    mut each: impl FnMut(&BenchLine) -> Result<(), E>,
) -> Result<u64, E> {
    let jobs: Vec<Box<dyn Fn() -> BenchLine>> = vec![
        Box::new(move || {
            run::<pillarz::Position>(
                eval,
                "pillarz",
                Some("00000/00o00x0/00000/00x00o0/00000 1"),
                Variants::NONE,
                4,
            )
        }),
        Box::new(move || {
            run::<pillarz::Position>(
                eval,
                "pillarz",
                Some("00100/00o120/0230x0/0x0041/001o00 2"),
                Variants::NONE,
                5,
            )
        }),
        Box::new(move || run::<pilastri::Position>(eval, "pilastri", None, Variants::NONE, 10)),
        Box::new(move || {
            run::<pilastri::Position>(
                eval,
                "pilastri size-8",
                None,
                Variants::NONE.with(Variant::Size8),
                8,
            )
        }),
        Box::new(move || run::<pyrga::Position>(eval, "pyrga", None, Variants::NONE, 12)),
        Box::new(move || {
            run::<pyrga::Position>(
                eval,
                "pyrga",
                Some("-,-,-,-/t>,Tv,-,-/StvC,t<,-,-/st>C,T<c,ST>,t< 1 Td1W"),
                Variants::NONE,
                9,
            )
        }),
        Box::new(move || run::<alcazar::Position>(eval, "alcazar", None, Variants::NONE, 9)),
        Box::new(move || {
            run::<alcazar::Position>(
                eval,
                "alcazar",
                Some("b5,c4,d1,e4,e8,f3,h7,i6 b8 h4 1 e8"),
                Variants::NONE,
                10,
            )
        }),
    ];
    let mut total = 0;
    for job in jobs {
        let line = job();
        total += line.nodes;
        each(&line)?;
    }
    Ok(total)
}
