//! The pillarz position notation: `<rank5>/<rank4>/<rank3>/<rank2>/<rank1> <side>`, each square
//! a level digit optionally followed by `x` (a `p1` pawn) or `o` (a `p2` pawn). Text to a
//! [`Setup`] and back; only the syntax is checked here, the rules are
//! [`super::Position::from_setup`]'s.

use std::fmt;

use super::setup::Setup;
use super::square::Square;
use crate::rules::game::Player;

/// Every way a pillarz position string can fail to parse, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error("expected \"<ranks> <side>\", found {found} space-separated fields")]
    FieldCount { found: usize },
    #[error("expected 5 ranks separated by '/', found {found}")]
    RankCount { found: usize },
    #[error("rank {rank} has {found} squares, expected 5")]
    SquareCount { rank: u8, found: usize },
    #[error("unexpected character {found:?} in rank {rank} (expected a level digit, x or o)")]
    UnexpectedChar { rank: u8, found: char },
    #[error("two pawns on {square}")]
    TwoPawnsOnSquare { square: Square },
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
    if ranks.len() != 5 {
        return Err(NotationError::RankCount { found: ranks.len() });
    }
    let mut setup = Setup {
        levels: [0; Square::COUNT],
        pawns: [None; Square::COUNT],
        turn,
    };
    for (i, text) in ranks.iter().enumerate() {
        let rank = 4 - i as u8;
        let squares = parse_rank(rank, text)?;
        for (file, (level, pawn)) in squares.into_iter().enumerate() {
            let sq = Square::from_coords(file as u8, rank).expect("5×5");
            setup.levels[sq.index()] = level;
            setup.pawns[sq.index()] = pawn;
        }
    }
    Ok(setup)
}

/// One rank's squares as (level, pawn); errors name the rank by its number (1–5).
fn parse_rank(rank: u8, text: &str) -> Result<Vec<(u8, Option<Player>)>, NotationError> {
    let mut squares: Vec<(u8, Option<Player>)> = Vec::with_capacity(5);
    for c in text.chars() {
        match c {
            '0'..='9' => squares.push((c as u8 - b'0', None)),
            'x' | 'o' => {
                let player = if c == 'x' { Player::P1 } else { Player::P2 };
                let Some(last) = squares.last_mut() else {
                    return Err(NotationError::UnexpectedChar {
                        rank: rank + 1,
                        found: c,
                    });
                };
                if last.1.is_some() {
                    let square =
                        Square::from_coords((squares.len() - 1).min(4) as u8, rank).expect("5×5");
                    return Err(NotationError::TwoPawnsOnSquare { square });
                }
                last.1 = Some(player);
            }
            _ => {
                return Err(NotationError::UnexpectedChar {
                    rank: rank + 1,
                    found: c,
                });
            }
        }
    }
    if squares.len() != 5 {
        return Err(NotationError::SquareCount {
            rank: rank + 1,
            found: squares.len(),
        });
    }
    Ok(squares)
}

pub(super) fn write(setup: &Setup, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for rank in (0..5).rev() {
        for file in 0..5 {
            let sq = Square::from_coords(file, rank).expect("5×5").index();
            write!(f, "{}", setup.levels[sq])?;
            match setup.pawns[sq] {
                Some(Player::P1) => f.write_str("x")?,
                Some(Player::P2) => f.write_str("o")?,
                None => {}
            }
        }
        if rank > 0 {
            f.write_str("/")?;
        }
    }
    write!(f, " {}", setup.turn.digit())
}
