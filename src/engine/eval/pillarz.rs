//! pillarz: height is everything — a pawn on level 2 next to a level-3 square wins — and
//! mobility keeps pawns from being trapped.

use super::Searchable;
use crate::rules::pillarz::{Move, Position};
use crate::rules::{Game, Player};

/// Value of a pawn by the level it stands on.
const LEVEL: [i32; 4] = [0, 60, 180, 0];
/// Per square a pawn could step to.
const MOBILITY: i32 = 8;
/// A pawn that could step onto level 3 (for the side not to move: a threat to answer).
const THREAT: i32 = 250;

fn side(pos: &Position, player: Player) -> i32 {
    pos.pawn_features(player)
        .map(|(level, mobility, to_top)| {
            let trapped = if mobility == 0 { -60 } else { 0 };
            LEVEL[level.min(3) as usize]
                + MOBILITY * mobility as i32
                + THREAT * i32::from(to_top > 0)
                + trapped
        })
        .sum()
}

impl Searchable for Position {
    const MOVE_SLOTS: usize = 625 + 625 * 26;

    fn move_slot(mv: &Move) -> usize {
        match *mv {
            Move::Place(a, b) => a.index() * 25 + b.index(),
            Move::Step { from, to, build } => {
                625 + (from.index() * 25 + to.index()) * 26 + build.map_or(25, |b| b.index())
            }
        }
    }

    fn evaluate(&self) -> i32 {
        let me = self.turn();
        side(self, me) - side(self, me.other())
    }

    fn wins_now(&self) -> bool {
        self.can_win_now()
    }
}
