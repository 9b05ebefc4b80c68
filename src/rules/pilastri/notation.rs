//! The Pilastri position notation: ranks from the top, squares separated by `,`, each square
//! `-` or its stack bottom to top (`x` = `p1`, `o` = `p2`), then the side to move.

use std::fmt;

use super::position::Position;
use super::square::Square;
use crate::rules::game::{Game, Player};
use crate::rules::kind::{Variant, Variants};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("expected \"<ranks> <side>\", found {found} space-separated fields")]
    FieldCount { found: usize },
    #[error("expected 6 or 8 ranks separated by '/', found {found}")]
    RankCount { found: usize },
    #[error("the size-8 variant needs 8 ranks, found {found}")]
    SizeMismatch { found: usize },
    #[error("rank {rank} has {found} squares, expected {expected}")]
    SquareCount {
        rank: u8,
        found: usize,
        expected: usize,
    },
    #[error("square {square} is empty text; write '-' for an empty square")]
    EmptySquare { square: Square },
    #[error("unexpected character {found:?} on {square} (expected x, o or a lone -)")]
    UnexpectedChar { square: Square, found: char },
    #[error("side to move must be 1 or 2, found {found:?}")]
    BadSide { found: String },
    #[error("{player} has {found} pieces on the board, expected {expected}")]
    PieceCount {
        player: Player,
        found: usize,
        expected: usize,
    },
}

pub(super) fn parse(s: &str, variants: Variants) -> Result<Position, PositionError> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [board, side] = fields[..] else {
        return Err(PositionError::FieldCount {
            found: fields.len(),
        });
    };
    let side = Player::from_digit(side).ok_or_else(|| PositionError::BadSide {
        found: side.to_string(),
    })?;
    let ranks: Vec<&str> = board.split('/').collect();
    let size = ranks.len();
    if size != 6 && size != 8 {
        return Err(PositionError::RankCount { found: size });
    }
    if variants.contains(Variant::Size8) && size != 8 {
        return Err(PositionError::SizeMismatch { found: size });
    }
    let mut stacks: [Vec<Player>; 64] = std::array::from_fn(|_| Vec::new());
    let mut counts = [0usize; 2];
    for (i, text) in ranks.iter().enumerate() {
        let rank = (size - 1 - i) as u8;
        let squares: Vec<&str> = text.split(',').collect();
        if squares.len() != size {
            return Err(PositionError::SquareCount {
                rank: rank + 1,
                found: squares.len(),
                expected: size,
            });
        }
        for (file, cell) in squares.iter().enumerate() {
            let square = Square::from_coords(file as u8, rank).expect("at most 8×8");
            if cell.is_empty() {
                return Err(PositionError::EmptySquare { square });
            }
            if *cell == "-" {
                continue;
            }
            for c in cell.chars() {
                let player = match c {
                    'x' => Player::P1,
                    'o' => Player::P2,
                    found => return Err(PositionError::UnexpectedChar { square, found }),
                };
                counts[player.index()] += 1;
                stacks[square.index()].push(player);
            }
        }
    }
    let expected = size * size / 2;
    for p in Player::BOTH {
        if counts[p.index()] != expected {
            return Err(PositionError::PieceCount {
                player: p,
                found: counts[p.index()],
                expected,
            });
        }
    }
    Ok(Position::from_stacks(
        size as u8,
        variants.contains(Variant::Jumpers),
        &stacks,
        side,
    ))
}

pub(super) fn write(pos: &Position, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let size = pos.size();
    for rank in (0..size).rev() {
        for file in 0..size {
            let sq = Square::from_coords(file, rank).expect("at most 8×8");
            if pos.height(sq) == 0 {
                f.write_str("-")?;
            }
            for p in pos.stack(sq) {
                f.write_str(if p == Player::P1 { "x" } else { "o" })?;
            }
            if file + 1 < size {
                f.write_str(",")?;
            }
        }
        if rank > 0 {
            f.write_str("/")?;
        }
    }
    write!(f, " {}", pos.turn().digit())
}
