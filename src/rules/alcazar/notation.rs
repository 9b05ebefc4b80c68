//! The Alcazar position notation: `<walls> <red knight> <green knight> <side> <frozen>`. Text
//! to a [`Setup`] and back; only the syntax is checked here, the rules are
//! [`super::Position::from_setup`]'s.

use std::fmt;

use super::lattice::{Point, Slot, Square};
use super::setup::Setup;
use crate::rules::game::Player;

/// Every way an Alcazar position string can fail to parse, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error(
        "expected \"<walls> <red knight> <green knight> <side> <frozen>\", found {found} space-separated fields"
    )]
    FieldCount { found: usize },
    #[error(
        "{found:?} is not a wall slot (a point with a mixed-parity file and rank: a2, b1, e8, h9 and so on)"
    )]
    NotASlot { found: String },
    #[error("walls must be listed once each, sorted by file then rank; {found} is out of place")]
    WallsUnsorted { found: Slot },
    #[error("{found:?} is not a square (a point with an even file and rank, b2…h8)")]
    NotASquare { found: String },
    #[error("side to move must be 1 or 2, found {found:?}")]
    BadSide { found: String },
    #[error(
        "frozen walls must be listed once each, sorted by file then rank; {found} is out of place"
    )]
    FrozenUnsorted { found: Slot },
}

fn slots(text: &str, unsorted: fn(Slot) -> NotationError) -> Result<Vec<Slot>, NotationError> {
    let mut out: Vec<Slot> = Vec::new();
    for part in text.split(',') {
        let slot = Point::parse(part)
            .and_then(Slot::from_point)
            .ok_or_else(|| NotationError::NotASlot {
                found: part.to_string(),
            })?;
        if out.last().is_some_and(|&last| last >= slot) {
            return Err(unsorted(slot));
        }
        out.push(slot);
    }
    Ok(out)
}

fn square(text: &str) -> Result<Square, NotationError> {
    Point::parse(text)
        .and_then(Square::from_point)
        .ok_or_else(|| NotationError::NotASquare {
            found: text.to_string(),
        })
}

pub(super) fn parse(s: &str) -> Result<Setup, NotationError> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [walls, red, green, side, frozen] = fields[..] else {
        return Err(NotationError::FieldCount {
            found: fields.len(),
        });
    };
    let walls = slots(walls, |found| NotationError::WallsUnsorted { found })?;
    let knights = [square(red)?, square(green)?];
    let turn = Player::from_digit(side).ok_or_else(|| NotationError::BadSide {
        found: side.to_string(),
    })?;
    let frozen = if frozen == "-" {
        Vec::new()
    } else {
        slots(frozen, |found| NotationError::FrozenUnsorted { found })?
    };
    Ok(Setup {
        walls,
        knights,
        turn,
        frozen,
    })
}

pub(super) fn write(setup: &Setup, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let list = |slots: &[Slot]| {
        slots
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let frozen = if setup.frozen.is_empty() {
        "-".to_string()
    } else {
        list(&setup.frozen)
    };
    write!(
        f,
        "{} {} {} {} {}",
        list(&setup.walls),
        setup.knights[0],
        setup.knights[1],
        setup.turn.digit(),
        frozen
    )
}
