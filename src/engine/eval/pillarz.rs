//! pillarz: height is everything — a pawn on level 2 next to a level-3 square wins — and
//! mobility keeps pawns from being trapped.

use super::Searchable;
use crate::rules::pillarz::{Move, Position, Square};
use crate::rules::{Game, Player};

/// Value of a pawn by the level it stands on.
const LEVEL: [i32; 3] = [0, 70, 220];
/// Per square a pawn could step to.
const MOBILITY: i32 = 6;
/// Per square one level up that a pawn could climb to, by the pawn's level.
const CLIMB: [i32; 2] = [18, 45];
/// A pawn on level 2 beside a level-2 square: one build from a winning threat.
const NEAR_THREAT: i32 = 25;
/// A pawn that could step onto level 3 (for the side not to move: a threat to answer).
const THREAT: i32 = 250;
/// A pawn that cannot step anywhere.
const TRAPPED: i32 = -80;
/// Squares in the middle reach more of the board.
const CENTRE: [i32; 25] = [
    0, 4, 6, 4, 0, //
    4, 10, 12, 10, 4, //
    6, 12, 16, 12, 6, //
    4, 10, 12, 10, 4, //
    0, 4, 6, 4, 0, //
];

fn side(pos: &Position, player: Player) -> i32 {
    let levels = pos.level_sets();
    // Squares of exactly level k, for k = 1, 2, 3 (uncapped).
    let exactly = |k: usize| levels[k - 1] & !levels[k];
    let mut total = 0;
    for sq in Square::all_in(pos.pawns(player)) {
        let level = usize::from(pos.level(sq)).min(2);
        let dest = pos.steps_from(sq);
        let mobility = dest.count_ones() as i32;
        total += LEVEL[level] + MOBILITY * mobility + CENTRE[sq.index()];
        if mobility == 0 {
            total += TRAPPED;
        }
        if level < 2 {
            total += CLIMB[level] * (dest & exactly(level + 1)).count_ones() as i32;
        } else {
            total += NEAR_THREAT * (dest & exactly(2)).count_ones() as i32;
            total += THREAT * i32::from(dest & exactly(3) != 0);
        }
    }
    total
}

impl Searchable for Position {
    const SELECTIVE: bool = true;
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

    fn winning_move(&self) -> Option<Move> {
        if self.goal_reached() {
            return None;
        }
        self.winning_step(self.turn())
    }

    fn threatened(&self) -> bool {
        !self.goal_reached() && self.winning_step(self.turn().other()).is_some()
    }

    fn move_class(&self, mv: &Move) -> u8 {
        let Move::Step { from, to, .. } = *mv else {
            return 0;
        };
        let mut child = *self;
        child.play_unchecked(mv);
        if child.winning_step(self.turn()).is_some() {
            2
        } else {
            u8::from(self.level(to) > self.level(from))
        }
    }
}
