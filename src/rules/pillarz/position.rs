//! The pillarz position, the rules that make one valid, and its move generator.

use std::fmt;

use super::PositionError;
use super::moves::{Move, MoveParseError};
use super::notation;
use super::setup::Setup;
use super::square::{NEIGHBOURS, Square};
use crate::rules::bits::ones;
use crate::rules::game::{self, Game, IllegalMove, MoveList, Outcome, Player, Termination};
use crate::rules::kind::Variants;
use crate::rules::zobrist;

const LEVEL_KEYS: [u64; 25 * 5] = zobrist::table(0x5049_4c4c_4152_5a31);
const PAWN_KEYS: [u64; 2 * 25] = zobrist::table(0x5049_4c4c_4152_5a32);
const SIDE_KEY: u64 = zobrist::key(0x5049_4c4c_4152_5a33, 0);

#[inline]
fn level_key(sq: usize, level: usize) -> u64 {
    LEVEL_KEYS[sq * 5 + level]
}

#[inline]
fn pawn_key(player: Player, sq: usize) -> u64 {
    PAWN_KEYS[player.index() * 25 + sq]
}

/// Every rule a pillarz setup can break, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("level {level} on {square} is outside 0-4")]
    LevelOutOfRange { square: Square, level: u8 },
    #[error("a pawn on the capped square {square}")]
    PawnOnCap { square: Square },
    #[error("{player} has {found} pawns; a player has 0 pawns before placing and 2 after")]
    PawnCount { player: Player, found: u32 },
    #[error("p2 has placed its pawns but p1 has not")]
    PlacementOrder,
    #[error("{expected} is to place its pawns, but the side to move is {found}")]
    PlacementSide { expected: Player, found: Player },
    #[error("buildings on the board before both players have placed their pawns")]
    BuiltBeforePlacement,
    #[error("pawns of both players stand on level 3")]
    BothOnTop,
    #[error("{player} has two pawns on level 3; only the winning pawn can stand there")]
    TwoOnTop { player: Player },
    #[error("{player} has won (a pawn on level 3) but is to move")]
    WinnerToMove { player: Player },
}

/// A validated pillarz position.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// `levels[k]`: squares whose level is greater than `k`; `levels[3]` are the caps.
    levels: [u32; 4],
    pawns: [u32; 2],
    side: Player,
    hash: u64,
}

impl Position {
    /// The position `setup` describes, if it breaks no rule (checked square by square from
    /// the top rank, as the notation reads them, then as a whole).
    pub fn from_setup(setup: &Setup) -> Result<Position, SetupError> {
        let mut levels = [0u32; 4];
        let mut pawns = [0u32; 2];
        for rank in (0..5).rev() {
            for file in 0..5 {
                let sq = Square::from_coords(file, rank).expect("5×5");
                let level = setup.levels[sq.index()];
                if level > 4 {
                    return Err(SetupError::LevelOutOfRange { square: sq, level });
                }
                for plane in levels.iter_mut().take(level as usize) {
                    *plane |= sq.bit();
                }
                if let Some(p) = setup.pawns[sq.index()] {
                    if level == 4 {
                        return Err(SetupError::PawnOnCap { square: sq });
                    }
                    pawns[p.index()] |= sq.bit();
                }
            }
        }
        validate(levels, pawns, setup.turn)?;
        Ok(Position::from_parts(levels, pawns, setup.turn))
    }

    /// What the position says, square by square (the notation writes it).
    pub fn setup(&self) -> Setup {
        let square = |i: usize| Square::new(i as u8).expect("25 squares");
        Setup {
            levels: std::array::from_fn(|i| self.level(square(i))),
            pawns: std::array::from_fn(|i| self.pawn_at(square(i))),
            turn: self.side,
        }
    }

    /// Builds a position from parts that break no rule.
    fn from_parts(levels: [u32; 4], pawns: [u32; 2], side: Player) -> Position {
        let mut pos = Position {
            levels,
            pawns,
            side,
            hash: 0,
        };
        pos.hash = pos.compute_hash();
        pos
    }

    /// The level (0–4) of a square.
    #[inline]
    pub fn level(&self, sq: Square) -> u8 {
        let bit = sq.bit();
        self.levels.iter().map(|l| u8::from(l & bit != 0)).sum()
    }

