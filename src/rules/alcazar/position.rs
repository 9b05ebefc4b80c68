//! The Alcazar position, the rules that make one valid, and its move generator.

use std::fmt;

use super::PositionError;
use super::lattice::{Slot, Square, TABLES};
use super::moves::{Move, MoveParseError};
use super::notation;
use super::setup::Setup;
use crate::rules::bits::ones;
use crate::rules::game::{self, Game, IllegalMove, MoveList, Outcome, Player, Termination};
use crate::rules::kind::Variants;
use crate::rules::zobrist;

const WALL_KEYS: [u64; 40] = zobrist::table(0x414c_4341_5a41_5231);
const FROZEN_KEYS: [u64; 40] = zobrist::table(0x414c_4341_5a41_5232);
const KNIGHT_KEYS: [u64; 32] = zobrist::table(0x414c_4341_5a41_5233);
const SIDE_KEY: u64 = zobrist::key(0x414c_4341_5a41_5234, 0);

/// Each player's fortress: the square its knight starts on (`b8` for `p1`, `h2` for `p2`).
pub const FORTRESS: [u8; 2] = [12, 3];

/// The walls of the initial position: b5 c6 d7 e8 and e2 f3 g4 h5.
const START_WALLS: [&str; 8] = ["b5", "c6", "d7", "e2", "e8", "f3", "g4", "h5"];

fn walls_hash(walls: u64, keys: &[u64; 40]) -> u64 {
    ones(walls).fold(0, |h, i| h ^ keys[i as usize])
}

/// Every rule an Alcazar setup can break, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("expected 8 walls, found {found}")]
    WallCount { found: usize },
    #[error("both knights stand on {square}")]
    KnightsTogether { square: Square },
    #[error("{slot} is listed as frozen but holds no wall")]
    FrozenNotAWall { slot: Slot },
    #[error(
        "the frozen walls are not those touching the ends of one swung wall (a swing freezes the wall and every wall touching its two end towers)"
    )]
    FrozenInconsistent,
    #[error("both knights stand in their opponent's fortress")]
    BothInFortress,
    #[error("{player} has won (its knight is in the opponent's fortress) but is to move")]
    WinnerToMove { player: Player },
    #[error("{player}'s knight is walled in although {player} has just moved")]
    MoverTrapped { player: Player },
}

/// A validated Alcazar position.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Position {
    walls: u64,
    /// Walls the side to move may not swing this turn.
    frozen: u64,
    knights: [u8; 2],
    side: Player,
    hash: u64,
}

impl Position {
    /// The position `setup` describes, if it breaks no rule.
    pub fn from_setup(setup: &Setup) -> Result<Position, SetupError> {
        let bits = |slots: &[Slot]| slots.iter().fold(0u64, |m, s| m | s.bit());
        let walls = bits(&setup.walls);
        if walls.count_ones() != 8 {
            return Err(SetupError::WallCount {
                found: walls.count_ones() as usize,
            });
        }
        if setup.knights[0] == setup.knights[1] {
            return Err(SetupError::KnightsTogether {
                square: setup.knights[0],
            });
        }
        let knights = setup.knights.map(|k| k.index() as u8);
        let side = setup.turn;
        let frozen = bits(&setup.frozen);
        if frozen != 0 {
            if let Some(slot) = setup.frozen.iter().find(|s| walls & s.bit() == 0) {
                return Err(SetupError::FrozenNotAWall { slot: *slot });
            }
            let explained = ones(frozen).any(|w| walls & TABLES.freeze[w as usize] == frozen);
            if !explained {
                return Err(SetupError::FrozenInconsistent);
            }
        }
        let pos = Position::from_parts(walls, knights, side, frozen);
        let in_fortress: Vec<Player> = Player::BOTH
            .into_iter()
            .filter(|p| knights[p.index()] == FORTRESS[p.other().index()])
            .collect();
        match in_fortress[..] {
            [_, _] => return Err(SetupError::BothInFortress),
            [p] if p == side => return Err(SetupError::WinnerToMove { player: p }),
            _ => {}
        }
        if pos.trapped(side.other()) {
            return Err(SetupError::MoverTrapped {
                player: side.other(),
            });
        }
        Ok(pos)
    }

    /// What the position says (the notation writes it).
    pub fn setup(&self) -> Setup {
        Setup {
            walls: self.walls().collect(),
            knights: Player::BOTH.map(|p| self.knight(p)),
            turn: self.side,
            frozen: self.frozen().collect(),
        }
    }

