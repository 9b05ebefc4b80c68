//! Boards drawn as text for the terminal, from a game's position notation.

use std::fmt::Write;

use crate::rules::alcazar::{self, Point, Slot};
use crate::rules::pilastri::{self, Square as PSquare};
use crate::rules::pillarz::{self as pz, Square};
use crate::rules::pyrga::{self, Shape, Space};
use crate::rules::{AnyState, GameKind, Player, Variant};

/// The board of `position` as lines of text.
pub fn render(kind: GameKind, variants: &[Variant], position: &str) -> Result<String, String> {
    let variants = kind.with_variants(variants).map_err(|e| e.to_string())?;
    let state = AnyState::new(kind, variants, Some(position)).map_err(|e| e.to_string())?;
    Ok(match &state {
        AnyState::Pillarz(s) => pillarz_board(s.position()),
        AnyState::Pilastri(s) => pilastri_board(s.position()),
        AnyState::Pyrga(s) => pyrga_board(s.position()),
        AnyState::Alcazar(s) => alcazar_board(s.position()),
    })
}

fn files(n: u8, width: usize) -> String {
    let mut line = String::from("   ");
    for f in 0..n {
        let _ = write!(line, "{:^width$}", (b'a' + f) as char);
    }
    line
}

fn pillarz_board(pos: &pz::Position) -> String {
    let mut out = String::new();
    for rank in (0..5).rev() {
        let _ = write!(out, "{}  ", rank + 1);
        for file in 0..5 {
            let sq = Square::from_coords(file, rank).expect("5×5");
            let level = pos.level(sq);
            let pawn = match pos.pawn_at(sq) {
                Some(Player::P1) => 'x',
                Some(Player::P2) => 'o',
                None => ' ',
            };
            let cell = if level == 4 {
                " ^ ".to_string()
            } else {
                format!("{level}{pawn} ")
            };
            let _ = write!(out, " {cell}");
        }
        out.push('\n');
    }
    out + &files(5, 4) + "\n  levels 0-3, ^ capped; x = p1, o = p2\n"
}

fn pilastri_board(pos: &pilastri::Position) -> String {
    let n = pos.size();
    let mut out = String::new();
    for rank in (0..n).rev() {
        let _ = write!(out, "{}  ", rank + 1);
        for file in 0..n {
            let sq = PSquare::from_coords(file, rank).expect("8×8 at most");
            let stack: Vec<Player> = pos.stack(sq).collect();
            let cell = match stack.last() {
                None => " . ".to_string(),
                Some(top) => format!(
                    "{}{:<2}",
                    if *top == Player::P1 { 'x' } else { 'o' },
                    stack.len()
                ),
            };
            let _ = write!(out, " {cell}");
        }
        out.push('\n');
    }
    out + &files(n, 4) + "\n  top piece and height; x = p1, o = p2\n"
}

fn pyrga_board(pos: &pyrga::Position) -> String {
    let mut out = String::new();
    for rank in (0..4).rev() {
        let _ = write!(out, "{}  ", rank + 1);
        for file in 0..4 {
            let space = Space::from_coords(file, rank).expect("4×4");
            let mut cell = String::new();
            for shape in Shape::ALL {
                if let Some((piece, owner)) = pos.piece_at(space, shape) {
                    let letter = shape.letter();
                    cell.push(if owner == Player::P1 {
                        letter
                    } else {
                        letter.to_ascii_lowercase()
                    });
                    if let pyrga::Piece::Triangle(d) = piece {
                        cell.push(d.arrow());
                    }
                }
            }
            if cell.is_empty() {
                cell.push('-');
            }
            let _ = write!(out, " {cell:^7}");
        }
        out.push('\n');
    }
    let last = pos.last().map_or("-".to_string(), |m| m.to_string());
    out + &files(4, 8) + &format!("\n  S T C = p1 (light), s t c = p2 (dark); last move {last}\n")
}

fn alcazar_board(pos: &alcazar::Position) -> String {
    let walls: Vec<Slot> = pos.walls().collect();
    let red = pos.knight(Player::P1).point();
    let green = pos.knight(Player::P2).point();
    let mut out = String::new();
    for y in (0..9i8).rev() {
        let _ = write!(out, "{} ", y + 1);
        for x in 0..9i8 {
            let p = Point::new(x, y);
            let wide = x % 2 == 1;
            let text = if x % 2 == 0 && y % 2 == 0 {
                "+".to_string()
            } else if x % 2 == 1 && y % 2 == 1 {
                let mark = if p == red {
                    'R'
                } else if p == green {
                    'G'
                } else if (p.x, p.y) == (1, 7) || (p.x, p.y) == (7, 1) {
                    '*'
                } else {
                    ' '
                };
                format!(" {mark} ")
            } else {
                let wall = Slot::from_point(p).is_some_and(|s| walls.contains(&s));
                match (wall, wide) {
                    (true, true) => "---".into(),
                    (true, false) => "|".into(),
                    (false, true) => "   ".into(),
                    (false, false) => " ".into(),
                }
            };
            out.push_str(&text);
        }
        out.push('\n');
    }
    out.push_str("  ");
    for x in 0..9u8 {
        let letter = (b'a' + x) as char;
        if x % 2 == 1 {
            let _ = write!(out, " {letter} ");
        } else {
            out.push(letter);
        }
    }
    out.push('\n');
    let frozen: Vec<String> = pos.frozen().map(|s| s.to_string()).collect();
    let _ = writeln!(
        out,
        "  R = Red (p1), G = Green (p2), * fortresses; frozen: {}",
        if frozen.is_empty() {
            "-".into()
        } else {
            frozen.join(",")
        }
    );
    out
}
