//! The Alcazar position notation: `<walls> <red knight> <green knight> <side> <frozen>`.

use std::fmt;

use super::lattice::{Point, Slot, Square, TABLES};
use super::position::Position;
use crate::rules::bits::ones;
use crate::rules::game::{Game, Player};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error(
        "expected \"<walls> <red knight> <green knight> <side> <frozen>\", found {found} space-separated fields"
    )]
    FieldCount { found: usize },
    #[error("{found:?} is not a wall slot (a point with a mixed-parity file and rank, a2…h9)")]
    NotASlot { found: String },
    #[error("expected 8 walls, found {found}")]
    WallCount { found: usize },
    #[error("walls must be listed once each, sorted by file then rank; {found} is out of place")]
    WallsUnsorted { found: Slot },
    #[error("{found:?} is not a square (a point with an even file and rank, b2…h8)")]
    NotASquare { found: String },
    #[error("both knights stand on {square}")]
    KnightsTogether { square: Square },
    #[error("side to move must be 1 or 2, found {found:?}")]
    BadSide { found: String },
    #[error(
        "frozen walls must be listed once each, sorted by file then rank; {found} is out of place"
    )]
    FrozenUnsorted { found: Slot },
    #[error("{slot} is listed as frozen but holds no wall")]
    FrozenNotAWall { slot: Slot },
    #[error(
        "the frozen walls are not those touching the ends of one swung wall (a swing freezes the wall and every wall touching its two end towers)"
    )]
    FrozenInconsistent,
    #[error("both knights stand in their opponent's fortress")]
    BothInFortress,
    #[error("{player} has won (its knight is in the opponent's fortress) but is to move")]
    WinnerToMove { player: Player },
    #[error("{player}'s knight is walled in although {player} has just moved")]
    MoverTrapped { player: Player },
}

fn slots(text: &str, unsorted: fn(Slot) -> PositionError) -> Result<Vec<Slot>, PositionError> {
    let mut out: Vec<Slot> = Vec::new();
    for part in text.split(',') {
        let slot = Point::parse(part)
            .and_then(Slot::from_point)
            .ok_or_else(|| PositionError::NotASlot {
                found: part.to_string(),
            })?;
        if out.last().is_some_and(|&last| last >= slot) {
            return Err(unsorted(slot));
        }
        out.push(slot);
    }
    Ok(out)
}

fn square(text: &str) -> Result<u8, PositionError> {
    Point::parse(text)
        .and_then(Square::from_point)
        .map(|s| s.index() as u8)
        .ok_or_else(|| PositionError::NotASquare {
            found: text.to_string(),
        })
}

pub(super) fn parse(s: &str) -> Result<Position, PositionError> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [walls, red, green, side, frozen] = fields[..] else {
        return Err(PositionError::FieldCount {
            found: fields.len(),
        });
    };
    let walls = slots(walls, |found| PositionError::WallsUnsorted { found })?;
    if walls.len() != 8 {
        return Err(PositionError::WallCount { found: walls.len() });
    }
    let wall_bits = walls.iter().fold(0u64, |m, s| m | s.bit());
    let knights = [square(red)?, square(green)?];
    if knights[0] == knights[1] {
        return Err(PositionError::KnightsTogether {
            square: Square::from_point(Point::parse(red).expect("parsed")).expect("parsed"),
        });
    }
    let side = Player::from_digit(side).ok_or_else(|| PositionError::BadSide {
        found: side.to_string(),
    })?;
    let frozen_bits = if frozen == "-" {
        0
    } else {
        let frozen = slots(frozen, |found| PositionError::FrozenUnsorted { found })?;
        let bits = frozen.iter().fold(0u64, |m, s| m | s.bit());
        if let Some(slot) = frozen.iter().find(|s| wall_bits & s.bit() == 0) {
            return Err(PositionError::FrozenNotAWall { slot: *slot });
        }
        let explained = ones(bits).any(|w| wall_bits & TABLES.freeze[w as usize] == bits);
        if !explained {
            return Err(PositionError::FrozenInconsistent);
        }
        bits
    };
    let pos = Position::from_parts(wall_bits, knights, side, frozen_bits);
    let in_fortress: Vec<Player> = Player::BOTH
        .into_iter()
        .filter(|p| knights[p.index()] == super::position::FORTRESS[p.other().index()])
        .collect();
    match in_fortress[..] {
        [_, _] => return Err(PositionError::BothInFortress),
        [p] if p == side => return Err(PositionError::WinnerToMove { player: p }),
        _ => {}
    }
    if pos.trapped(side.other()) {
        return Err(PositionError::MoverTrapped {
            player: side.other(),
        });
    }
    Ok(pos)
}

pub(super) fn write(pos: &Position, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let list = |bits: u64| {
        ones(bits)
            .map(|i| Slot::from_index_unchecked(i).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let frozen = if pos.frozen_bits() == 0 {
        "-".to_string()
    } else {
        list(pos.frozen_bits())
    };
    write!(
        f,
        "{} {} {} {} {}",
        list(pos.wall_bits()),
        pos.knight(Player::P1),
        pos.knight(Player::P2),
        pos.turn().digit(),
        frozen
    )
}
