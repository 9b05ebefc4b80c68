//! Pilastri: stacks as piles of discs, bottom to top, with their height.

use std::fmt::Write;

use super::{INK, MARK, P1_FILL, P2_FILL, close, coordinates, open};
use crate::rules::Player;
use crate::rules::pilastri::{Move, Position, Square};

const CELL: u32 = 64;
const X0: u32 = 30;
const Y0: u32 = 10;

pub fn draw(pos: &Position, last: Option<Move>) -> String {
    let n = u32::from(pos.size());
    let corner = |sq: Square| {
        (
            X0 + u32::from(sq.file()) * CELL,
            Y0 + (n - 1 - u32::from(sq.rank())) * CELL,
        )
    };
    let mut out = open(X0 + n * CELL + 10, Y0 + n * CELL + 26, &pos.to_string());
    for rank in 0..pos.size() {
        for file in 0..pos.size() {
            let sq = Square::from_coords(file, rank).expect("on the board");
            let (x, y) = corner(sq);
            let fill = if (file + rank) % 2 == 0 {
                "#e6dfcf"
            } else {
                "#f3efe5"
            };
            let _ = write!(
                out,
                r#"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" stroke="{INK}" stroke-width="0.5"/>"#
            );
            let stack: Vec<Player> = pos.stack(sq).collect();
            // Show the top six pieces; the height label tells the rest.
            let shown = &stack[stack.len().saturating_sub(6)..];
            for (i, p) in shown.iter().enumerate() {
                let fill = if *p == Player::P1 { P1_FILL } else { P2_FILL };
                let cy = y + CELL - 12 - 7 * i as u32;
                let _ = write!(
                    out,
                    r#"<ellipse cx="{}" cy="{cy}" rx="20" ry="7" fill="{fill}" stroke="{INK}"/>"#,
                    x + CELL / 2
                );
            }
            if !stack.is_empty() {
                let _ = write!(
                    out,
                    r#"<text x="{}" y="{}" font-size="11" fill="{INK}">{}</text>"#,
                    x + 4,
                    y + 12,
                    stack.len()
                );
            }
        }
    }
    if let Some(mv) = last {
        for (sq, dash) in [(mv.from, "4 3"), (mv.to, "")] {
            let (x, y) = corner(sq);
            let _ = write!(
                out,
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{MARK}" stroke-width="4" stroke-dasharray="{dash}"/>"#,
                x + 2,
                y + 2,
                CELL - 4,
                CELL - 4
            );
        }
    }
    coordinates(&mut out, X0, Y0, CELL, n, n);
    close(out)
}
