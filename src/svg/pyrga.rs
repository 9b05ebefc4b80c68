//! Pyrga: each tower as its square (outer), triangle (pointing its way) and cylinder (centre);
//! light pieces for p1, dark for p2.

use std::fmt::Write;

use super::{INK, MARK, close, coordinates, open};
use crate::rules::Player;
use crate::rules::pyrga::{Dir, Move, Piece, Position, Shape, Space};

const CELL: u32 = 100;
const X0: u32 = 30;
const Y0: u32 = 10;
const LIGHT: &str = "#f1dcb4";
const DARK: &str = "#5b3a29";

fn fill(p: Player) -> &'static str {
    if p == Player::P1 { LIGHT } else { DARK }
}

pub fn draw(pos: &Position, last: Option<Move>) -> String {
    let corner = |sp: Space| {
        (
            X0 + u32::from(sp.file()) * CELL,
            Y0 + (3 - u32::from(sp.rank())) * CELL,
        )
    };
    let mut out = open(X0 + 4 * CELL + 10, Y0 + 4 * CELL + 26, &pos.to_string());
    for i in 0..16u8 {
        let sp = Space::from_coords(i % 4, i / 4).expect("4×4");
        let (x, y) = corner(sp);
        let (cx, cy) = (x + CELL / 2, y + CELL / 2);
        let _ = write!(
            out,
            r##"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="#e9efe6" stroke="{INK}"/>"##
        );
        if let Some((_, owner)) = pos.piece_at(sp, Shape::Square) {
            let _ = write!(
                out,
                r#"<rect x="{}" y="{}" width="76" height="76" fill="{}" stroke="{INK}" stroke-width="2"/>"#,
                cx - 38,
                cy - 38,
                fill(owner)
            );
        }
        if let Some((Piece::Triangle(d), owner)) = pos.piece_at(sp, Shape::Triangle) {
            let (cx, cy) = (cx as i32, cy as i32);
            let points = match d {
                Dir::N => [(cx, cy - 32), (cx - 28, cy + 22), (cx + 28, cy + 22)],
                Dir::S => [(cx, cy + 32), (cx - 28, cy - 22), (cx + 28, cy - 22)],
                Dir::E => [(cx + 32, cy), (cx - 22, cy - 28), (cx - 22, cy + 28)],
                Dir::W => [(cx - 32, cy), (cx + 22, cy - 28), (cx + 22, cy + 28)],
            };
            let pts: Vec<String> = points.iter().map(|(a, b)| format!("{a},{b}")).collect();
            let _ = write!(
                out,
                r#"<polygon points="{}" fill="{}" stroke="{INK}" stroke-width="2"/>"#,
                pts.join(" "),
                fill(owner)
            );
        }
        if let Some((_, owner)) = pos.piece_at(sp, Shape::Cylinder) {
            let _ = write!(
                out,
                r#"<circle cx="{cx}" cy="{cy}" r="13" fill="{}" stroke="{INK}" stroke-width="2"/>"#,
                fill(owner)
            );
        }
    }
    if let Some(mv) = last {
        let (x, y) = corner(mv.space);
        let _ = write!(
            out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{MARK}" stroke-width="5"/>"#,
            x + 3,
            y + 3,
            CELL - 6,
            CELL - 6
        );
    }
    coordinates(&mut out, X0, Y0, CELL, 4, 4);
    close(out)
}
