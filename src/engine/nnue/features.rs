//! What the network sees of a pillarz position: one input per (square, height) for heights 1–4
//! and one per (square, height) of each side's pawns, all from the side to move's point of
//! view ("us" and "them"), so one set of weights serves both colours.
//!
//! Heights and pawn squares are all a pillarz position is (plus whose turn it is, which the
//! point of view absorbs), so the inputs lose nothing; what they mean together — a pawn on
//! level 2 beside a free level-3 square, a cap within an enemy's reach — is the hidden
//! layer's to learn. Height 0 has no input (the bias stands for it), which keeps early
//! positions cheap: at most 25 + 4 inputs are ever active.

use crate::rules::pillarz::{Position, Square};
use crate::rules::{Game, Player};

/// Inputs: 25 squares × heights 1–4, then 25 squares × pawn heights 0–2 for us and for them.
pub const FEATURES: usize = HEIGHTS + 2 * PAWNS;
const HEIGHTS: usize = 25 * 4;
const PAWNS: usize = 25 * 3;
const OUR_PAWN: usize = HEIGHTS;
const THEIR_PAWN: usize = HEIGHTS + PAWNS;
/// The most inputs active at once: every square built on and four pawns.
pub const MAX_ACTIVE: usize = 25 + 4;
/// No pawn (before the placement).
pub const NO_PAWN: u8 = u8::MAX;

/// The active inputs of a position, in no particular order.
#[derive(Clone, Copy, Debug)]
pub struct Active {
    indices: [u16; MAX_ACTIVE],
    len: usize,
}

impl Active {
    fn new() -> Active {
        Active {
            indices: [0; MAX_ACTIVE],
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, index: usize) {
        self.indices[self.len] = index as u16;
        self.len += 1;
    }

    pub fn as_slice(&self) -> &[u16] {
        &self.indices[..self.len]
    }
}

#[inline]
fn height_input(sq: usize, height: u8) -> usize {
    sq * 4 + usize::from(height) - 1
}

#[inline]
fn pawn_input(base: usize, sq: usize, height: u8) -> usize {
    // A pawn on level 3 has won: such positions are never evaluated; clamp to stay in range.
    base + sq * 3 + usize::from(height.min(2))
}

/// The active inputs of `pos` from `us`'s view, whoever is to move: the search's path, read
/// straight off the position's bit sets.
pub fn active_for(pos: &Position, us: Player) -> Active {
    let mut out = Active::new();
    let levels = pos.level_sets();
    for height in 1..=4u8 {
        let k = usize::from(height);
        let exactly = if k == 4 {
            levels[3]
        } else {
            levels[k - 1] & !levels[k]
        };
        for sq in Square::all_in(exactly) {
            out.push(height_input(sq.index(), height));
        }
    }
    for (player, base) in [(us, OUR_PAWN), (us.other(), THEIR_PAWN)] {
        for sq in Square::all_in(pos.pawns(player)) {
            out.push(pawn_input(base, sq.index(), pos.level(sq)));
        }
    }
    out
}

/// The most inputs a [`Delta`] turns off, or on, from one side's view. A move changes at most
/// one square's height and one pawn (or places two): two of each.
const DELTA_CAPACITY: usize = 4;

/// The inputs that differ between a position and its child, from each side's view (indexed by
/// [`Player::index`]): what the incremental accumulator subtracts and adds instead of summing
/// every active input again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    off: [[u16; DELTA_CAPACITY]; 2],
    on: [[u16; DELTA_CAPACITY]; 2],
    offs: u8,
    ons: u8,
}

impl Delta {
    /// The inputs `us` sees turned off.
    pub fn off(&self, us: Player) -> &[u16] {
        &self.off[us.index()][..usize::from(self.offs)]
    }

    /// The inputs `us` sees turned on.
    pub fn on(&self, us: Player) -> &[u16] {
        &self.on[us.index()][..usize::from(self.ons)]
    }
}

