//! The Pyrga position, the rules that make one valid, and its move generator.

use std::fmt;

use super::PositionError;
use super::moves::{Move, MoveParseError, Piece, Shape};
use super::notation;
use super::setup::{Contents, Setup};
use super::space::{ADJACENT, Dir, RAYS, Space};
use crate::rules::bits::ones;
use crate::rules::game::{self, Game, IllegalMove, MoveList, Outcome, Player, Termination, Winner};
use crate::rules::kind::Variants;
use crate::rules::zobrist;

/// Pieces of each shape per player.
const PIECES_PER_SHAPE: u32 = 5;
/// Completed towers a player must control to win.
const TOWERS_TO_WIN: u32 = 3;

const PIECE_KEYS: [u64; 16 * 6 * 2] = zobrist::table(0x5059_5247_4131);
const LAST_KEYS: [u64; 16 * 6] = zobrist::table(0x5059_5247_4132);
const SIDE_KEY: u64 = zobrist::key(0x5059_5247_4133, 0);

fn piece_key(space: usize, piece: Piece, owner: Player) -> u64 {
    PIECE_KEYS[(space * 6 + piece.code()) * 2 + owner.index()]
}

fn last_key(mv: &Move) -> u64 {
    LAST_KEYS[mv.space.index() * 6 + mv.piece.code()]
}

/// Every rule a Pyrga setup can break, each with the data to say where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("the triangle on {space} points off the board")]
    TriangleOffBoard { space: Space },
    #[error("{player} has {found} {shape:?} pieces on the board, at most 5 exist")]
    TooManyPieces {
        player: Player,
        shape: Shape,
        found: u32,
    },
    #[error("p1 has {p1} pieces and p2 {p2}, which does not fit {side} being to move")]
    PieceBalance { p1: u32, p2: u32, side: Player },
    #[error("the last move is '-' but the board is not empty")]
    MissingLast,
    #[error("the board is empty but a last move {last} is given")]
    LastOnEmptyBoard { last: Move },
    #[error("the last move {last} is not on the board as a piece of {player}")]
    LastNotOnBoard { last: Move, player: Player },
    #[error("both players control three completed towers")]
    BothWon,
}

/// A validated Pyrga position.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// `shapes[shape][player]`: the spaces holding that player's piece of that shape.
    shapes: [[u16; 2]; 3],
    /// `dirs[dir]`: the spaces whose triangle points `dir`.
    dirs: [u16; 4],
    side: Player,
    last: Option<Move>,
    hash: u64,
}

impl Position {
    /// The position `setup` describes, if it breaks no rule (its spaces checked from the top
    /// rank, as the notation reads them, then the board as a whole and the last move).
    pub fn from_setup(setup: &Setup) -> Result<Position, SetupError> {
        let mut pos = Position::empty();
        for rank in (0..4).rev() {
            for file in 0..4 {
                let space = Space::from_coords(file, rank).expect("4×4");
                for (piece, owner) in setup.spaces[space.index()].pieces() {
                    if let Piece::Triangle(dir) = piece
                        && RAYS[dir as usize][space.index()] == 0
                    {
                        return Err(SetupError::TriangleOffBoard { space });
                    }
                    pos.put(space, piece, owner);
                }
            }
        }
        let counts = Player::BOTH.map(|p| pos.pieces_of(p));
        for p in Player::BOTH {
            for shape in Shape::ALL {
                let found = pos.on_board(p, shape);
                if found > PIECES_PER_SHAPE {
                    return Err(SetupError::TooManyPieces {
                        player: p,
                        shape,
                        found,
                    });
                }
            }
        }
        let side = setup.turn;
        let balanced = match side {
            Player::P1 => counts[0] == counts[1],
            Player::P2 => counts[0] == counts[1] + 1,
        };
        if !balanced {
            return Err(SetupError::PieceBalance {
                p1: counts[0],
                p2: counts[1],
                side,
            });
        }
        let empty = counts[0] + counts[1] == 0;
        match setup.last {
            None if !empty => return Err(SetupError::MissingLast),
            Some(last) if empty => return Err(SetupError::LastOnEmptyBoard { last }),
            Some(last)
                if pos.piece_at(last.space, last.piece.shape())
                    != Some((last.piece, side.other())) =>
            {
                return Err(SetupError::LastNotOnBoard {
                    last,
                    player: side.other(),
                });
            }
            _ => {}
        }
        if pos.towers().iter().all(|&t| t >= 3) {
            return Err(SetupError::BothWon);
        }
        Ok(pos.finish(side, setup.last))
    }

    /// What the position says, space by space (the notation writes it).
    pub fn setup(&self) -> Setup {
        Setup {
            spaces: std::array::from_fn(|i| {
                let space = Space::from_index_unchecked(i as u8);
                let mut contents = Contents::default();
                for shape in Shape::ALL {
                    if let Some((piece, owner)) = self.piece_at(space, shape) {
                        contents.put(piece, owner);
                    }
                }
                contents
            }),
            turn: self.side,
            last: self.last,
        }
    }

