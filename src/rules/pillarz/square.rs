//! A square of the 5×5 board, `a1` = 0 … `e5` = 24, numbered rank first.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    pub const COUNT: usize = 25;

    /// The square at `index` (0–24).
    pub const fn new(index: u8) -> Option<Square> {
        if (index as usize) < Square::COUNT {
            Some(Square(index))
        } else {
            None
        }
    }

    pub const fn from_coords(file: u8, rank: u8) -> Option<Square> {
        if file < 5 && rank < 5 {
            Some(Square(rank * 5 + file))
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
    pub const fn bit(self) -> u32 {
        1 << self.0
    }

    pub const fn file(self) -> u8 {
        self.0 % 5
    }

    pub const fn rank(self) -> u8 {
        self.0 / 5
    }

    /// The up to eight squares around this one, as a bit set.
    #[inline]
    pub const fn neighbours(self) -> u32 {
        NEIGHBOURS[self.0 as usize]
    }

    /// The squares of a bit set, in index order.
    pub fn all_in(set: u32) -> impl Iterator<Item = Square> {
        crate::rules::bits::ones(u64::from(set)).map(Square::from_index_unchecked)
    }

    /// Parses `a1`…`e5` (lower-case; callers lower-case lenient input first).
    pub fn parse(s: &str) -> Option<Square> {
        match s.as_bytes() {
            [f @ b'a'..=b'e', r @ b'1'..=b'5'] => Square::from_coords(f - b'a', r - b'1'),
            _ => None,
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::rules::coordinate::write(f, self.file(), self.rank())
    }
}

/// The up to eight neighbours of every square.
pub(super) const NEIGHBOURS: [u32; 25] = {
    let mut table = [0u32; 25];
    let mut sq = 0;
    while sq < 25 {
        let (f, r) = ((sq % 5) as i32, (sq / 5) as i32);
        let mut df = -1;
        while df <= 1 {
            let mut dr = -1;
            while dr <= 1 {
                let (nf, nr) = (f + df, r + dr);
                if (df != 0 || dr != 0) && nf >= 0 && nf < 5 && nr >= 0 && nr < 5 {
                    table[sq] |= 1 << (nr * 5 + nf);
                }
                dr += 1;
            }
            df += 1;
        }
        sq += 1;
    }
    table
};
