//! Pyrga: completed towers decide the game and the tie-break counts (own two-piece and
//! one-piece stacks) the rest; a two-piece stack of one's own is a tower one will control when
//! it is completed, a tower one piece short can be completed by whoever holds its missing shape
//! (and if it holds one piece of each side, whoever completes it controls it), and pieces in
//! hand and the room the side to move has left say who can keep playing. A linear evaluation
//! ([`Linear`]): the weights come from the tuner.

use super::Searchable;
use super::linear::{FeatureSink, Linear};
use crate::engine::levels::{Level, PYRGA_LEVELS};
use crate::rules::pyrga::{Move, Piece, Position, Shape, Space};
use crate::rules::{Game, Player};

const TIEBREAK: usize = 0;
const IN_HAND: usize = 3;
const COMPLETABLE: usize = 6;
const TWO_TOWERS: usize = 8;
const MOBILITY: usize = 9;
const TEMPO: usize = 10;
const CONTESTED: usize = 11;

impl Linear for Position {
    const FEATURES: &'static [&'static str] = &[
        "completed tower controlled",
        "two-piece stack all one's own",
        "one-piece stack one's own",
        "square in hand",
        "triangle in hand",
        "cylinder in hand",
        "tower one piece short that the side to move can complete",
        "tower one piece short that the opponent can complete",
        "two completed towers controlled",
        "legal move of the side to move",
        "side to move",
        "contested tower one piece short that the side to move can complete",
        "contested tower one piece short that the opponent can complete",
    ];
    const WEIGHTS: &'static [i32] = &include!("weights/pyrga.rs");

    fn features(&self, sink: &mut impl FeatureSink) {
        let me = self.turn();
        let them = me.other();
        let counts = self.tiebreak_counts();
        for (i, (mine, theirs)) in counts[me.index()]
            .iter()
            .zip(counts[them.index()])
            .enumerate()
        {
            sink.add(TIEBREAK + i, *mine as i32 - theirs as i32);
        }
        for (i, shape) in Shape::ALL.into_iter().enumerate() {
            sink.add(
                IN_HAND + i,
                self.in_hand(me, shape) as i32 - self.in_hand(them, shape) as i32,
            );
        }
        // Towers one piece short, by who holds the missing shape; contested ones (one piece
        // each) go to whoever completes them.
        let mut short = [0; 2];
        let mut contested = [0; 2];
        for index in 0..16u8 {
            let space = Space::from_coords(index % 4, index / 4).expect("on the board");
            let mut missing = Shape::ALL
                .into_iter()
                .filter(|&s| self.owner(space, s).is_none());
            if let (Some(shape), None) = (missing.next(), missing.next()) {
                let split = Shape::ALL
                    .into_iter()
                    .filter_map(|s| self.owner(space, s))
                    .filter(|&p| p == me)
                    .count()
                    == 1;
                for (k, p) in [me, them].into_iter().enumerate() {
                    if self.in_hand(p, shape) > 0 {
                        short[k] += 1;
                        if split {
                            contested[k] += 1;
                        }
                    }
                }
            }
        }
        sink.add(COMPLETABLE, short[0]);
        sink.add(COMPLETABLE + 1, -short[1]);
        let towers = self.towers();
        sink.add(
            TWO_TOWERS,
            i32::from(towers[me.index()] >= 2) - i32::from(towers[them.index()] >= 2),
        );
        sink.add(MOBILITY, self.count_legal() as i32);
        sink.add(TEMPO, 1);
        sink.add(CONTESTED, contested[0]);
        sink.add(CONTESTED + 1, -contested[1]);
    }
}

/// Pyrga prunes while more than this many plies are left, and searches the rest without
/// pruning, so that late positions are solved exactly (a draw included). Against no pruning at
/// all: +63 ± 49 Elo at 20,000 nodes a move (pruning everywhere: +70 ± 49; 200 games each),
/// +61 ± 48 at 100 ms (200 games).
const EXACT_PLIES: u32 = 16;

impl Searchable for Position {
    type Accumulator = ();
    type Delta = ();

    const MOVE_SLOTS: usize = 16 * 6;

    const LEVELS: [Level; 8] = PYRGA_LEVELS;

    fn move_slot(mv: &Move) -> usize {
        let code = match mv.piece {
            Piece::Square => 0,
            Piece::Cylinder => 1,
            Piece::Triangle(d) => 2 + d as usize,
        };
        mv.space.index() * 6 + code
    }

    fn evaluate(&self) -> i32 {
        self.linear_eval()
    }

    fn prunes(&self) -> bool {
        self.plies_left().expect("bounded") > EXACT_PLIES
    }

    /// Every ply places a piece from a hand, and the game ends when the side to move has none.
    fn plies_left(&self) -> Option<u32> {
        Some(
            Player::BOTH
                .into_iter()
                .flat_map(|p| Shape::ALL.map(|s| self.in_hand(p, s)))
                .sum(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::eval::linear::Counts;
    use crate::rules::Variants;

    fn counts(position: &str) -> Vec<(u16, i16)> {
        let position = Position::parse_position(position, Variants::NONE).expect("a position");
        let mut counts = Counts::default();
        position.features(&mut counts);
        counts.0
    }

    #[test]
    fn a_contested_short_tower_counts_for_whoever_can_complete_it() {
        // a1 holds p1's square and p2's triangle: the cylinder completes it, for whoever places
        // it, and both sides have one.
        let features = counts("-,-,-,-/-,-,-,-/-,-,-,-/St^,-,-,- 1 Ta1N");
        assert!(features.contains(&(CONTESTED as u16, 1)), "{features:?}");
        assert!(
            features.contains(&(CONTESTED as u16 + 1, -1)),
            "{features:?}"
        );
        // Both pieces p1's: p1's tower whoever completes it, so it is contested by nobody.
        let features = counts("-,-,-,-/-,-,-,-/s,-,-,-/ST^,t>,-,- 1 Tb1E");
        assert!(
            features.iter().all(|&(i, _)| i < CONTESTED as u16),
            "{features:?}"
        );
        assert!(features.contains(&(COMPLETABLE as u16, 1)), "{features:?}");
    }
}