    fn from_parts(walls: u64, knights: [u8; 2], side: Player, frozen: u64) -> Position {
        let mut pos = Position {
            walls,
            frozen,
            knights,
            side,
            hash: 0,
        };
        pos.hash = pos.compute_hash();
        pos
    }

    pub fn walls(&self) -> impl Iterator<Item = Slot> {
        ones(self.walls).map(Slot::from_index_unchecked)
    }

    pub fn frozen(&self) -> impl Iterator<Item = Slot> {
        ones(self.frozen).map(Slot::from_index_unchecked)
    }

    pub fn knight(&self, player: Player) -> Square {
        Square::from_index_unchecked(self.knights[player.index()])
    }

    /// Whether `player`'s knight is walled in: every side a wall, the edge or the other knight.
    pub fn trapped(&self, player: Player) -> bool {
        trapped(
            self.walls,
            self.knights[player.index()],
            self.knights[player.other().index()],
        )
    }

    /// Steps `player`'s knight needs to reach the opponent's fortress through the current
    /// walls (the other knight ignored), if it can at all (an evaluation feature).
    pub fn fortress_distance(&self, player: Player) -> Option<u32> {
        let target = FORTRESS[player.other().index()];
        let mut seen = 1u16 << self.knights[player.index()];
        let mut frontier = seen;
        for distance in 0..16 {
            if frontier & (1 << target) != 0 {
                return Some(distance);
            }
            let mut next = 0u16;
            for sq in ones(u64::from(frontier)) {
                for (wall, beyond) in TABLES.steps[sq as usize] {
                    if let Some(to) = beyond
                        && self.walls & (1 << wall) == 0
                    {
                        next |= 1 << to;
                    }
                }
            }
            frontier = next & !seen;
            seen |= next;
            if frontier == 0 {
                return None;
            }
        }
        None
    }

    /// Moves `player`'s knight needs to reach `target` if every wall in the way is first swung
    /// aside (one more move per wall passed), the other knight ignored; `None` past `limit`
    /// (an evaluation feature).
    pub fn distance_through_walls(&self, player: Player, target: u8, limit: u32) -> Option<u32> {
        // Buckets by cost: an open side costs 1, a walled one 2.
        let mut buckets = [0u16; 34];
        let limit = limit.min(31) as usize;
        buckets[0] = 1 << self.knights[player.index()];
        let mut settled = 0u16;
        for d in 0..=limit {
            let frontier = buckets[d] & !settled;
            if frontier & (1 << target) != 0 {
                return Some(d as u32);
            }
            settled |= frontier;
            for sq in ones(u64::from(frontier)) {
                for (wall, beyond) in TABLES.steps[sq as usize] {
                    if let Some(to) = beyond {
                        let cost = if self.walls & (1 << wall) == 0 { 1 } else { 2 };
                        buckets[d + cost] |= 1 << to;
                    }
                }
            }
        }
        None
    }

    /// The squares `player`'s knight could reach in at most `steps` steps through the walls as
    /// they stand (the other knight ignored).
    pub fn reach(&self, player: Player, steps: u32) -> u16 {
        let mut seen = 1u16 << self.knights[player.index()];
        let mut frontier = seen;
        for _ in 0..steps {
            let mut next = 0u16;
            for sq in ones(u64::from(frontier)) {
                for (wall, beyond) in TABLES.steps[sq as usize] {
                    if let Some(to) = beyond
                        && self.walls & (1 << wall) == 0
                    {
                        next |= 1 << to;
                    }
                }
            }
            frontier = next & !seen;
            seen |= next;
        }
        seen
    }

    /// How many sides of `player`'s own fortress have no wall (the ways in for the other knight).
    pub fn fortress_entries(&self, player: Player) -> u32 {
        TABLES.steps[usize::from(FORTRESS[player.index()])]
            .iter()
            .filter(|&&(wall, beyond)| beyond.is_some() && self.walls & (1 << wall) == 0)
            .count() as u32
    }

    /// How many of the four sides of `player`'s knight are open (no wall, edge or knight).
    pub fn open_sides(&self, player: Player) -> u32 {
        let other = self.knights[player.other().index()];
        TABLES.steps[self.knights[player.index()] as usize]
            .iter()
            .filter(|&&(wall, beyond)| {
                beyond.is_some_and(|sq| self.walls & (1 << wall) == 0 && sq != other)
            })
            .count() as u32
    }

