//! The Pilastri position notation: ranks from the top, squares separated by `,`, each square
//! `-` or its stack bottom to top (`x` = `p1`, `o` = `p2`), then the side to move. Text to a
//! [`Setup`] and back; only the syntax is checked here, the rules are
//! [`super::Position::from_setup`]'s.

use std::fmt;

use super::setup::Setup;
use super::square::Square;
use crate::rules::game::Player;

/// Every way a Pilastri position string can fail to parse, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error("expected \"<ranks> <side>\", found {found} space-separated fields")]
    FieldCount { found: usize },
    #[error("expected 6 or 8 ranks separated by '/', found {found}")]
    RankCount { found: usize },
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
}

pub(super) fn parse(s: &str) -> Result<Setup, NotationError> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [board, side] = fields[..] else {
        return Err(NotationError::FieldCount {
            found: fields.len(),
        });
    };
    let turn = Player::from_digit(side).ok_or_else(|| NotationError::BadSide {
        found: side.to_string(),
    })?;
    let ranks: Vec<&str> = board.split('/').collect();
    let size = ranks.len();
    if size != 6 && size != 8 {
        return Err(NotationError::RankCount { found: size });
    }
    let mut stacks: [Vec<Player>; 64] = std::array::from_fn(|_| Vec::new());
    for (i, text) in ranks.iter().enumerate() {
        let rank = (size - 1 - i) as u8;
        let squares: Vec<&str> = text.split(',').collect();
        if squares.len() != size {
            return Err(NotationError::SquareCount {
                rank: rank + 1,
                found: squares.len(),
                expected: size,
            });
        }
        for (file, cell) in squares.iter().enumerate() {
            let square = Square::from_coords(file as u8, rank).expect("at most 8×8");
            if cell.is_empty() {
                return Err(NotationError::EmptySquare { square });
            }
            if *cell == "-" {
                continue;
            }
            for c in cell.chars() {
                let player = match c {
                    'x' => Player::P1,
                    'o' => Player::P2,
                    found => return Err(NotationError::UnexpectedChar { square, found }),
                };
                stacks[square.index()].push(player);
            }
        }
    }
    Ok(Setup {
        size: size as u8,
        stacks,
        turn,
    })
}

pub(super) fn write(setup: &Setup, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let size = setup.size;
    for rank in (0..size).rev() {
        for file in 0..size {
            let stack = &setup.stacks[Square::from_coords(file, rank).expect("8×8").index()];
            if stack.is_empty() {
                f.write_str("-")?;
            }
            for p in stack {
                f.write_str(if *p == Player::P1 { "x" } else { "o" })?;
            }
            if file + 1 < size {
                f.write_str(",")?;
            }
        }
        if rank > 0 {
            f.write_str("/")?;
        }
    }
    write!(f, " {}", setup.turn.digit())
}