/// Appends one input per side's view to `list`; `false` when it is full.
fn push(list: &mut [[u16; DELTA_CAPACITY]; 2], len: &mut usize, inputs: [usize; 2]) -> bool {
    if *len == DELTA_CAPACITY {
        return false;
    }
    for (side, input) in inputs.into_iter().enumerate() {
        list[side][*len] = input as u16;
    }
    *len += 1;
    true
}

/// The change from `parent` to `child`, read off the difference of their bit sets (so it holds
/// for any way one became the other); `None` when more changed than a [`Delta`] holds (then
/// the accumulator is summed from scratch).
pub fn delta(parent: &Position, child: &Position) -> Option<Delta> {
    let (before, after) = (parent.level_sets(), child.level_sets());
    let rebuilt = (0..4).fold(0, |acc, k| acc | (before[k] ^ after[k]));
    let mut d = Delta::default();
    let (mut offs, mut ons) = (0usize, 0usize);
    for sq in Square::all_in(rebuilt) {
        let (old, new) = (parent.level(sq), child.level(sq));
        let i = sq.index();
        if old > 0 && !push(&mut d.off, &mut offs, [height_input(i, old); 2]) {
            return None;
        }
        if new > 0 && !push(&mut d.on, &mut ons, [height_input(i, new); 2]) {
            return None;
        }
    }
    for owner in Player::BOTH {
        // The input of `owner`'s pawn on `sq` at `height`, from each side's view.
        let inputs = |sq: Square, height: u8| {
            Player::BOTH.map(|us| {
                let base = if us == owner { OUR_PAWN } else { THEIR_PAWN };
                pawn_input(base, sq.index(), height)
            })
        };
        let (was, is) = (parent.pawns(owner), child.pawns(owner));
        // A pawn that stays keeps its input unless its square's height changed.
        for sq in Square::all_in(was & (!is | rebuilt)) {
            if !push(&mut d.off, &mut offs, inputs(sq, parent.level(sq))) {
                return None;
            }
        }
        for sq in Square::all_in(is & (!was | rebuilt)) {
            if !push(&mut d.on, &mut ons, inputs(sq, child.level(sq))) {
                return None;
            }
        }
    }
    d.offs = offs as u8;
    d.ons = ons as u8;
    Some(d)
}

/// A position as the training data holds it: heights by square and the pawns' squares, from
/// the side to move's view. Unlike [`Position`] it can be mirrored and rotated (the board's
/// eight symmetries leave the game unchanged, so each stored position is eight for training).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    pub heights: [u8; 25],
    /// The side to move's pawns' squares ([`NO_PAWN`] before the placement).
    pub us: [u8; 2],
    pub them: [u8; 2],
}

impl Board {
    pub fn from_position(pos: &Position) -> Board {
        let mut heights = [0; 25];
        for (i, h) in heights.iter_mut().enumerate() {
            *h = pos.level(Square::new(i as u8).expect("a square index below 25"));
        }
        let squares = |player: Player| {
            let mut out = [NO_PAWN; 2];
            for (slot, sq) in out.iter_mut().zip(Square::all_in(pos.pawns(player))) {
                *slot = sq.index() as u8;
            }
            out
        };
        Board {
            heights,
            us: squares(pos.turn()),
            them: squares(pos.turn().other()),
        }
    }

    /// The board under symmetry `t` (0–7; 0 is the identity): bit 0 mirrors the files, bit 1
    /// the ranks, bit 2 swaps files and ranks.
    pub fn transformed(&self, t: u8) -> Board {
        let map = |sq: u8| -> u8 {
            if sq == NO_PAWN {
                return NO_PAWN;
            }
            let (mut f, mut r) = (sq % 5, sq / 5);
            if t & 1 != 0 {
                f = 4 - f;
            }
            if t & 2 != 0 {
                r = 4 - r;
            }
            if t & 4 != 0 {
                std::mem::swap(&mut f, &mut r);
            }
            r * 5 + f
        };
        let mut heights = [0; 25];
        for (sq, &h) in self.heights.iter().enumerate() {
            heights[usize::from(map(sq as u8))] = h;
        }
        Board {
            heights,
            us: self.us.map(map),
            them: self.them.map(map),
        }
    }