    /// A move that wins on the spot for the side to move, if any: a step into the other's
    /// fortress, or a step or wall swing that walls the other knight in. Cheap unless the other
    /// knight has a single open side (only then can one move close it).
    pub fn winning_move(&self) -> Option<Move> {
        if self.in_fortress().is_some() || self.trapped(self.side) {
            return None;
        }
        let me = self.knights[self.side.index()];
        let them = self.knights[self.side.other().index()];
        let fortress = FORTRESS[self.side.other().index()];
        for (wall, beyond) in TABLES.steps[me as usize] {
            if let Some(to) = beyond
                && self.walls & (1 << wall) == 0
                && to != them
                && (to == fortress || trapped(self.walls, them, to))
            {
                return Some(Move::Step(Square::from_index_unchecked(to)));
            }
        }
        // A wall swung into the other knight's last open side (one not blocked by this knight).
        let mut open = TABLES.steps[them as usize]
            .iter()
            .filter(|&&(wall, beyond)| {
                beyond.is_some_and(|sq| sq != me && self.walls & (1 << wall) == 0)
            });
        let (&(slot, _), None) = (open.next()?, open.next()) else {
            return None;
        };
        let knights = self.knights_mask();
        for from in ones(self.walls & !self.frozen) {
            let rest = self.walls & !(1 << from);
            for swing in &TABLES.swings[from as usize] {
                if swing.to.index() != usize::from(slot) {
                    continue;
                }
                let walls = rest | swing.to.bit();
                let clear = swing
                    .paths
                    .iter()
                    .any(|p| p.swept & knights == 0 && p.passed & rest == 0);
                if clear && !trapped(walls, me, them) && trapped(walls, them, me) {
                    return Some(Move::Swing {
                        from: Slot::from_index_unchecked(from),
                        to: swing.to,
                    });
                }
            }
        }
        None
    }

    /// The player whose knight stands in the other's fortress, if any.
    pub(super) fn in_fortress(&self) -> Option<Player> {
        Player::BOTH
            .into_iter()
            .find(|p| self.knights[p.index()] == FORTRESS[p.other().index()])
    }

    fn knights_mask(&self) -> u16 {
        (1 << self.knights[0]) | (1 << self.knights[1])
    }

    /// Calls `f` with every legal move (repetition aside: see [`crate::rules::record`]).
    #[inline]
    fn each_move(&self, mut f: impl FnMut(Move)) {
        if self.in_fortress().is_some() || self.trapped(self.side) {
            return;
        }
        let me = self.knights[self.side.index()];
        let them = self.knights[self.side.other().index()];
        for (wall, beyond) in TABLES.steps[me as usize] {
            if let Some(to) = beyond
                && self.walls & (1 << wall) == 0
                && to != them
            {
                f(Move::Step(Square::from_index_unchecked(to)));
            }
        }
        let knights = self.knights_mask();
        for from in ones(self.walls & !self.frozen) {
            let rest = self.walls & !(1 << from);
            for swing in &TABLES.swings[from as usize] {
                if rest & swing.to.bit() != 0 {
                    continue;
                }
                let clear = swing
                    .paths
                    .iter()
                    .any(|p| p.swept & knights == 0 && p.passed & rest == 0);
                if clear && !trapped(rest | swing.to.bit(), me, them) {
                    f(Move::Swing {
                        from: Slot::from_index_unchecked(from),
                        to: swing.to,
                    });
                }
            }
        }
    }

    fn compute_hash(&self) -> u64 {
        let mut h = walls_hash(self.walls, &WALL_KEYS) ^ walls_hash(self.frozen, &FROZEN_KEYS);
        h ^= KNIGHT_KEYS[self.knights[0] as usize] ^ KNIGHT_KEYS[16 + self.knights[1] as usize];
        if self.side == Player::P2 {
            h ^= SIDE_KEY;
        }
        h
    }

    fn why_illegal(&self, mv: &Move) -> Option<String> {
        let me = self.knights[self.side.index()];
        let them = self.knights[self.side.other().index()];
        match *mv {
            Move::Step(to) => {
                let Some(&(wall, _)) = TABLES.steps[me as usize]
                    .iter()
                    .find(|(_, beyond)| *beyond == Some(to.index() as u8))
                else {
                    return Some(format!("{to} is not next to your knight"));
                };
                if self.walls & (1 << wall) != 0 {
                    return Some(format!(
                        "a wall on {} is in the way",
                        Slot::from_index_unchecked(wall)
                    ));
                }
                (to.index() as u8 == them).then(|| format!("the other knight stands on {to}"))
            }
            Move::Swing { from, to } => {
                if self.walls & from.bit() == 0 {
                    return Some(format!("there is no wall on {from}"));
                }
                if self.frozen & from.bit() != 0 {
                    return Some(format!("the wall on {from} is frozen this turn"));
                }
                let Some(swing) = TABLES.swings[from.index()].iter().find(|s| s.to == to) else {
                    return Some(format!("a wall on {from} cannot swing to {to}"));
                };
                let rest = self.walls & !from.bit();
                if rest & to.bit() != 0 {
                    return Some(format!("{to} already holds a wall"));
                }
                let knights = self.knights_mask();
                if !swing
                    .paths
                    .iter()
                    .any(|p| p.swept & knights == 0 && p.passed & rest == 0)
                {
                    return Some("a knight or a wall is in the way of every swing there".into());
                }
                trapped(rest | to.bit(), me, them).then(|| "it would trap your own knight".into())
            }
        }
    }
}

