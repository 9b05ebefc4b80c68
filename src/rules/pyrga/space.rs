//! A space of the 4×4 board (`index = rank * 4 + file`) and the four triangle directions.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Space(u8);

impl Space {
    pub const fn from_coords(file: u8, rank: u8) -> Option<Space> {
        if file < 4 && rank < 4 {
            Some(Space(rank * 4 + file))
        } else {
            None
        }
    }

    #[inline]
    pub(super) const fn from_index_unchecked(index: u8) -> Space {
        Space(index)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn bit(self) -> u16 {
        1 << self.0
    }

    pub const fn file(self) -> u8 {
        self.0 % 4
    }

    pub const fn rank(self) -> u8 {
        self.0 / 4
    }

    /// Parses `a1`…`d4` (lower-case).
    pub fn parse(s: &str) -> Option<Space> {
        match s.as_bytes() {
            [f @ b'a'..=b'd', r @ b'1'..=b'4'] => Space::from_coords(f - b'a', r - b'1'),
            _ => None,
        }
    }
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::rules::coordinate::write(f, self.file(), self.rank())
    }
}

/// Where a triangle points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    N,
    E,
    S,
    W,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::N, Dir::E, Dir::S, Dir::W];

    /// The move-notation letter.
    pub const fn letter(self) -> char {
        match self {
            Dir::N => 'N',
            Dir::E => 'E',
            Dir::S => 'S',
            Dir::W => 'W',
        }
    }

    /// The position-notation arrow.
    pub const fn arrow(self) -> char {
        match self {
            Dir::N => '^',
            Dir::E => '>',
            Dir::S => 'v',
            Dir::W => '<',
        }
    }

    pub fn from_arrow(c: char) -> Option<Dir> {
        Dir::ALL.into_iter().find(|d| d.arrow() == c)
    }

    pub fn from_letter(c: char) -> Option<Dir> {
        Dir::ALL
            .into_iter()
            .find(|d| d.letter() == c.to_ascii_uppercase())
    }
}

/// `RAYS[dir][space]`: the spaces a triangle on `space` pointing `dir` constrains.
pub(super) const RAYS: [[u16; 16]; 4] = {
    let mut table = [[0u16; 16]; 4];
    let steps: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
    let mut d = 0;
    while d < 4 {
        let mut sq = 0;
        while sq < 16 {
            let (mut f, mut r) = ((sq % 4) as i32, (sq / 4) as i32);
            loop {
                f += steps[d].0;
                r += steps[d].1;
                if f < 0 || f > 3 || r < 0 || r > 3 {
                    break;
                }
                table[d][sq] |= 1 << (r * 4 + f);
            }
            sq += 1;
        }
        d += 1;
    }
    table
};

/// `ADJACENT[space]`: the up to four orthogonal neighbours.
pub(super) const ADJACENT: [u16; 16] = {
    let mut table = [0u16; 16];
    let mut sq = 0;
    while sq < 16 {
        let mut d = 0;
        while d < 4 {
            // The first space of each ray is the neighbour that way.
            let ray = RAYS[d][sq];
            let near = match d {
                0 | 1 => ray & ray.wrapping_neg(),
                _ => {
                    if ray == 0 {
                        0
                    } else {
                        1 << (15 - ray.leading_zeros())
                    }
                }
            };
            table[sq] |= near;
            d += 1;
        }
        sq += 1;
    }
    table
};
