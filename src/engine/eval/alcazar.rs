//! Alcazar: how far each knight is from the other's fortress (through the walls as they
//! stand), and how much room each knight has left before it is walled in.

use super::Searchable;
use crate::rules::alcazar::{Move, Position};
use crate::rules::{Game, Player};

/// The distance used for a knight that cannot reach the fortress at all now.
const CUT_OFF: i32 = 12;

fn distance(pos: &Position, p: Player) -> i32 {
    pos.fortress_distance(p).map_or(CUT_OFF, |d| d as i32)
}

fn room(pos: &Position, p: Player) -> i32 {
    match pos.open_sides(p) {
        0 => -200,
        1 => -70,
        2 => 0,
        n => 15 * (n as i32 - 2),
    }
}

impl Searchable for Position {
    const MOVE_SLOTS: usize = 16 + 40 * 40;

    fn move_slot(mv: &Move) -> usize {
        match mv {
            Move::Step(sq) => sq.index(),
            Move::Swing { from, to } => 16 + from.index() * 40 + to.index(),
        }
    }

    fn evaluate(&self) -> i32 {
        let me = self.turn();
        let them = me.other();
        45 * (distance(self, them) - distance(self, me)) + room(self, me) - room(self, them) + 10
    }
}
