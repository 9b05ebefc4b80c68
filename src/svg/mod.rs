//! Board pictures as SVG, one file per game. Pure: a position (and the last move, to mark it)
//! in, a self-contained SVG document out, with coordinates on the edges.

mod alcazar;
mod pilastri;
mod pillarz;
mod pyrga;

use std::fmt::Write;

use crate::rules::{AnyState, Game};

/// Cell colours and strokes shared by the games.
pub(crate) const P1_FILL: &str = "#f4f1e8";
pub(crate) const P2_FILL: &str = "#2b2b2b";
pub(crate) const MARK: &str = "#e8a317";
pub(crate) const INK: &str = "#333";

/// The picture of the current position of `state`, marking `last` (in the game's notation) if
/// given, parseable and on the board.
pub fn render(state: &AnyState, last: Option<&str>) -> String {
    match state {
        AnyState::Pillarz(r) => pillarz::draw(r.position(), parse_last::<_>(r.position(), last)),
        AnyState::Pilastri(r) => pilastri::draw(r.position(), parse_last::<_>(r.position(), last)),
        AnyState::Pyrga(r) => {
            let last = parse_last::<_>(r.position(), last).or(r.position().last());
            pyrga::draw(r.position(), last)
        }
        AnyState::Alcazar(r) => alcazar::draw(r.position(), parse_last::<_>(r.position(), last)),
    }
}

/// The move to mark: `last` when it parses and names only squares of `pos`'s board.
fn parse_last<G: Game>(pos: &G, last: Option<&str>) -> Option<G::Move> {
    last.and_then(|s| G::parse_move(s).ok())
        .filter(|mv| pos.fits_board(mv))
}

/// The document's opening, a background and a title.
pub(crate) fn open(width: u32, height: u32, title: &str) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif"><title>{}</title><rect width="{width}" height="{height}" fill="#fbfaf7"/>"##,
        escape(title)
    );
    out
}

pub(crate) fn close(mut out: String) -> String {
    out.push_str("</svg>\n");
    out
}

/// File letters under and rank numbers left of a grid of `files` × `ranks` cells of `cell`
/// pixels whose top-left corner is at (`x0`, `y0`).
pub(crate) fn coordinates(out: &mut String, x0: u32, y0: u32, cell: u32, files: u32, ranks: u32) {
    for f in 0..files {
        let x = x0 + f * cell + cell / 2;
        let y = y0 + ranks * cell + 18;
        let _ = write!(
            out,
            r#"<text x="{x}" y="{y}" font-size="14" text-anchor="middle" fill="{INK}">{}</text>"#,
            (b'a' + f as u8) as char
        );
    }
    for r in 0..ranks {
        let y = y0 + (ranks - 1 - r) * cell + cell / 2 + 5;
        let _ = write!(
            out,
            r#"<text x="{}" y="{y}" font-size="14" text-anchor="middle" fill="{INK}">{}</text>"#,
            x0 - 14,
            r + 1
        );
    }
}

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
