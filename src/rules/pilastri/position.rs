//! The Pilastri position, the rules that make one valid, and its move generator.

use std::fmt;

use super::PositionError;
use super::moves::{Move, MoveParseError};
use super::notation;
use super::setup::Setup;
use super::square::{Dir, RAYS, Square, first_stack};
use crate::rules::bits::ones;
use crate::rules::game::{self, Game, IllegalMove, MoveList, Outcome, Player, Termination};
use crate::rules::kind::{Variant, Variants};
use crate::rules::zobrist;

/// `PIECE_KEYS[(sq * 64 + height) * 2 + owner]`: a piece of `owner` at `height` in `sq`'s stack.
static PIECE_KEYS: [u64; 64 * 64 * 2] = zobrist::table(0x5049_4c41_5354_5249);
const SIDE_KEY: u64 = zobrist::key(0x5049_4c41_5354_5232, 0);

#[inline]
fn piece_key(sq: usize, height: usize, owner: usize) -> u64 {
    PIECE_KEYS[(sq * 64 + height) * 2 + owner]
}

/// Every rule a Pilastri setup can break (with its variants), each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("the board is 6×6 or 8×8, not {size}×{size}")]
    BadSize { size: u8 },
    #[error("the size-8 variant needs 8 ranks, found {found}")]
    SizeMismatch { found: usize },
    #[error("a stack on {square}, off the {size}×{size} board")]
    OffBoard { square: Square, size: u8 },
    #[error("{player} has {found} pieces on the board, expected {expected}")]
    PieceCount {
        player: Player,
        found: usize,
        expected: usize,
    },
}

/// What one side's moves reach ([`Position::reach`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// How many moves.
    pub moves: u32,
    /// The stacks that have a move.
    pub from: u64,
    /// The stacks some move lands on.
    pub onto: u64,
}

/// A validated Pilastri position.
#[derive(Clone, PartialEq, Eq)]
pub struct Position {
    size: u8,
    jumpers: bool,
    side: Player,
    /// Squares holding a stack.
    occupied: u64,
    /// Squares whose top piece belongs to each player.
    top: [u64; 2],
    heights: [u8; 64],
    /// Bit `i` of a stack is set when its `i`-th piece from the bottom is `p2`'s.
    stacks: [u64; 64],
    hash: u64,
}

impl Position {
    /// The position `setup` describes under `variants`, if it breaks no rule.
    pub fn from_setup(setup: &Setup, variants: Variants) -> Result<Position, SetupError> {
        let size = setup.size;
        if size != 6 && size != 8 {
            return Err(SetupError::BadSize { size });
        }
        if variants.contains(Variant::Size8) && size != 8 {
            return Err(SetupError::SizeMismatch {
                found: size as usize,
            });
        }
        let mut counts = [0usize; 2];
        for (i, stack) in setup.stacks.iter().enumerate() {
            let square = Setup::square(i);
            if !stack.is_empty() && !square.on_board(size) {
                return Err(SetupError::OffBoard { square, size });
            }
            for p in stack {
                counts[p.index()] += 1;
            }
        }
        let expected = size as usize * size as usize / 2;
        for p in Player::BOTH {
            if counts[p.index()] != expected {
                return Err(SetupError::PieceCount {
                    player: p,
                    found: counts[p.index()],
                    expected,
                });
            }
        }
        Ok(Position::from_stacks(
            size,
            variants.contains(Variant::Jumpers),
            &setup.stacks,
            setup.turn,
        ))
    }

    /// What the position says, square by square (the notation writes it).
    pub fn setup(&self) -> Setup {
        Setup {
            size: self.size,
            stacks: std::array::from_fn(|i| self.stack(Setup::square(i)).collect()),
            turn: self.side,
        }
    }

    /// Builds a position from stacks that break no rule (bottom first), indexed by square.
    fn from_stacks(size: u8, jumpers: bool, stacks: &[Vec<Player>; 64], side: Player) -> Position {
        let mut pos = Position {
            size,
            jumpers,
            side,
            occupied: 0,
            top: [0; 2],
            heights: [0; 64],
            stacks: [0; 64],
            hash: 0,
        };
        for (sq, stack) in stacks.iter().enumerate() {
            if let Some(top) = stack.last() {
                pos.occupied |= 1 << sq;
                pos.top[top.index()] |= 1 << sq;
                pos.heights[sq] = stack.len() as u8;
                for (i, p) in stack.iter().enumerate() {
                    pos.stacks[sq] |= (p.index() as u64) << i;
                }
            }
        }
        pos.hash = pos.compute_hash();
        pos
    }

