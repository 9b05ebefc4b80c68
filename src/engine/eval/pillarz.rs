//! pillarz: height is everything — a pawn on level 2 next to a level-3 square wins — so the
//! evaluation counts what each pawn stands on and can climb to, the threats it can make next
//! move and whether the opponent is near enough to cap them, with centrality and mobility to
//! keep pawns from being walled in. A linear evaluation ([`Linear`]): the weights come from the
//! tuner.

use super::linear::{FeatureSink, Linear};
use super::{Eval, Searchable};
use crate::engine::nnue::accumulator::Accumulators;
use crate::engine::nnue::features::{self, Delta};
use crate::rules::pillarz::{Move, Position, Square};
use crate::rules::{Game, Player};

/// The symmetry class of each square, from the corner (0) to the centre (5).
const SQUARE_CLASS: [usize; 25] = [
    0, 1, 2, 1, 0, //
    1, 3, 4, 3, 1, //
    2, 4, 5, 4, 2, //
    1, 3, 4, 3, 1, //
    0, 1, 2, 1, 0, //
];

/// Feature indices (see `FEATURES`).
const LEVEL: usize = 0;
const CLASS: usize = 2;
/// `STEP[h]`: the first feature of "step from level h to level k", k = 0 ..= h + 1.
const STEP: [usize; 3] = [8, 10, 13];
const STUCK: usize = 17;
const THREAT: usize = 18;
const TEMPO: usize = 19;
const UNDEFENDED: usize = 20;
const CAPPED: usize = 21;
const APART: usize = 22;
const ENEMY_BESIDE: usize = 25;
const REACH_TWO: usize = 26;
const THREAT_STEPS: [usize; 2] = [27, 28];

/// Squares of the board.
const BOARD: u32 = (1 << 25) - 1;

/// Squares of file a and file e (shifts along a rank must not wrap around).
const FILE_A: u32 = 0b00001_00001_00001_00001_00001;
const FILE_E: u32 = FILE_A << 4;

/// Every square next to a square of `set` (the union of their neighbourhoods), by shifts.
#[inline]
fn around(set: u32) -> u32 {
    // Masked to the board before the vertical shifts: e5 shifted east is bit 25, which a
    // shift south would otherwise bring back as a5.
    let row = (set | ((set << 1) & !FILE_A) | ((set >> 1) & !FILE_E)) & BOARD;
    let sideways = ((set << 1) & !FILE_A) | ((set >> 1) & !FILE_E);
    (sideways | (row << 5) | (row >> 5)) & BOARD
}

fn chebyshev(a: Square, b: Square) -> u8 {
    a.file().abs_diff(b.file()).max(a.rank().abs_diff(b.rank()))
}