/// Whether the knight on `knight` is walled in by `walls`, the edge and the knight on `other`.
#[inline]
fn trapped(walls: u64, knight: u8, other: u8) -> bool {
    TABLES.steps[knight as usize]
        .iter()
        .all(|&(wall, beyond)| beyond.is_none_or(|sq| walls & (1 << wall) != 0 || sq == other))
}

impl Game for Position {
    type Move = Move;
    type PositionError = PositionError;
    type MoveError = MoveParseError;

    const FORBIDS_REPETITION: bool = true;

    fn start(_variants: Variants) -> Position {
        let walls = START_WALLS
            .iter()
            .map(|s| {
                super::lattice::Point::parse(s)
                    .and_then(Slot::from_point)
                    .expect("a wall slot")
            })
            .fold(0, |m, s| m | s.bit());
        Position::from_parts(walls, FORTRESS, Player::P1, 0)
    }

    fn parse_position(s: &str, _variants: Variants) -> Result<Position, PositionError> {
        let setup = notation::parse(s).map_err(game::PositionError::Syntax)?;
        Position::from_setup(&setup).map_err(game::PositionError::Rule)
    }

    fn parse_move(s: &str) -> Result<Move, MoveParseError> {
        s.parse()
    }

    #[inline]
    fn turn(&self) -> Player {
        self.side
    }

    fn legal_moves(&self, out: &mut MoveList<Move>) {
        self.each_move(|mv| out.push(mv));
    }

    fn count_legal(&self) -> u64 {
        let mut n = 0;
        self.each_move(|_| n += 1);
        n
    }

    fn check(&self, mv: &Move) -> Result<(), IllegalMove> {
        if self.outcome().is_some() {
            return Err(IllegalMove::GameOver);
        }
        match self.why_illegal(mv) {
            Some(reason) => Err(IllegalMove::rule(mv, reason)),
            None => Ok(()),
        }
    }

    #[inline]
    fn play_unchecked(&mut self, mv: &Move) {
        let side = self.side.index();
        self.hash ^= walls_hash(self.frozen, &FROZEN_KEYS);
        match *mv {
            Move::Step(to) => {
                self.hash ^= KNIGHT_KEYS[side * 16 + self.knights[side] as usize]
                    ^ KNIGHT_KEYS[side * 16 + to.index()];
                self.knights[side] = to.index() as u8;
                self.frozen = 0;
            }
            Move::Swing { from, to } => {
                self.walls ^= from.bit() | to.bit();
                self.hash ^= WALL_KEYS[from.index()] ^ WALL_KEYS[to.index()];
                self.frozen = self.walls & TABLES.freeze[to.index()];
            }
        }
        self.hash ^= walls_hash(self.frozen, &FROZEN_KEYS) ^ SIDE_KEY;
        self.side = self.side.other();
    }

    fn outcome(&self) -> Option<Outcome> {
        if let Some(p) = self.in_fortress() {
            return Some(Outcome::win(p, Termination::Fortress));
        }
        if self.trapped(self.side) {
            return Some(Outcome::win(self.side.other(), Termination::Trap));
        }
        if self.count_legal() == 0 {
            return Some(Outcome::win(self.side.other(), Termination::NoMoves));
        }
        None
    }

    #[inline]
    fn hash(&self) -> u64 {
        self.hash
    }

    fn hash_from_scratch(&self) -> u64 {
        self.compute_hash()
    }

    /// Walls, knights and the side to move, exactly (49 bits): what the repetition rule compares.
    #[inline]
    fn repetition_key(&self) -> u64 {
        self.walls
            | u64::from(self.knights[0]) << 40
            | u64::from(self.knights[1]) << 44
            | (self.side.index() as u64) << 48
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        notation::write(&self.setup(), f)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "alcazar::Position({self})")
    }
}
