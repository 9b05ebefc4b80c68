//! Pilastri: the player who runs out of moves loses, so count moves (stack control and
//! reachable landing stacks are what create them).

use super::Searchable;
use crate::rules::Game;
use crate::rules::pilastri::{Move, Position};

impl Searchable for Position {
    const MOVE_SLOTS: usize = 64 * 64;

    fn move_slot(mv: &Move) -> usize {
        mv.from.index() * 64 + mv.to.index()
    }

    fn evaluate(&self) -> i32 {
        let me = self.turn();
        let them = me.other();
        let mobility = self.mobility(me) as i32 - self.mobility(them) as i32;
        let control = self.controlled(me) as i32 - self.controlled(them) as i32;
        12 * mobility + 4 * control
    }
}