/// The features of `player`'s pawns, counted with `sign` (+1 the side to move, -1 the other).
fn side(pos: &Position, player: Player, sign: i32, sink: &mut impl FeatureSink) {
    let levels = pos.level_sets();
    // Squares of exactly level k (uncapped for k = 3).
    let exactly = |k: usize| {
        if k == 0 {
            !levels[0] & BOARD
        } else {
            levels[k - 1] & !levels[k]
        }
    };
    let occupied = pos.pawns(Player::P1) | pos.pawns(Player::P2);
    let free = !occupied & !levels[3] & BOARD;
    let enemies = pos.pawns(player.other());
    // Where the opponent's pawns can step: from there they can cap a square next to it.
    let enemy_steps = Square::all_in(enemies).fold(0, |acc, e| acc | pos.steps_from(e));
    let enemy_reach = enemy_steps | around(enemy_steps);
    let mut reach_two = 0;
    let mut threat_steps = 0;
    for sq in Square::all_in(pos.pawns(player)) {
        let h = usize::from(pos.level(sq)).min(2);
        let dest = pos.steps_from(sq);
        if h > 0 {
            sink.add(LEVEL + h - 1, sign);
        }
        sink.add(CLASS + SQUARE_CLASS[sq.index()], sign);
        for k in 0..=h + 1 {
            sink.add(STEP[h] + k, sign * (dest & exactly(k)).count_ones() as i32);
        }
        if dest == 0 {
            sink.add(STUCK, sign);
        }
        if h == 2 {
            if dest & exactly(3) != 0 {
                sink.add(THREAT, sign);
            }
            let targets = dest & exactly(2) & !enemy_reach;
            sink.add(UNDEFENDED, sign * targets.count_ones() as i32);
        }
        sink.add(
            CAPPED,
            sign * (sq.neighbours() & levels[3]).count_ones() as i32,
        );
        sink.add(
            ENEMY_BESIDE,
            sign * (sq.neighbours() & enemies).count_ones() as i32,
        );
        if h > 0 {
            let ups = dest & exactly(2);
            reach_two |= ups;
            // Stepping onto a level-2 square next to another one (or back next to the level-2
            // square just left) lets the build make a threat.
            let buildable = (free | sq.bit()) & exactly(2);
            threat_steps += (ups & around(buildable)).count_ones() as i32;
        }
    }
    let mut pawns = Square::all_in(pos.pawns(player));
    if let (Some(a), Some(b)) = (pawns.next(), pawns.next()) {
        let d = usize::from(chebyshev(a, b)).clamp(1, 3);
        sink.add(APART + d - 1, sign);
    }
    sink.add(REACH_TWO, sign * reach_two.count_ones() as i32);
    let mover = usize::from(sign < 0);
    sink.add(THREAT_STEPS[mover], sign * threat_steps);
}

impl Linear for Position {
    const FEATURES: &'static [&'static str] = &[
        "pawn on level 1",
        "pawn on level 2",
        "pawn on a corner",
        "pawn on an edge beside a corner",
        "pawn in the middle of an edge",
        "pawn on an inner diagonal square",
        "pawn on an inner square beside the centre",
        "pawn in the centre",
        "step from level 0 to 0",
        "step from level 0 to 1",
        "step from level 1 to 0",
        "step from level 1 to 1",
        "step from level 1 to 2",
        "step from level 2 to 0",
        "step from level 2 to 1",
        "step from level 2 to 2",
        "step from level 2 to 3",
        "pawn that cannot step",
        "pawn threatening to win",
        "side to move",
        "undefended square to make a threat on",
        "capped neighbour",
        "own pawns side by side",
        "own pawns two apart",
        "own pawns three or more apart",
        "enemy pawn beside",
        "level-2 squares within one step",
        "threat-making steps of the side to move",
        "threat-making steps of the opponent",
    ];
    const WEIGHTS: &'static [i32] = &include!("weights/pillarz.rs");

    fn features(&self, sink: &mut impl FeatureSink) {
        let me = self.turn();
        sink.add(TEMPO, 1);
        side(self, me, 1, sink);
        side(self, me.other(), -1, sink);
    }
}

impl Searchable for Position {
    const THREATS: bool = true;
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
        self.linear_eval()
    }

    /// The network (`engine::nnue`, round 3): +205 ± 57 Elo at 100 ms a move against this
    /// evaluation (200 games, see the README); the hand-written one stays for `--eval hand`.
    const DEFAULT_EVAL: Eval = Eval::Network;

    type Accumulator = Accumulators;
    type Delta = Delta;

    fn refresh(&self, out: &mut Accumulators) {
        out.refresh(self);
    }

    fn delta(&self, child: &Position) -> Option<Delta> {
        features::delta(self, child)
    }

    #[inline]
    fn update(parent: &Accumulators, delta: &Delta, out: &mut Accumulators) {
        parent.update(delta, out);
    }

    #[inline]
    fn network_evaluate(&self, acc: &Accumulators) -> i32 {
        acc.evaluate(self)
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
        let Move::Step { from, to, build } = *mv else {
            return 0;
        };
        if self.step_threatens(from, to, build) {
            2
        } else {
            u8::from(self.level(to) > self.level(from))
        }
    }
}
