//! Pyrga moves: `Sa1`, `Cc3`, `Tb4W`.

use std::fmt;

use super::space::{Dir, Space};

/// The three shapes, in the order the position notation lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Square = 0,
    Triangle = 1,
    Cylinder = 2,
}

impl Shape {
    pub const ALL: [Shape; 3] = [Shape::Square, Shape::Triangle, Shape::Cylinder];

    /// The upper-case letter (`p1`'s in the position notation).
    pub const fn letter(self) -> char {
        match self {
            Shape::Square => 'S',
            Shape::Triangle => 'T',
            Shape::Cylinder => 'C',
        }
    }
}

/// A piece as placed: triangles carry their direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Piece {
    Square,
    Triangle(Dir),
    Cylinder,
}

impl Piece {
    pub const fn shape(self) -> Shape {
        match self {
            Piece::Square => Shape::Square,
            Piece::Triangle(_) => Shape::Triangle,
            Piece::Cylinder => Shape::Cylinder,
        }
    }

    /// 0–5: square, cylinder, then the triangle per direction (for hash keys).
    pub(super) const fn code(self) -> usize {
        match self {
            Piece::Square => 0,
            Piece::Cylinder => 1,
            Piece::Triangle(d) => 2 + d as usize,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub piece: Piece,
    pub space: Space,
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Piece by piece rather than `write!`: see `rules::coordinate`.
        use fmt::Write;
        f.write_char(self.piece.shape().letter())?;
        fmt::Display::fmt(&self.space, f)?;
        if let Piece::Triangle(d) = self.piece {
            f.write_char(d.letter())?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a Pyrga move (expected Sa1, Cc3 or Tb4W)")]
pub struct MoveParseError {
    pub input: String,
}

impl std::str::FromStr for Move {
    type Err = MoveParseError;

    /// Lenient: any case, white space anywhere.
    fn from_str(input: &str) -> Result<Move, MoveParseError> {
        let s = crate::rules::bits::lenient(input);
        let err = || MoveParseError {
            input: input.to_string(),
        };
        if !s.is_ascii() || s.len() < 3 {
            return Err(err());
        }
        let space = Space::parse(&s[1..3]).ok_or_else(err)?;
        let piece = match (&s[..1], &s[3..]) {
            ("s", "") => Piece::Square,
            ("c", "") => Piece::Cylinder,
            ("t", d) if d.len() == 1 => {
                Piece::Triangle(Dir::from_letter(d.chars().next().expect("one")).ok_or_else(err)?)
            }
            _ => return Err(err()),
        };
        Ok(Move { piece, space })
    }
}
