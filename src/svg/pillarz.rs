//! pillarz: levels as nested blocks, caps as blue domes, pawns as discs.

use std::fmt::Write;

use super::{INK, MARK, P1_FILL, P2_FILL, close, coordinates, open};
use crate::rules::Player;
use crate::rules::pillarz::{Move, Position, Square};

const CELL: u32 = 80;
const X0: u32 = 30;
const Y0: u32 = 10;
const LEVEL_FILL: [&str; 3] = ["#d9d4c7", "#b9b1a0", "#968c79"];

fn corner(sq: Square) -> (u32, u32) {
    (
        X0 + u32::from(sq.file()) * CELL,
        Y0 + (4 - u32::from(sq.rank())) * CELL,
    )
}

pub fn draw(pos: &Position, last: Option<Move>) -> String {
    let mut out = open(X0 + 5 * CELL + 10, Y0 + 5 * CELL + 26, &pos.to_string());
    for i in 0..25u8 {
        let sq = Square::new(i).expect("25 squares");
        let (x, y) = corner(sq);
        let _ = write!(
            out,
            r##"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="#efece4" stroke="{INK}"/>"##
        );
        let level = pos.level(sq);
        for l in 0..level.min(3) {
            let inset = 6 + u32::from(l) * 9;
            let size = CELL - 2 * inset;
            let _ = write!(
                out,
                r#"<rect x="{}" y="{}" width="{size}" height="{size}" fill="{}" stroke="{INK}" stroke-width="0.5"/>"#,
                x + inset,
                y + inset,
                LEVEL_FILL[usize::from(l)]
            );
        }
        if level == 4 {
            let _ = write!(
                out,
                r##"<circle cx="{}" cy="{}" r="22" fill="#2f5fa8" stroke="{INK}"/>"##,
                x + CELL / 2,
                y + CELL / 2
            );
        }
        if let Some(p) = pos.pawn_at(sq) {
            let fill = if p == Player::P1 { P1_FILL } else { P2_FILL };
            let _ = write!(
                out,
                r#"<circle cx="{}" cy="{}" r="15" fill="{fill}" stroke="{INK}" stroke-width="2"/>"#,
                x + CELL / 2,
                y + CELL / 2
            );
        }
        if level > 0 && level < 4 {
            let _ = write!(
                out,
                r#"<text x="{}" y="{}" font-size="11" fill="{INK}">{level}</text>"#,
                x + 4,
                y + 13
            );
        }
    }
    if let Some(mv) = last {
        let marked: Vec<(Square, &str)> = match mv {
            Move::Place(a, b) => vec![(a, ""), (b, "")],
            Move::Step { from, to, build } => {
                let mut v = vec![(from, "4 3"), (to, "")];
                if let Some(b) = build {
                    v.push((b, "2 2"));
                }
                v
            }
        };
        for (sq, dash) in marked {
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
    coordinates(&mut out, X0, Y0, CELL, 5, 5);
    close(out)
}
