//! The Pyrga position notation: `<rank4>/<rank3>/<rank2>/<rank1> <side> <last>`; a space is `-`
//! or its pieces in the order square, triangle (with its arrow), cylinder; upper case for `p1`.

use std::fmt;

use super::moves::{Move, Piece, Shape};
use super::position::{PIECES_PER_SHAPE, Position};
use super::space::{Dir, RAYS, Space};
use crate::rules::game::{Game, Player};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
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
    #[error("the triangle on {space} points off the board")]
    TriangleOffBoard { space: Space },
    #[error("{space} lists its pieces out of order or twice (square, triangle, cylinder)")]
    PieceOrder { space: Space },
    #[error("{player} has {found} {shape:?} pieces on the board, at most 5 exist")]
    TooManyPieces {
        player: Player,
        shape: Shape,
        found: u32,
    },
    #[error("side to move must be 1 or 2, found {found:?}")]
    BadSide { found: String },
    #[error("p1 has {p1} pieces and p2 {p2}, which does not fit {side} being to move")]
    PieceBalance { p1: u32, p2: u32, side: Player },
    #[error("the last move {found:?} is not in move notation (Sa1, Tb4W, Cc3) or '-'")]
    BadLast { found: String },
    #[error("the last move is '-' but the board is not empty")]
    MissingLast,
    #[error("the board is empty but a last move {last} is given")]
    LastOnEmptyBoard { last: Move },
    #[error("the last move {last} is not on the board as a piece of {player}")]
    LastNotOnBoard { last: Move, player: Player },
    #[error("both players control three completed towers")]
    BothWon,
}

pub(super) fn parse(s: &str) -> Result<Position, PositionError> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [board, side, last] = fields[..] else {
        return Err(PositionError::FieldCount {
            found: fields.len(),
        });
    };
    let side = Player::from_digit(side).ok_or_else(|| PositionError::BadSide {
        found: side.to_string(),
    })?;
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 4 {
        return Err(PositionError::RankCount { found: ranks.len() });
    }
    let mut pos = Position::empty();
    for (i, text) in ranks.iter().enumerate() {
        let rank = 3 - i as u8;
        let spaces: Vec<&str> = text.split(',').collect();
        if spaces.len() != 4 {
            return Err(PositionError::SpaceCount {
                rank: rank + 1,
                found: spaces.len(),
            });
        }
        for (file, text) in spaces.iter().enumerate() {
            let space = Space::from_coords(file as u8, rank).expect("4×4");
            for (piece, owner) in parse_space(space, text)? {
                pos.put(space, piece, owner);
            }
        }
    }
    let counts = Player::BOTH.map(|p| pos.pieces_of(p));
    for p in Player::BOTH {
        for shape in Shape::ALL {
            let found = pos.on_board(p, shape);
            if found > PIECES_PER_SHAPE {
                return Err(PositionError::TooManyPieces {
                    player: p,
                    shape,
                    found,
                });
            }
        }
    }
    let balanced = match side {
        Player::P1 => counts[0] == counts[1],
        Player::P2 => counts[0] == counts[1] + 1,
    };
    if !balanced {
        return Err(PositionError::PieceBalance {
            p1: counts[0],
            p2: counts[1],
            side,
        });
    }
    let last = if last == "-" {
        if counts[0] + counts[1] > 0 {
            return Err(PositionError::MissingLast);
        }
        None
    } else {
        let mv: Move = last.parse().map_err(|_| PositionError::BadLast {
            found: last.to_string(),
        })?;
        if counts[0] + counts[1] == 0 {
            return Err(PositionError::LastOnEmptyBoard { last: mv });
        }
        let mover = side.other();
        if pos.piece_at(mv.space, mv.piece.shape()) != Some((mv.piece, mover)) {
            return Err(PositionError::LastNotOnBoard {
                last: mv,
                player: mover,
            });
        }
        Some(mv)
    };
    if pos.towers().iter().all(|&t| t >= 3) {
        return Err(PositionError::BothWon);
    }
    Ok(pos.finish(side, last))
}

/// The pieces of one space, validated for order, arrows and direction.
fn parse_space(space: Space, text: &str) -> Result<Vec<(Piece, Player)>, PositionError> {
    if text.is_empty() {
        return Err(PositionError::EmptySpace { space });
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
                    .ok_or(PositionError::MissingArrow { space })?;
                chars.next();
                if RAYS[dir as usize][space.index()] == 0 {
                    return Err(PositionError::TriangleOffBoard { space });
                }
                Piece::Triangle(dir)
            }
            _ => return Err(PositionError::UnexpectedChar { space, found: c }),
        };
        let shape = piece.shape() as usize;
        if shape < next_shape {
            return Err(PositionError::PieceOrder { space });
        }
        next_shape = shape + 1;
        pieces.push((piece, owner));
    }
    Ok(pieces)
}

pub(super) fn write(pos: &Position, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for rank in (0..4).rev() {
        for file in 0..4 {
            let space = Space::from_coords(file, rank).expect("4×4");
            let mut any = false;
            for shape in Shape::ALL {
                if let Some((piece, owner)) = pos.piece_at(space, shape) {
                    any = true;
                    let letter = shape.letter();
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
    match pos.last() {
        Some(mv) => write!(f, " {} {mv}", pos.turn().digit()),
        None => write!(f, " {} -", pos.turn().digit()),
    }
}