    /// The board's width and height: 6 or 8.
    pub fn size(&self) -> u8 {
        self.size
    }

    pub fn jumpers(&self) -> bool {
        self.jumpers
    }

    /// The stack on a square, bottom first.
    pub fn stack(&self, sq: Square) -> impl Iterator<Item = Player> + '_ {
        let bits = self.stacks[sq.index()];
        (0..self.heights[sq.index()]).map(move |i| {
            if bits >> i & 1 == 0 {
                Player::P1
            } else {
                Player::P2
            }
        })
    }

    pub fn height(&self, sq: Square) -> u8 {
        self.heights[sq.index()]
    }

    /// What `player`'s moves would reach if it were to move (evaluation features): the
    /// stacks it could move from, and the stacks it could land on.
    pub fn reach(&self, player: Player) -> Reach {
        // Branch-free: a ray with no stack yields index 64 (north, east) or 127 (south, west,
        // from 63 minus 64 leading zeros, masked), where the padded heights read 0, a height no
        // piece may land on.
        let mut heights = [0u8; 128];
        heights[..64].copy_from_slice(&self.heights);
        let mut reach = Reach::default();
        for from in ones(self.top[player.index()]) {
            let from = from as usize;
            let h = self.heights[from];
            // It may land on heights lo..=hi.
            let (lo, hi) = match h {
                1 if !self.jumpers => (1, 1),
                1 => (1, u8::MAX),
                _ => (h, u8::MAX),
            };
            let mut any = false;
            for (dir, rays) in RAYS.iter().enumerate() {
                let blockers = self.occupied & rays[from];
                let to = if dir < 2 {
                    blockers.trailing_zeros() as usize
                } else {
                    63usize.wrapping_sub(blockers.leading_zeros() as usize) & 127
                };
                let ok = heights[to].wrapping_sub(lo) <= hi - lo;
                reach.moves += u32::from(ok);
                reach.onto |= u64::from(ok) << (to & 63);
                any |= ok;
            }
            reach.from |= u64::from(any) << from;
        }
        reach
    }

    /// The stacks whose top piece is `player`'s.
    pub fn tops(&self, player: Player) -> u64 {
        self.top[player.index()]
    }

    /// How many stacks `player` controls.
    pub fn controlled(&self, player: Player) -> u32 {
        self.top[player.index()].count_ones()
    }

    /// Whether a piece leaving a stack of height `h` may land on one of height `d`.
    #[inline]
    fn may_land(&self, h: u8, d: u8) -> bool {
        if h == 1 {
            d == 1 || self.jumpers
        } else {
            d >= h
        }
    }

    fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for sq in ones(self.occupied) {
            let sq = sq as usize;
            for i in 0..self.heights[sq] as usize {
                h ^= piece_key(sq, i, (self.stacks[sq] >> i & 1) as usize);
            }
        }
        if self.side == Player::P2 {
            h ^= SIDE_KEY;
        }
        h
    }
}

impl Game for Position {
    type Move = Move;
    type PositionError = PositionError;
    type MoveError = MoveParseError;

    fn start(variants: Variants) -> Position {
        let size = if variants.contains(Variant::Size8) {
            8
        } else {
            6
        };
        let stacks: [Vec<Player>; 64] = std::array::from_fn(|i| {
            let sq = Square::from_index_unchecked(i as u8);
            if !sq.on_board(size) {
                Vec::new()
            } else if (sq.file() + sq.rank() + 1) % 2 == 1 {
                // a1 (file 0 + rank 1 = odd) is p1's.
                vec![Player::P1]
            } else {
                vec![Player::P2]
            }
        });
        Position::from_stacks(
            size,
            variants.contains(Variant::Jumpers),
            &stacks,
            Player::P1,
        )
    }

