//! Alcazar: how far each knight is from the other's fortress, through the walls as they stand
//! and with the walls in the way swung aside, how open each fortress is, and how much room each
//! knight has left before it is walled in. A linear evaluation ([`Linear`]): the weights come
//! from the tuner.

use super::Searchable;
use super::linear::{FeatureSink, Linear};
use crate::rules::alcazar::{FORTRESS, Move, Position};
use crate::rules::{Game, Player};

/// The distance used for a knight that cannot reach the fortress at all now.
const CUT_OFF: i32 = 12;

fn distance(pos: &Position, p: Player) -> i32 {
    pos.fortress_distance(p).map_or(CUT_OFF, |d| d as i32)
}

/// The room features of `p`'s knight, counted with `sign`.
fn room(pos: &Position, p: Player, sign: i32, sink: &mut impl FeatureSink) {
    match pos.open_sides(p) {
        0 => sink.add(1, sign),
        1 => sink.add(2, sign),
        n => sink.add(3, sign * (n as i32 - 2)),
    }
}

impl Linear for Position {
    const FEATURES: &'static [&'static str] = &[
        "step less to the fortress",
        "knight walled in",
        "knight with one open side",
        "open side beyond two",
        "side to move",
        "move to the fortress, walls swung away",
        "open way into one's own fortress",
        "square within two steps",
        "move from one's own fortress (up to 5)",
    ];
    const WEIGHTS: &'static [i32] = &include!("weights/alcazar.rs");

    fn features(&self, sink: &mut impl FeatureSink) {
        let me = self.turn();
        let them = me.other();
        sink.add(0, distance(self, them) - distance(self, me));
        room(self, me, 1, sink);
        room(self, them, -1, sink);
        sink.add(4, 1);
        for (p, sign) in [(me, 1), (them, -1)] {
            let target = FORTRESS[p.other().index()];
            let swinging = self.distance_through_walls(p, target, CUT_OFF as u32);
            sink.add(5, -sign * swinging.map_or(CUT_OFF, |d| d as i32));
            sink.add(6, sign * self.fortress_entries(p) as i32);
            sink.add(7, sign * self.reach(p, 2).count_ones() as i32);
            let home = self.distance_through_walls(p, FORTRESS[p.index()], 4);
            sink.add(8, sign * home.map_or(5, |d| d as i32));
        }
    }
}

impl Searchable for Position {
    type Accumulator = ();
    type Delta = ();

    const MOVE_SLOTS: usize = 16 + 40 * 40;

    fn move_slot(mv: &Move) -> usize {
        match mv {
            Move::Step(sq) => sq.index(),
            Move::Swing { from, to } => 16 + from.index() * 40 + to.index(),
        }
    }

    fn evaluate(&self) -> i32 {
        self.linear_eval()
    }

    fn winning_move(&self) -> Option<Move> {
        Position::winning_move(self)
    }
}