    fn empty() -> Position {
        Position {
            shapes: [[0; 2]; 3],
            dirs: [0; 4],
            side: Player::P1,
            last: None,
            hash: 0,
        }
    }

    /// Puts a piece on the board without any rule check ([`Position::from_setup`] validates
    /// afterwards).
    fn put(&mut self, space: Space, piece: Piece, owner: Player) {
        self.shapes[piece.shape() as usize][owner.index()] |= space.bit();
        if let Piece::Triangle(d) = piece {
            self.dirs[d as usize] |= space.bit();
        }
    }

    fn finish(mut self, side: Player, last: Option<Move>) -> Position {
        self.side = side;
        self.last = last;
        self.hash = self.compute_hash();
        self
    }

    /// The last move played, which constrains the side to move.
    pub fn last(&self) -> Option<Move> {
        self.last
    }

    /// The owner of the piece of `shape` on `space`, if any.
    pub fn owner(&self, space: Space, shape: Shape) -> Option<Player> {
        Player::BOTH
            .into_iter()
            .find(|p| self.shapes[shape as usize][p.index()] & space.bit() != 0)
    }

    /// The piece of `shape` on `space` with its owner (triangles with their direction).
    pub fn piece_at(&self, space: Space, shape: Shape) -> Option<(Piece, Player)> {
        let owner = self.owner(space, shape)?;
        let piece = match shape {
            Shape::Square => Piece::Square,
            Shape::Cylinder => Piece::Cylinder,
            Shape::Triangle => Piece::Triangle(
                Dir::ALL
                    .into_iter()
                    .find(|d| self.dirs[*d as usize] & space.bit() != 0)
                    .expect("every triangle has a direction"),
            ),
        };
        Some((piece, owner))
    }

    /// Pieces of `shape` still in `player`'s hand.
    pub fn in_hand(&self, player: Player, shape: Shape) -> u32 {
        PIECES_PER_SHAPE.saturating_sub(self.on_board(player, shape))
    }

    /// Pieces of `shape` that `player` has on the board.
    pub fn on_board(&self, player: Player, shape: Shape) -> u32 {
        self.shapes[shape as usize][player.index()].count_ones()
    }

    #[inline]
    fn holding(&self, shape: Shape) -> u16 {
        let [a, b] = self.shapes[shape as usize];
        a | b
    }

    /// Spaces holding at least one piece.
    #[inline]
    fn occupied(&self) -> u16 {
        self.holding(Shape::Square) | self.holding(Shape::Triangle) | self.holding(Shape::Cylinder)
    }

    fn pieces_of(&self, player: Player) -> u32 {
        self.shapes
            .iter()
            .map(|s| s[player.index()].count_ones())
            .sum()
    }

    /// Completed towers controlled by each player.
    pub fn towers(&self) -> [u32; 2] {
        let full = self.holding(Shape::Square)
            & self.holding(Shape::Triangle)
            & self.holding(Shape::Cylinder);
        let [s, t, c] = self.shapes.map(|s| s[0]);
        let p1_majority = (s & t) | (s & c) | (t & c);
        [
            (full & p1_majority).count_ones(),
            (full & !p1_majority).count_ones(),
        ]
    }

    /// The opening rule: `p1`'s second piece may not be a square if its first one was.
    #[inline]
    fn squares_barred(&self) -> bool {
        self.side == Player::P1
            && self.pieces_of(Player::P1) == 1
            && self.pieces_of(Player::P2) == 1
            && self.shapes[Shape::Square as usize][0] != 0
    }

    /// The spaces the last move constrains the side to move to.
    #[inline]
    fn constrained(&self) -> u16 {
        match self.last {
            None => 0xFFFF,
            Some(Move { piece, space }) => match piece {
                Piece::Square => ADJACENT[space.index()],
                Piece::Triangle(d) => RAYS[d as usize][space.index()],
                Piece::Cylinder => space.bit(),
            },
        }
    }