    /// The owner of the pawn on a square, if any.
    pub fn pawn_at(&self, sq: Square) -> Option<Player> {
        Player::BOTH
            .into_iter()
            .find(|p| self.pawns[p.index()] & sq.bit() != 0)
    }

    /// The squares of a player's pawns, as a bit set.
    pub fn pawns(&self, player: Player) -> u32 {
        self.pawns[player.index()]
    }

    /// Per pawn of `player`: its level and how many squares it could step to (evaluation
    /// features; builds ignored).
    pub fn pawn_features(&self, player: Player) -> impl Iterator<Item = (u8, u32, u32)> + '_ {
        ones(u64::from(self.pawns[player.index()])).map(move |from| {
            let sq = Square::from_index_unchecked(from);
            let dest = self.destinations(from as usize);
            (
                self.level(sq),
                dest.count_ones(),
                (dest & self.levels[2] & !self.levels[3]).count_ones(),
            )
        })
    }

    /// A winning step of `player`'s (a pawn on level 2 onto a free level-3 square), whether or
    /// not it is `player`'s turn. Pure bit arithmetic: the search asks this at every node.
    #[inline]
    pub fn winning_step(&self, player: Player) -> Option<Move> {
        if self.pawns[player.other().index()] == 0 || self.pawns[player.index()] == 0 {
            return None;
        }
        let on_two = self.pawns[player.index()] & self.levels[1] & !self.levels[2];
        let tops = self.levels[2] & !self.levels[3] & !self.occupied();
        for from in ones(u64::from(on_two)) {
            let to = NEIGHBOURS[from as usize] & tops;
            if to != 0 {
                return Some(Move::Step {
                    from: Square::from_index_unchecked(from),
                    to: Square::from_index_unchecked(to.trailing_zeros() as u8),
                    build: None,
                });
            }
        }
        None
    }

    /// Whether, after the side to move plays this step, it would have a winning step of its
    /// own (a threat the opponent must stop): `winning_step` of the child, without making it.
    /// Pure bit arithmetic: the search's move ordering asks this of every move.
    #[inline]
    pub fn step_threatens(&self, from: Square, to: Square, build: Option<Square>) -> bool {
        let me = self.side.index();
        let mut levels = self.levels;
        if let Some(b) = build {
            levels[usize::from(self.level(b))] |= b.bit();
        }
        let mine = self.pawns[me] ^ from.bit() ^ to.bit();
        let theirs = self.pawns[1 - me];
        if mine == 0 || theirs == 0 {
            return false;
        }
        let on_two = mine & levels[1] & !levels[2];
        let tops = levels[2] & !levels[3] & !(mine | theirs);
        ones(u64::from(on_two)).any(|from| NEIGHBOURS[from as usize] & tops != 0)
    }

    /// Whether the side to move can step onto level 3 right now (and so wins).
    pub fn can_win_now(&self) -> bool {
        !self.goal_reached() && self.winning_step(self.side).is_some()
    }

    /// Whether a pawn stands on level 3: the game is won.
    #[inline]
    pub fn goal_reached(&self) -> bool {
        self.on_top().is_some()
    }

    /// The levels as bit sets: `[k]` holds the squares whose level is greater than `k`.
    #[inline]
    pub fn level_sets(&self) -> [u32; 4] {
        self.levels
    }

    /// The squares the pawn on `from` could step to (whoever's turn it is).
    #[inline]
    pub fn steps_from(&self, from: Square) -> u32 {
        self.destinations(from.index())
    }

    #[inline]
    fn occupied(&self) -> u32 {
        self.pawns[0] | self.pawns[1]
    }

    /// The squares a pawn standing on `from` may step to.
    #[inline]
    fn destinations(&self, from: usize) -> u32 {
        // A pawn on level l may climb to level l + 1 at most: exclude levels[l + 1]. A pawn on
        // level 3 has already won, so l ≤ 2 here and caps are excluded too.
        let l = ((self.levels[0] >> from) & 1)
            + ((self.levels[1] >> from) & 1)
            + ((self.levels[2] >> from) & 1);
        NEIGHBOURS[from] & !self.occupied() & !self.levels[(l as usize + 1).min(3)]
    }

    /// Whether the side to move has no legal move, without counting them: a pawn that can
    /// step can always build on the square it left, and a placement always has room.
    #[inline]
    fn trapped(&self) -> bool {
        !self.placing()
            && ones(u64::from(self.pawns[self.side.index()]))
                .all(|from| self.destinations(from as usize) == 0)
    }

    #[inline]
    fn placing(&self) -> bool {
        self.pawns[self.side.index()] == 0
    }

    /// The player whose pawn stands on level 3 (not capped), if any.
    #[inline]
    fn on_top(&self) -> Option<Player> {
        let top = self.levels[2] & !self.levels[3];
        Player::BOTH
            .into_iter()
            .find(|p| self.pawns[p.index()] & top != 0)
    }

    fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for sq in 0..25 {
            let level = self.level(Square::from_index_unchecked(sq as u8)) as usize;
            if level > 0 {
                h ^= level_key(sq, level);
            }
        }
        for p in Player::BOTH {
            for sq in ones(u64::from(self.pawns[p.index()])) {
                h ^= pawn_key(p, sq as usize);
            }
        }
        if self.side == Player::P2 {
            h ^= SIDE_KEY;
        }
        h
    }

    fn check_place(&self, a: Square, b: Square) -> Result<(), String> {
        if !self.placing() {
            return Err("the pawns are already placed".into());
        }
        if a == b {
            return Err("both pawns cannot stand on one square".into());
        }
        for sq in [a, b] {
            if self.occupied() & sq.bit() != 0 {
                return Err(format!("{sq} is occupied"));
            }
            if self.levels[3] & sq.bit() != 0 {
                return Err(format!("{sq} is capped"));
            }
        }
        Ok(())
    }

    fn check_step(&self, from: Square, to: Square, build: Option<Square>) -> Result<(), String> {
        if self.placing() {
            return Err("both pawns must be placed first".into());
        }
        if self.pawns[self.side.index()] & from.bit() == 0 {
            return Err(format!("no pawn of yours stands on {from}"));
        }
        if NEIGHBOURS[from.index()] & to.bit() == 0 {
            return Err(format!("{to} is not next to {from}"));
        }
        if self.occupied() & to.bit() != 0 {
            return Err(format!("{to} is occupied"));
        }
        if self.levels[3] & to.bit() != 0 {
            return Err(format!("{to} is capped"));
        }
        if self.level(to) > self.level(from) + 1 {
            return Err(format!("{to} is too high to climb from {from}"));
        }
        let wins = self.level(to) == 3;
        match build {
            None if wins => Ok(()),
            None => Err("a step must be followed by a build".into()),
            Some(_) if wins => Err(format!("stepping onto {to} wins: no build follows")),
            Some(b) => {
                if NEIGHBOURS[to.index()] & b.bit() == 0 {
                    Err(format!("{b} is not next to {to}"))
                } else if b != from && self.occupied() & b.bit() != 0 {
                    Err(format!("{b} is occupied"))
                } else if self.levels[3] & b.bit() != 0 {
                    Err(format!("{b} is capped"))
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl Game for Position {
    type Move = Move;
    type PositionError = PositionError;
    type MoveError = MoveParseError;

    fn start(_variants: Variants) -> Position {
        Position::from_parts([0; 4], [0; 2], Player::P1)
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
        if self.on_top().is_some() {
            return;
        }
        if self.placing() {
            let free = !self.occupied() & !self.levels[3] & ((1 << 25) - 1);
            for a in ones(u64::from(free)) {
                for b in ones(u64::from(free) & !((2u64 << a) - 1)) {
                    out.push(Move::Place(
                        Square::from_index_unchecked(a),
                        Square::from_index_unchecked(b),
                    ));
                }
            }
            return;
        }
        let occupied = self.occupied();
        for from in ones(u64::from(self.pawns[self.side.index()])) {
            let free_after = !(occupied ^ (1 << from)) & !self.levels[3];
            let from_sq = Square::from_index_unchecked(from);
            for to in ones(u64::from(self.destinations(from as usize))) {
                let to_sq = Square::from_index_unchecked(to);
                if self.levels[2] & (1 << to) != 0 {
                    out.push(Move::Step {
                        from: from_sq,
                        to: to_sq,
                        build: None,
                    });
                    continue;
                }
                for b in ones(u64::from(NEIGHBOURS[to as usize] & free_after)) {
                    out.push(Move::Step {
                        from: from_sq,
                        to: to_sq,
                        build: Some(Square::from_index_unchecked(b)),
                    });
                }
            }
        }
    }

    #[inline]
    fn count_legal(&self) -> u64 {
        if self.on_top().is_some() {
            return 0;
        }
        if self.placing() {
            let n = u64::from((!self.occupied() & !self.levels[3] & ((1 << 25) - 1)).count_ones());
            return n * n.saturating_sub(1) / 2;
        }
        let occupied = self.occupied();
        let mut count = 0;
        for from in ones(u64::from(self.pawns[self.side.index()])) {
            let free_after = !(occupied ^ (1 << from)) & !self.levels[3];
            let dest = self.destinations(from as usize);
            count += u64::from((dest & self.levels[2]).count_ones());
            for to in ones(u64::from(dest & !self.levels[2])) {
                count += u64::from((NEIGHBOURS[to as usize] & free_after).count_ones());
            }
        }
        count
    }

    fn check(&self, mv: &Move) -> Result<(), IllegalMove> {
        if self.outcome().is_some() {
            return Err(IllegalMove::GameOver);
        }
        let verdict = match *mv {
            Move::Place(a, b) => self.check_place(a, b),
            Move::Step { from, to, build } => self.check_step(from, to, build),
        };
        verdict.map_err(|reason| IllegalMove::rule(mv, reason))
    }

    #[inline]
    fn play_unchecked(&mut self, mv: &Move) {
        let side = self.side;
        match *mv {
            Move::Place(a, b) => {
                self.pawns[side.index()] |= a.bit() | b.bit();
                self.hash ^= pawn_key(side, a.index()) ^ pawn_key(side, b.index());
            }
            Move::Step { from, to, build } => {
                self.pawns[side.index()] ^= from.bit() | to.bit();
                self.hash ^= pawn_key(side, from.index()) ^ pawn_key(side, to.index());
                if let Some(b) = build {
                    let old = self.level(b) as usize;
                    self.levels[old] |= b.bit();
                    self.hash ^= level_key(b.index(), old + 1);
                    if old > 0 {
                        self.hash ^= level_key(b.index(), old);
                    }
                }
            }
        }
        self.side = side.other();
        self.hash ^= SIDE_KEY;
    }

    fn outcome(&self) -> Option<Outcome> {
        if let Some(winner) = self.on_top() {
            return Some(Outcome::win(winner, Termination::Goal));
        }
        if self.trapped() {
            return Some(Outcome::win(self.side.other(), Termination::Trap));
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
}

fn validate(levels: [u32; 4], pawns: [u32; 2], side: Player) -> Result<(), SetupError> {
    let counts = pawns.map(u32::count_ones);
    for p in Player::BOTH {
        let found = counts[p.index()];
        if found != 0 && found != 2 {
            return Err(SetupError::PawnCount { player: p, found });
        }
    }
    match counts {
        [0, 2] => return Err(SetupError::PlacementOrder),
        [0, 0] | [2, 0] => {
            let expected = if counts[0] == 0 {
                Player::P1
            } else {
                Player::P2
            };
            if side != expected {
                return Err(SetupError::PlacementSide {
                    expected,
                    found: side,
                });
            }
            if levels[0] != 0 {
                return Err(SetupError::BuiltBeforePlacement);
            }
        }
        _ => {}
    }
    let top = levels[2] & !levels[3];
    let on_top = pawns.map(|p| (p & top).count_ones());
    if on_top[0] > 0 && on_top[1] > 0 {
        return Err(SetupError::BothOnTop);
    }
    for p in Player::BOTH {
        match on_top[p.index()] {
            0 => {}
            1 if p == side => return Err(SetupError::WinnerToMove { player: p }),
            1 => {}
            _ => return Err(SetupError::TwoOnTop { player: p }),
        }
    }
    Ok(())
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        notation::write(&self.setup(), f)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pillarz::Position({self})")
    }
}