    /// The active inputs (the trainer's path; the same set as [`active_for`] the side to move).
    pub fn active(&self) -> Active {
        let mut out = Active::new();
        for (sq, &h) in self.heights.iter().enumerate() {
            if h > 0 {
                out.push(height_input(sq, h));
            }
        }
        for (squares, base) in [(self.us, OUR_PAWN), (self.them, THEIR_PAWN)] {
            for sq in squares.into_iter().filter(|&s| s != NO_PAWN) {
                out.push(pawn_input(
                    base,
                    usize::from(sq),
                    self.heights[usize::from(sq)],
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::rules::{MoveList, Variants};

    fn sorted(a: Active) -> Vec<u16> {
        let mut v = a.as_slice().to_vec();
        v.sort_unstable();
        v
    }

    /// Positions of random games, placement and finished positions included.
    fn random_positions(n: usize) -> Vec<Position> {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut out = Vec::new();
        while out.len() < n {
            let mut pos = Position::start(Variants::NONE);
            let mut moves = MoveList::new();
            loop {
                out.push(pos);
                moves.clear();
                pos.legal_moves(&mut moves);
                if moves.is_empty() {
                    break;
                }
                pos.play_unchecked(&moves[rng.random_range(0..moves.len())]);
            }
        }
        out
    }

    #[test]
    fn both_paths_give_the_same_inputs() {
        for pos in random_positions(3000) {
            let a = sorted(active_for(&pos, pos.turn()));
            assert_eq!(a, sorted(Board::from_position(&pos).active()), "{pos}");
            assert!(a.iter().all(|&i| usize::from(i) < FEATURES));
            let mut unique = a.clone();
            unique.dedup();
            assert_eq!(unique, a, "an input counted twice in {pos}");
        }
    }

    /// The position a board shows, with `us` to move (through the notation, which the rules
    /// validate).
    fn position_of(board: &Board, us: Player) -> Position {
        let mut ranks = Vec::new();
        for rank in (0..5u8).rev() {
            let mut text = String::new();
            for file in 0..5u8 {
                let sq = rank * 5 + file;
                text.push(char::from(b'0' + board.heights[usize::from(sq)]));
                let owner = if board.us.contains(&sq) {
                    Some(us)
                } else if board.them.contains(&sq) {
                    Some(us.other())
                } else {
                    None
                };
                match owner {
                    Some(Player::P1) => text.push('x'),
                    Some(Player::P2) => text.push('o'),
                    None => {}
                }
            }
            ranks.push(text);
        }
        let side = if us == Player::P1 { 1 } else { 2 };
        Position::parse_position(&format!("{} {side}", ranks.join("/")), Variants::NONE)
            .expect("a board of a legal position")
    }

    #[test]
    fn a_symmetry_leaves_the_game_as_it_is() {
        use crate::engine::Searchable;
        for pos in random_positions(2000) {
            let board = Board::from_position(&pos);
            assert_eq!(position_of(&board, pos.turn()), pos);
            for t in 0..8 {
                let image = position_of(&board.transformed(t), pos.turn());
                assert_eq!(image.count_legal(), pos.count_legal(), "{pos} under {t}");
                assert_eq!(image.outcome(), pos.outcome(), "{pos} under {t}");
                if pos.outcome().is_none() {
                    // The hand-written evaluation is symmetric too (this found a square that
                    // wrapped around the board in it).
                    assert_eq!(image.evaluate(), pos.evaluate(), "{pos} under {t}");
                }
            }
        }
        let pos = Position::parse_position("00100/00o120/0230x0/0x0041/001o00 2", Variants::NONE)
            .expect("a position");
        let images: std::collections::HashSet<_> = (0..8)
            .map(|t| Board::from_position(&pos).transformed(t))
            .map(|b| format!("{b:?}"))
            .collect();
        assert_eq!(
            images.len(),
            8,
            "a generic position has eight distinct images: {pos}"
        );
    }
}