    /// Calls `f` for every placement on `spaces` that the hand and the board allow.
    #[inline]
    fn each_placement(&self, spaces: u16, mut f: impl FnMut(Move)) {
        let me = self.side;
        for shape in Shape::ALL {
            if self.in_hand(me, shape) == 0 || (shape == Shape::Square && self.squares_barred()) {
                continue;
            }
            for sp in ones(u64::from(spaces & !self.holding(shape))) {
                let space = Space::from_index_unchecked(sp);
                match shape {
                    Shape::Square => f(Move {
                        piece: Piece::Square,
                        space,
                    }),
                    Shape::Cylinder => f(Move {
                        piece: Piece::Cylinder,
                        space,
                    }),
                    Shape::Triangle => {
                        for d in Dir::ALL {
                            if RAYS[d as usize][sp as usize] != 0 {
                                f(Move {
                                    piece: Piece::Triangle(d),
                                    space,
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    /// The spaces the side to move may use: the constrained ones if any placement fits there,
    /// otherwise every completely empty space. Zero once the game is won.
    fn playable(&self) -> u16 {
        if self.towers().iter().any(|&t| t >= TOWERS_TO_WIN) {
            return 0;
        }
        let constrained = self.constrained();
        let mut any = false;
        self.each_placement(constrained, |_| any = true);
        if any { constrained } else { !self.occupied() }
    }

    fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for shape in Shape::ALL {
            for p in Player::BOTH {
                for sp in ones(u64::from(self.shapes[shape as usize][p.index()])) {
                    let space = Space::from_index_unchecked(sp);
                    let (piece, _) = self.piece_at(space, shape).expect("occupied");
                    h ^= piece_key(sp as usize, piece, p);
                }
            }
        }
        if let Some(last) = &self.last {
            h ^= last_key(last);
        }
        if self.side == Player::P2 {
            h ^= SIDE_KEY;
        }
        h
    }

    /// Per player, the tie-break counts in order: controlled completed towers, two-piece
    /// stacks wholly one's own, one-piece stacks one's own.
    pub fn tiebreak_counts(&self) -> [[u32; 3]; 2] {
        let towers = self.towers();
        let mut counts = [[towers[0], 0, 0], [towers[1], 0, 0]];
        for sp in 0..16u8 {
            let bit = 1u16 << sp;
            let pieces = self.shapes.map(|s| [s[0] & bit != 0, s[1] & bit != 0]);
            let total = pieces.iter().flatten().filter(|&&b| b).count();
            for p in Player::BOTH {
                let mine = pieces.iter().filter(|s| s[p.index()]).count();
                if mine == total && (total == 1 || total == 2) {
                    counts[p.index()][3 - total] += 1;
                }
            }
        }
        counts
    }

    /// The tie-break of a game in which nobody can place: the first count that differs.
    fn tiebreak(&self) -> Winner {
        let [p1, p2] = self.tiebreak_counts();
        match p1.cmp(&p2) {
            std::cmp::Ordering::Greater => Winner::Player(Player::P1),
            std::cmp::Ordering::Less => Winner::Player(Player::P2),
            std::cmp::Ordering::Equal => Winner::Draw,
        }
    }
}

impl Game for Position {
    type Move = Move;
    type PositionError = PositionError;
    type MoveError = MoveParseError;

    fn start(_variants: Variants) -> Position {
        Position::empty().finish(Player::P1, None)
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
        self.each_placement(self.playable(), |mv| out.push(mv));
    }

    fn count_legal(&self) -> u64 {
        let mut n = 0;
        self.each_placement(self.playable(), |_| n += 1);
        n
    }

    fn check(&self, mv: &Move) -> Result<(), IllegalMove> {
        if self.outcome().is_some() {
            return Err(IllegalMove::GameOver);
        }
        let shape = mv.piece.shape();
        let reason = |r: String| Err(IllegalMove::rule(mv, r));
        if self.in_hand(self.side, shape) == 0 {
            return reason(format!("no {shape:?} left in hand").to_lowercase());
        }
        if shape == Shape::Square && self.squares_barred() {
            return reason("p1's second piece may not be a square after a first square".into());
        }
        if self.holding(shape) & mv.space.bit() != 0 {
            return reason(format!("{} already holds a {shape:?}", mv.space).to_lowercase());
        }
        if let Piece::Triangle(d) = mv.piece
            && RAYS[d as usize][mv.space.index()] == 0
        {
            return reason("the triangle points off the board".into());
        }
        if self.playable() & mv.space.bit() == 0 {
            return reason(if self.playable() == self.constrained() {
                format!("{} is not where the last piece allows", mv.space)
            } else {
                format!(
                    "nothing fits where the last piece allows, so play on an empty space; {} is not empty",
                    mv.space
                )
            });
        }
        Ok(())
    }

    #[inline]
    fn play_unchecked(&mut self, mv: &Move) {
        self.put(mv.space, mv.piece, self.side);
        self.hash ^= piece_key(mv.space.index(), mv.piece, self.side);
        if let Some(last) = &self.last {
            self.hash ^= last_key(last);
        }
        self.hash ^= last_key(mv) ^ SIDE_KEY;
        self.last = Some(*mv);
        self.side = self.side.other();
    }

    fn outcome(&self) -> Option<Outcome> {
        let towers = self.towers();
        for p in Player::BOTH {
            if towers[p.index()] >= TOWERS_TO_WIN {
                return Some(Outcome::win(p, Termination::Towers));
            }
        }
        if self.count_legal() == 0 {
            return Some(Outcome {
                winner: self.tiebreak(),
                termination: Termination::Tiebreak,
            });
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

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        notation::write(&self.setup(), f)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pyrga::Position({self})")
    }
}
