//! Alcazar moves: `Kd8` (the knight steps to d8) and `e8d9` (the wall on e8 swings to d9).

use std::fmt;

use super::lattice::{Point, Slot, Square};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Step(Square),
    Swing { from: Slot, to: Slot },
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Piece by piece rather than `write!`: see `rules::coordinate`.
        match self {
            Move::Step(to) => {
                f.write_str("K")?;
                fmt::Display::fmt(&to, f)
            }
            Move::Swing { from, to } => {
                fmt::Display::fmt(&from, f)?;
                fmt::Display::fmt(&to, f)
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not an Alcazar move (expected Kd8 or a wall swing like e8d9)")]
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
        if !s.is_ascii() {
            return Err(err());
        }
        match s.len() {
            3 if s.starts_with('k') => Point::parse(&s[1..])
                .and_then(Square::from_point)
                .map(Move::Step)
                .ok_or_else(err),
            4 => {
                let slot = |t: &str| Point::parse(t).and_then(Slot::from_point);
                match (slot(&s[..2]), slot(&s[2..])) {
                    (Some(from), Some(to)) => Ok(Move::Swing { from, to }),
                    _ => Err(err()),
                }
            }
            _ => Err(err()),
        }
    }
}
