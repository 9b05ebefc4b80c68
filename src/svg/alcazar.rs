//! Alcazar: the 4×4 castle with its 25 towers, the walls between them, the two knights and
//! their fortresses; coordinates are those of the 9×9 lattice.

use std::fmt::Write;

use super::{INK, MARK, close, open};
use crate::rules::Player;
use crate::rules::alcazar::{Move, Point, Position};

/// Pixels per lattice step (a square is two steps wide).
const STEP: i32 = 45;
const X0: i32 = 34;
const Y0: i32 = 14;

fn xy(p: Point) -> (i32, i32) {
    (X0 + i32::from(p.x) * STEP, Y0 + (8 - i32::from(p.y)) * STEP)
}

fn wall_line(out: &mut String, p: Point, colour: &str, width: u32, dash: &str) {
    let (x, y) = xy(p);
    let (dx, dy) = if p.x % 2 == 0 { (0, STEP) } else { (STEP, 0) };
    let _ = write!(
        out,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="{width}" stroke-linecap="round" stroke-dasharray="{dash}"/>"#,
        x - dx,
        y - dy,
        x + dx,
        y + dy
    );
}

pub fn draw(pos: &Position, last: Option<Move>) -> String {
    let size = (X0 + 8 * STEP + 16) as u32;
    let mut out = open(size, size + 10, &pos.to_string());
    // Squares, with the fortresses shaded.
    for sx in 0..4i8 {
        for sy in 0..4i8 {
            let p = Point::new(sx * 2 + 1, sy * 2 + 1);
            let (x, y) = xy(p);
            let fill = match (p.x, p.y) {
                (1, 7) => "#f3c9c4",
                (7, 1) => "#c9e6c4",
                _ => "#f2efe6",
            };
            let _ = write!(
                out,
                r##"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" stroke="#ccc"/>"##,
                x - STEP,
                y - STEP,
                2 * STEP,
                2 * STEP
            );
        }
    }
    if let Some(Move::Swing { from, .. }) = last {
        wall_line(&mut out, from.point(), MARK, 3, "6 5");
    }
    for wall in pos.walls() {
        let fresh = matches!(last, Some(Move::Swing { to, .. }) if to == wall);
        wall_line(
            &mut out,
            wall.point(),
            if fresh { MARK } else { "#6b4b2a" },
            8,
            "",
        );
    }
    for x in (0..9).step_by(2) {
        for y in (0..9).step_by(2) {
            let (cx, cy) = xy(Point::new(x, y));
            let _ = write!(
                out,
                r#"<rect x="{}" y="{}" width="12" height="12" fill="{INK}"/>"#,
                cx - 6,
                cy - 6
            );
        }
    }
    if let Some(Move::Step(to)) = last {
        let (x, y) = xy(to.point());
        let _ = write!(
            out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{MARK}" stroke-width="4"/>"#,
            x - STEP + 8,
            y - STEP + 8,
            2 * STEP - 16,
            2 * STEP - 16
        );
    }
    for (player, fill, letter) in [(Player::P1, "#c0392b", "R"), (Player::P2, "#2e8b57", "G")] {
        let (x, y) = xy(pos.knight(player).point());
        let _ = write!(
            out,
            r#"<circle cx="{x}" cy="{y}" r="24" fill="{fill}" stroke="{INK}" stroke-width="2"/><text x="{x}" y="{}" font-size="20" text-anchor="middle" fill="white">{letter}</text>"#,
            y + 7
        );
    }
    for i in 0..9i8 {
        let (x, _) = xy(Point::new(i, 0));
        let (_, y) = xy(Point::new(0, i));
        let _ = write!(
            out,
            r#"<text x="{x}" y="{}" font-size="13" text-anchor="middle" fill="{INK}">{}</text><text x="{}" y="{}" font-size="13" text-anchor="middle" fill="{INK}">{}</text>"#,
            Y0 + 8 * STEP + 24,
            (b'a' + i as u8) as char,
            X0 - 22,
            y + 5,
            i + 1
        );
    }
    close(out)
}
