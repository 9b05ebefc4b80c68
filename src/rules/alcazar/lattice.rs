//! The 9×9 lattice of towers, squares and wall slots, and the tables derived from it.

use std::fmt;
use std::sync::LazyLock;

/// A lattice point, 0-based: `a1` is (0, 0), `i9` is (8, 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Point {
    pub x: i8,
    pub y: i8,
}

impl Point {
    pub const fn new(x: i8, y: i8) -> Point {
        Point { x, y }
    }

    pub const fn on_lattice(self) -> bool {
        self.x >= 0 && self.x <= 8 && self.y >= 0 && self.y <= 8
    }

    const fn plus(self, d: (i8, i8)) -> Point {
        Point::new(self.x + d.0, self.y + d.1)
    }

    /// Parses `a1`…`i9` (lower-case).
    pub fn parse(s: &str) -> Option<Point> {
        match s.as_bytes() {
            [f @ b'a'..=b'i', r @ b'1'..=b'9'] => {
                Some(Point::new((f - b'a') as i8, (r - b'1') as i8))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::rules::coordinate::write(f, self.x as u8, self.y as u8)
    }
}

/// One of the 16 squares, `index = row * 4 + column` (`b2` = 0, `h8` = 15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Square(u8);

impl Square {
    pub fn from_point(p: Point) -> Option<Square> {
        (p.on_lattice() && p.x % 2 == 1 && p.y % 2 == 1)
            .then(|| Square((p.y as u8 / 2) * 4 + p.x as u8 / 2))
    }

    pub(super) const fn from_index_unchecked(i: u8) -> Square {
        Square(i)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn bit(self) -> u16 {
        1 << self.0
    }

    pub const fn point(self) -> Point {
        Point::new((self.0 % 4 * 2 + 1) as i8, (self.0 / 4 * 2 + 1) as i8)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.point().fmt(f)
    }
}

/// One of the 40 wall slots, numbered in notation order (file, then rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(u8);

impl Slot {
    pub const COUNT: usize = 40;

    pub fn from_point(p: Point) -> Option<Slot> {
        if !p.on_lattice() || (p.x + p.y) % 2 == 0 {
            return None;
        }
        TABLES.slot_at[p.x as usize][p.y as usize].map(Slot)
    }

    pub(super) const fn from_index_unchecked(i: u8) -> Slot {
        Slot(i)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn bit(self) -> u64 {
        1 << self.0
    }

    pub fn point(self) -> Point {
        TABLES.points[self.index()]
    }

    /// The two towers at the ends of a wall in this slot.
    pub fn ends(self) -> [Point; 2] {
        ends_of(self.point())
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.point().fmt(f)
    }
}

/// One way a swing reaches its destination: what it must not meet on the way.
#[derive(Clone, Copy, Debug)]
pub(super) struct Path {
    /// Squares swept (none may hold a knight).
    pub swept: u16,
    /// On-board slots passed before the destination (none may hold a wall).
    pub passed: u64,
}

/// A slot a wall can swing to, with the one or two ways of getting there.
#[derive(Clone, Debug)]
pub(super) struct Swing {
    pub to: Slot,
    pub paths: Vec<Path>,
}

pub(super) struct Tables {
    slot_at: [[Option<u8>; 9]; 9],
    points: Vec<Point>,
    /// `swings[slot]`: every destination of a wall in `slot`.
    pub swings: Vec<Vec<Swing>>,
    /// `steps[square][dir]`: the slot crossed and the square reached, if not off the edge.
    pub steps: [[(u8, Option<u8>); 4]; 16],
    /// `freeze[slot]`: the slots whose walls touch a tower at either end of `slot`.
    pub freeze: Vec<u64>,
}

const DIRS: [(i8, i8); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];

pub(super) static TABLES: LazyLock<Tables> = LazyLock::new(build);

fn build() -> Tables {
    let mut slot_at = [[None; 9]; 9];
    let mut points = Vec::with_capacity(Slot::COUNT);
    for x in 0..9i8 {
        for y in 0..9i8 {
            if (x + y) % 2 == 1 {
                slot_at[x as usize][y as usize] = Some(points.len() as u8);
                points.push(Point::new(x, y));
            }
        }
    }
    let slot = |p: Point| -> Option<u8> {
        p.on_lattice()
            .then(|| slot_at[p.x as usize][p.y as usize])
            .flatten()
    };
    let square_bit = |p: Point| Square::from_point(p).map_or(0, |s| s.bit());

    let mut swings: Vec<Vec<Swing>> = Vec::with_capacity(Slot::COUNT);
    for &at in &points {
        let mut out: Vec<Swing> = Vec::new();
        for pivot in ends_of(at) {
            let start = (at.x - pivot.x, at.y - pivot.y);
            for clockwise in [true, false] {
                let mut dir = start;
                let mut path = Path {
                    swept: 0,
                    passed: 0,
                };
                for _quarter in 1..=3 {
                    let next = if clockwise {
                        (dir.1, -dir.0)
                    } else {
                        (-dir.1, dir.0)
                    };
                    path.swept |= square_bit(pivot.plus(dir).plus(next));
                    dir = next;
                    let reached = pivot.plus(dir);
                    if let Some(to) = slot(reached) {
                        let to = Slot(to);
                        match out.iter_mut().find(|s| s.to == to) {
                            Some(swing) => swing.paths.push(path),
                            None => out.push(Swing {
                                to,
                                paths: vec![path],
                            }),
                        }
                        path.passed |= to.bit();
                    }
                }
            }
        }
        out.sort_by_key(|s| s.to);
        swings.push(out);
    }

    let mut steps = [[(0u8, None); 4]; 16];
    for (sq, row) in steps.iter_mut().enumerate() {
        let p = Square(sq as u8).point();
        for (d, step) in row.iter_mut().enumerate() {
            let wall = slot(p.plus(DIRS[d])).expect("every square is walled by slots");
            let beyond = Square::from_point(p.plus((DIRS[d].0 * 2, DIRS[d].1 * 2)));
            *step = (wall, beyond.map(|s| s.0));
        }
    }

    let freeze = (0..Slot::COUNT)
        .map(|i| {
            let ends = ends_of(points[i]);
            (0..Slot::COUNT)
                .filter(|&j| {
                    let other = ends_of(points[j]);
                    other.iter().any(|t| ends.contains(t))
                })
                .fold(0u64, |m, j| m | 1 << j)
        })
        .collect();

    Tables {
        slot_at,
        points,
        swings,
        steps,
        freeze,
    }
}

/// The towers at the two ends of the slot at `p`.
fn ends_of(p: Point) -> [Point; 2] {
    if p.x % 2 == 0 {
        [Point::new(p.x, p.y - 1), Point::new(p.x, p.y + 1)]
    } else {
        [Point::new(p.x - 1, p.y), Point::new(p.x + 1, p.y)]
    }
}