    fn parse_position(s: &str, variants: Variants) -> Result<Position, PositionError> {
        let setup = notation::parse(s).map_err(game::PositionError::Syntax)?;
        Position::from_setup(&setup, variants).map_err(game::PositionError::Rule)
    }

    fn parse_move(s: &str) -> Result<Move, MoveParseError> {
        s.parse()
    }

    #[inline]
    fn turn(&self) -> Player {
        self.side
    }

    fn legal_moves(&self, out: &mut MoveList<Move>) {
        for from in ones(self.top[self.side.index()]) {
            let h = self.heights[from as usize];
            for dir in Dir::ALL {
                if let Some(to) = first_stack(self.occupied, from as usize, dir)
                    && self.may_land(h, self.heights[to])
                {
                    out.push(Move {
                        from: Square::from_index_unchecked(from),
                        to: Square::from_index_unchecked(to as u8),
                    });
                }
            }
        }
    }

    fn fits_board(&self, mv: &Move) -> bool {
        mv.from.on_board(self.size) && mv.to.on_board(self.size)
    }

    #[inline]
    fn count_legal(&self) -> u64 {
        u64::from(self.reach(self.side).moves)
    }

    fn check(&self, mv: &Move) -> Result<(), IllegalMove> {
        if self.outcome().is_some() {
            return Err(IllegalMove::GameOver);
        }
        let reason = |r: String| Err(IllegalMove::rule(mv, r));
        let Move { from, to } = *mv;
        for sq in [from, to] {
            if !sq.on_board(self.size) {
                return reason(format!("{sq} is off the {0}×{0} board", self.size));
            }
        }
        if self.top[self.side.index()] & from.bit() == 0 {
            return reason(format!("you do not control a stack on {from}"));
        }
        let dir = match (from.file() == to.file(), from.rank() == to.rank()) {
            (true, false) if to.rank() > from.rank() => Dir::North,
            (true, false) => Dir::South,
            (false, true) if to.file() > from.file() => Dir::East,
            (false, true) => Dir::West,
            _ => return reason(format!("{to} is not in a straight line from {from}")),
        };
        if first_stack(self.occupied, from.index(), dir) != Some(to.index()) {
            return reason(format!(
                "{to} is not the first stack from {from} in that direction"
            ));
        }
        let (h, d) = (self.heights[from.index()], self.heights[to.index()]);
        if !self.may_land(h, d) {
            return reason(if h == 1 {
                format!("a grounded piece must land on a single piece, and {to} holds {d}")
            } else {
                format!("a piece from a stack of {h} must land on a stack of at least {h}")
            });
        }
        Ok(())
    }

    #[inline]
    fn play_unchecked(&mut self, mv: &Move) {
        let (from, to) = (mv.from.index(), mv.to.index());
        let owner = self.side.index();
        let h = self.heights[from] as usize;
        let d = self.heights[to] as usize;
        // Lift the top piece off `from`.
        self.stacks[from] &= !(1u64 << (h - 1));
        self.heights[from] -= 1;
        self.hash ^= piece_key(from, h - 1, owner);
        self.top[owner] &= !(1 << from);
        if h == 1 {
            self.occupied &= !(1 << from);
        } else {
            let below = (self.stacks[from] >> (h - 2) & 1) as usize;
            self.top[below] |= 1 << from;
        }
        // Put it on `to`.
        let old_top = (self.stacks[to] >> (d - 1) & 1) as usize;
        self.top[old_top] &= !(1 << to);
        self.top[owner] |= 1 << to;
        self.stacks[to] |= (owner as u64) << d;
        self.heights[to] += 1;
        self.hash ^= piece_key(to, d, owner);
        self.side = self.side.other();
        self.hash ^= SIDE_KEY;
    }

    fn outcome(&self) -> Option<Outcome> {
        (self.count_legal() == 0).then(|| Outcome::win(self.side.other(), Termination::NoMoves))
    }

    #[inline]
    fn hash(&self) -> u64 {
        self.hash
    }

    fn hash_from_scratch(&self) -> u64 {
        self.compute_hash()
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        notation::write(&self.setup(), f)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pilastri::Position({self}, jumpers: {})", self.jumpers)
    }
}
