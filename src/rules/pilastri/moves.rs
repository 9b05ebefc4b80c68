//! Pilastri moves: `c3-c5`, the top piece of c3 onto the first stack towards c5.

use std::fmt;

use super::square::Square;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: Square,
    pub to: Square,
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Piece by piece rather than `write!`: see `rules::coordinate`.
        fmt::Display::fmt(&self.from, f)?;
        f.write_str("-")?;
        fmt::Display::fmt(&self.to, f)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a Pilastri move (expected <from>-<to>, e.g. c3-c5)")]
pub struct MoveParseError {
    pub input: String,
}

impl std::str::FromStr for Move {
    type Err = MoveParseError;

    /// Lenient: any case, white space anywhere.
    fn from_str(input: &str) -> Result<Move, MoveParseError> {
        let s = crate::rules::bits::lenient(input);
        s.split_once('-')
            .and_then(|(a, b)| {
                Some(Move {
                    from: Square::parse(a)?,
                    to: Square::parse(b)?,
                })
            })
            .ok_or_else(|| MoveParseError {
                input: input.to_string(),
            })
    }
}
