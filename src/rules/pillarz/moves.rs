//! pillarz moves and their notation: `c2+d3` (placement), `b2-c3^d4` (turn), `b2-c3` (winning
//! step).

use std::fmt;

use super::square::Square;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Both pawns placed at once; canonically the lower square first.
    Place(Square, Square),
    /// A step, then a build (no build only for the winning step onto level 3).
    Step {
        from: Square,
        to: Square,
        build: Option<Square>,
    },
}

impl Move {
    /// A placement with its squares in canonical order.
    pub fn place(a: Square, b: Square) -> Move {
        if a <= b {
            Move::Place(a, b)
        } else {
            Move::Place(b, a)
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Piece by piece rather than `write!`: see `rules::coordinate`.
        match *self {
            Move::Place(a, b) => {
                fmt::Display::fmt(&a, f)?;
                f.write_str("+")?;
                fmt::Display::fmt(&b, f)
            }
            Move::Step { from, to, build } => {
                fmt::Display::fmt(&from, f)?;
                f.write_str("-")?;
                fmt::Display::fmt(&to, f)?;
                match build {
                    Some(b) => {
                        f.write_str("^")?;
                        fmt::Display::fmt(&b, f)
                    }
                    None => Ok(()),
                }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a pillarz move (expected c2+d3, b2-c3^d4 or b2-c3)")]
pub struct MoveParseError {
    pub input: String,
}

impl std::str::FromStr for Move {
    type Err = MoveParseError;

    /// Lenient: any case, white space anywhere.
    fn from_str(input: &str) -> Result<Move, MoveParseError> {
        let err = || MoveParseError {
            input: input.to_string(),
        };
        let s = crate::rules::bits::lenient(input);
        let sq = |part: &str| Square::parse(part).ok_or_else(err);
        if let Some((a, b)) = s.split_once('+') {
            return Ok(Move::place(sq(a)?, sq(b)?));
        }
        let (from, rest) = s.split_once('-').ok_or_else(err)?;
        let (to, build) = match rest.split_once('^') {
            Some((to, build)) => (to, Some(sq(build)?)),
            None => (rest, None),
        };
        Ok(Move::Step {
            from: sq(from)?,
            to: sq(to)?,
            build,
        })
    }
}
