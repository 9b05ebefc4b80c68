//! The pillarz position notation: `<rank5>/<rank4>/<rank3>/<rank2>/<rank1> <side>`, each square
//! a level digit optionally followed by `x` (a `p1` pawn) or `o` (a `p2` pawn).

use std::fmt;

use super::position::Position;
use super::square::Square;
use crate::rules::game::{Game, Player};

/// Every way a pillarz position string can be wrong, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("expected \"<ranks> <side>\", found {found} space-separated fields")]
    FieldCount { found: usize },
    #[error("expected 5 ranks separated by '/', found {found}")]
    RankCount { found: usize },
    #[error("rank {rank} has {found} squares, expected 5")]
    SquareCount { rank: u8, found: usize },
    #[error("level {level} on {square} is outside 0-4")]
    LevelOutOfRange { square: Square, level: char },
    #[error("unexpected character {found:?} in rank {rank} (expected a level digit, x or o)")]
    UnexpectedChar { rank: u8, found: char },
    #[error("two pawns on {square}")]
    TwoPawnsOnSquare { square: Square },
    #[error("a pawn on the capped square {square}")]
    PawnOnCap { square: Square },
    #[error("side to move must be 1 or 2, found {found:?}")]
    BadSide { found: String },
    #[error("{player} has {found} pawns; a player has 0 pawns before placing and 2 after")]
    PawnCount { player: Player, found: u32 },
    #[error("p2 has placed its pawns but p1 has not")]
    PlacementOrder,
    #[error("{expected} is to place its pawns, but the side to move is {found}")]
    PlacementSide { expected: Player, found: Player },
    #[error("buildings on the board before both players have placed their pawns")]
    BuiltBeforePlacement,
    #[error("pawns of both players stand on level 3")]
    BothOnTop,
    #[error("{player} has two pawns on level 3; only the winning pawn can stand there")]
    TwoOnTop { player: Player },
    #[error("{player} has won (a pawn on level 3) but is to move")]
    WinnerToMove { player: Player },
}

pub(super) fn parse(s: &str) -> Result<Position, PositionError> {
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
    if ranks.len() != 5 {
        return Err(PositionError::RankCount { found: ranks.len() });
    }
    let mut levels = [0u32; 4];
    let mut pawns = [0u32; 2];
    for (i, text) in ranks.iter().enumerate() {
        let rank = 4 - i as u8;
        let squares = parse_rank(rank, text)?;
        for (file, (level, pawn)) in squares.into_iter().enumerate() {
            let sq = Square::from_coords(file as u8, rank).expect("5×5");
            for plane in levels.iter_mut().take(level as usize) {
                *plane |= sq.bit();
            }
            if let Some(p) = pawn {
                if level == 4 {
                    return Err(PositionError::PawnOnCap { square: sq });
                }
                pawns[p.index()] |= sq.bit();
            }
        }
    }
    validate(levels, pawns, side)?;
    Ok(Position::from_parts(levels, pawns, side))
}

/// One rank's squares as (level, pawn); errors name the rank by its number (1–5).
fn parse_rank(rank: u8, text: &str) -> Result<Vec<(u8, Option<Player>)>, PositionError> {
    let mut squares: Vec<(u8, Option<Player>)> = Vec::with_capacity(5);
    for c in text.chars() {
        match c {
            '0'..='4' => squares.push((c as u8 - b'0', None)),
            '5'..='9' => {
                let square = Square::from_coords(squares.len().min(4) as u8, rank).expect("5×5");
                return Err(PositionError::LevelOutOfRange { square, level: c });
            }
            'x' | 'o' => {
                let player = if c == 'x' { Player::P1 } else { Player::P2 };
                let Some(last) = squares.last_mut() else {
                    return Err(PositionError::UnexpectedChar {
                        rank: rank + 1,
                        found: c,
                    });
                };
                if last.1.is_some() {
                    let square =
                        Square::from_coords((squares.len() - 1).min(4) as u8, rank).expect("5×5");
                    return Err(PositionError::TwoPawnsOnSquare { square });
                }
                last.1 = Some(player);
            }
            _ => {
                return Err(PositionError::UnexpectedChar {
                    rank: rank + 1,
                    found: c,
                });
            }
        }
    }
    if squares.len() != 5 {
        return Err(PositionError::SquareCount {
            rank: rank + 1,
            found: squares.len(),
        });
    }
    Ok(squares)
}

fn validate(levels: [u32; 4], pawns: [u32; 2], side: Player) -> Result<(), PositionError> {
    let counts = pawns.map(u32::count_ones);
    for p in Player::BOTH {
        let found = counts[p.index()];
        if found != 0 && found != 2 {
            return Err(PositionError::PawnCount { player: p, found });
        }
    }
    match counts {
        [0, 2] => return Err(PositionError::PlacementOrder),
        [0, 0] | [2, 0] => {
            let expected = if counts[0] == 0 {
                Player::P1
            } else {
                Player::P2
            };
            if side != expected {
                return Err(PositionError::PlacementSide {
                    expected,
                    found: side,
                });
            }
            if levels[0] != 0 {
                return Err(PositionError::BuiltBeforePlacement);
            }
        }
        _ => {}
    }
    let top = levels[2] & !levels[3];
    let on_top = pawns.map(|p| (p & top).count_ones());
    if on_top[0] > 0 && on_top[1] > 0 {
        return Err(PositionError::BothOnTop);
    }
    for p in Player::BOTH {
        match on_top[p.index()] {
            0 => {}
            1 if p == side => return Err(PositionError::WinnerToMove { player: p }),
            1 => {}
            _ => return Err(PositionError::TwoOnTop { player: p }),
        }
    }
    Ok(())
}

pub(super) fn write(pos: &Position, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for rank in (0..5).rev() {
        for file in 0..5 {
            let sq = Square::from_coords(file, rank).expect("5×5");
            write!(f, "{}", pos.level(sq))?;
            match pos.pawn_at(sq) {
                Some(Player::P1) => f.write_str("x")?,
                Some(Player::P2) => f.write_str("o")?,
                None => {}
            }
        }
        if rank > 0 {
            f.write_str("/")?;
        }
    }
    write!(f, " {}", pos.turn().digit())
}
