//! A square in Pilastri's shared 8×8 layout: `index = rank * 8 + file`.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    pub const fn from_coords(file: u8, rank: u8) -> Option<Square> {
        if file < 8 && rank < 8 {
            Some(Square(rank * 8 + file))
        } else {
            None
        }
    }

    #[inline]
    pub(super) const fn from_index_unchecked(index: u8) -> Square {
        Square(index)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn bit(self) -> u64 {
        1 << self.0
    }

    pub const fn file(self) -> u8 {
        self.0 % 8
    }

    pub const fn rank(self) -> u8 {
        self.0 / 8
    }

    /// Whether the square lies on a board of `size` × `size`.
    pub const fn on_board(self, size: u8) -> bool {
        self.file() < size && self.rank() < size
    }

    /// Parses `a1`…`h8` (lower-case).
    pub fn parse(s: &str) -> Option<Square> {
        match s.as_bytes() {
            [f @ b'a'..=b'h', r @ b'1'..=b'8'] => Square::from_coords(f - b'a', r - b'1'),
            _ => None,
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::rules::coordinate::write(f, self.file(), self.rank())
    }
}

/// The four sliding directions; rays towards higher indices (north, east) find their first
/// stack with the lowest set bit, the others with the highest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dir {
    North,
    East,
    South,
    West,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::North, Dir::East, Dir::South, Dir::West];
}

/// `RAYS[dir][sq]`: every square strictly beyond `sq` in direction `dir`.
pub(super) const RAYS: [[u64; 64]; 4] = {
    let mut table = [[0u64; 64]; 4];
    let steps: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
    let mut d = 0;
    while d < 4 {
        let mut sq = 0;
        while sq < 64 {
            let (mut f, mut r) = ((sq % 8) as i32, (sq / 8) as i32);
            loop {
                f += steps[d].0;
                r += steps[d].1;
                if f < 0 || f > 7 || r < 0 || r > 7 {
                    break;
                }
                table[d][sq] |= 1 << (r * 8 + f);
            }
            sq += 1;
        }
        d += 1;
    }
    table
};

/// The first occupied square from `sq` towards `dir`, if any.
#[inline]
pub(super) fn first_stack(occupied: u64, sq: usize, dir: Dir) -> Option<usize> {
    let blockers = occupied & RAYS[dir as usize][sq];
    if blockers == 0 {
        None
    } else if matches!(dir, Dir::North | Dir::East) {
        Some(blockers.trailing_zeros() as usize)
    } else {
        Some(63 - blockers.leading_zeros() as usize)
    }
}
