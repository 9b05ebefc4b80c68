//! The Pyrga position notation: `<rank4>/<rank3>/<rank2>/<rank1> <side> <last>`; a space is `-`
//! or its pieces in the order square, triangle (with its arrow), cylinder; upper case for `p1`.
//! Text to a [`Setup`] and back; only the syntax is checked here, the rules are
//! [`super::Position::from_setup`]'s.

use std::fmt;

use super::moves::Piece;
use super::setup::{Contents, Setup};
use super::space::{Dir, Space};
use crate::rules::game::Player;

/// Every way a Pyrga position string can fail to parse, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error("expected \"<ranks> <side> <last>\", found {found} space-separated fields")]
    FieldCount { found: usize },
    #[error("expected 4 ranks separated by '/', found {found}")]
    RankCount { found: usize },
    #[error("rank {rank} has {found} spaces, expected 4")]
    SpaceCount { rank: u8, found: usize },
    #[error("space {space} is empty text; write '-' for an empty space")]
    EmptySpace { space: Space },
    #[error("unexpected character {found:?} on {space} (expected S, T, C, s, t, c or -)")]
    UnexpectedChar { space: Space, found: char },
    #[error("the triangle on {space} has no direction arrow (^, >, v or <)")]
    MissingArrow { space: Space },
    #[error("{space} lists its pieces out of order or twice (square, triangle, cylinder)")]
    PieceOrder { space: Space },
    #[error("side to move must be 1 or 2, found {found:?}")]
    BadSide { found: String },
    #[error("the last move {found:?} is not in move notation (Sa1, Tb4W, Cc3) or '-'")]
    BadLast { found: String },
}

pub(super) fn parse(s: &str) -> Result<Setup, NotationError> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [board, side, last] = fields[..] else {
        return Err(NotationError::FieldCount {
            found: fields.len(),
        });
    };
    let turn = Player::from_digit(side).ok_or_else(|| NotationError::BadSide {
        found: side.to_string(),
    })?;
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 4 {
        return Err(NotationError::RankCount { found: ranks.len() });
    }
    let mut spaces = [Contents::default(); 16];
    for (i, text) in ranks.iter().enumerate() {
        let rank = 3 - i as u8;
        let texts: Vec<&str> = text.split(',').collect();
        if texts.len() != 4 {
            return Err(NotationError::SpaceCount {
                rank: rank + 1,
                found: texts.len(),
            });
        }
        for (file, text) in texts.iter().enumerate() {
            let space = Space::from_coords(file as u8, rank).expect("4×4");
            for (piece, owner) in parse_space(space, text)? {
                spaces[space.index()].put(piece, owner);
            }
        }
    }
    let last = if last == "-" {
        None
    } else {
        Some(last.parse().map_err(|_| NotationError::BadLast {
            found: last.to_string(),
        })?)
    };
    Ok(Setup { spaces, turn, last })
}

/// The pieces of one space, checked for order and arrows.
fn parse_space(space: Space, text: &str) -> Result<Vec<(Piece, Player)>, NotationError> {
    if text.is_empty() {
        return Err(NotationError::EmptySpace { space });
    }
    if text == "-" {
        return Ok(Vec::new());
    }
    let mut pieces = Vec::new();
    let mut next_shape = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let owner = if c.is_ascii_uppercase() {
            Player::P1
        } else {
            Player::P2
        };
        let piece = match c.to_ascii_uppercase() {
            'S' if c.is_ascii_alphabetic() => Piece::Square,
            'C' if c.is_ascii_alphabetic() => Piece::Cylinder,
            'T' if c.is_ascii_alphabetic() => {
                let dir = chars
                    .clone()
                    .next()
                    .and_then(Dir::from_arrow)
                    .ok_or(NotationError::MissingArrow { space })?;
                chars.next();
                Piece::Triangle(dir)
            }
            _ => return Err(NotationError::UnexpectedChar { space, found: c }),
        };
        let shape = piece.shape() as usize;
        if shape < next_shape {
            return Err(NotationError::PieceOrder { space });
        }
        next_shape = shape + 1;
        pieces.push((piece, owner));
    }
    Ok(pieces)
}

pub(super) fn write(setup: &Setup, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for rank in (0..4).rev() {
        for file in 0..4 {
            let space = Space::from_coords(file, rank).expect("4×4");
            let mut any = false;
            for (piece, owner) in setup.spaces[space.index()].pieces() {
                any = true;
                let letter = piece.shape().letter();
                let letter = if owner == Player::P1 {
                    letter
                } else {
                    letter.to_ascii_lowercase()
                };
                write!(f, "{letter}")?;
                if let Piece::Triangle(d) = piece {
                    write!(f, "{}", d.arrow())?;
                }
            }
            if !any {
                f.write_str("-")?;
            }
            if file < 3 {
                f.write_str(",")?;
            }
        }
        if rank > 0 {
            f.write_str("/")?;
        }
    }
    match setup.last {
        Some(mv) => write!(f, " {} {mv}", setup.turn.digit()),
        None => write!(f, " {} -", setup.turn.digit()),
    }
}
