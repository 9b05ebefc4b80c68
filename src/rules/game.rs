//! The abstraction every game implements, and the vocabulary shared by all of them.
//!
//! That vocabulary is also the HTTP API's, as the game and variant names are: a player is the
//! API's `Seat`, a winner its `GameResult`, a termination its `TerminationKind` (their doc
//! comments are the OpenAPI text). The API converts none of them.

use std::fmt;
use std::hash::Hash;

use super::kind::Variants;

/// A seat at the table: `p1` moves first.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
#[schema(as = Seat)]
pub enum Player {
    P1,
    P2,
}

impl Player {
    pub const BOTH: [Player; 2] = [Player::P1, Player::P2];

    #[inline]
    pub const fn other(self) -> Player {
        match self {
            Player::P1 => Player::P2,
            Player::P2 => Player::P1,
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The seat name used by the API: `p1` or `p2`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Player::P1 => "p1",
            Player::P2 => "p2",
        }
    }

    /// The player of an API seat name.
    pub fn parse(s: &str) -> Option<Player> {
        Player::BOTH.into_iter().find(|p| p.as_str() == s)
    }

    /// The side digit of the position notations: `1` or `2`.
    pub const fn digit(self) -> char {
        match self {
            Player::P1 => '1',
            Player::P2 => '2',
        }
    }

    pub fn from_digit(s: &str) -> Option<Player> {
        match s {
            "1" => Some(Player::P1),
            "2" => Some(Player::P2),
            _ => None,
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who won a finished game. (Its API form, a name, is in `api`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Winner {
    Player(Player),
    Draw,
}

impl Winner {
    /// The API's result name: `p1`, `p2` or `draw`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Winner::Player(p) => p.as_str(),
            Winner::Draw => "draw",
        }
    }

    /// The winner of an API result name.
    pub fn parse(s: &str) -> Option<Winner> {
        match s {
            "draw" => Some(Winner::Draw),
            _ => Player::parse(s).map(Winner::Player),
        }
    }
}

/// How a finished game ended.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
#[schema(as = TerminationKind)]
pub enum Termination {
    /// pillarz: a pawn reached the third level.
    Goal,
    /// pillarz: the side to move cannot move; Alcazar: a knight was walled in.
    Trap,
    /// Alcazar: a knight entered the opponent's fortress.
    Fortress,
    /// Pilastri and Alcazar: the side to move has no legal move.
    NoMoves,
    /// Pyrga: a player controls three completed towers.
    Towers,
    /// Pyrga: nobody can place, and the tie-break counts decided.
    Tiebreak,
    /// A clock ran out (decided by the service, never by the rules).
    Timeout,
    /// A player resigned (decided by the service, never by the rules).
    Resign,
    /// The service's ply cap (`--max-plies`) was reached: a draw. A policy of the service,
    /// not a rule of any game.
    MoveLimit,
}

impl Termination {
    pub const ALL: [Termination; 9] = [
        Termination::Goal,
        Termination::Trap,
        Termination::Fortress,
        Termination::NoMoves,
        Termination::Towers,
        Termination::Tiebreak,
        Termination::Timeout,
        Termination::Resign,
        Termination::MoveLimit,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Termination::Goal => "goal",
            Termination::Trap => "trap",
            Termination::Fortress => "fortress",
            Termination::NoMoves => "no_moves",
            Termination::Towers => "towers",
            Termination::Tiebreak => "tiebreak",
            Termination::Timeout => "timeout",
            Termination::Resign => "resign",
            Termination::MoveLimit => "move_limit",
        }
    }

    /// The termination of an API name (also its stored name).
    pub fn parse(s: &str) -> Option<Termination> {
        Termination::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// The end of a game: who won, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub winner: Winner,
    pub termination: Termination,
}

impl Outcome {
    pub const fn win(player: Player, termination: Termination) -> Outcome {
        Outcome {
            winner: Winner::Player(player),
            termination,
        }
    }
}

/// Why a syntactically valid move cannot be played in a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    #[error("the game is over")]
    GameOver,
    #[error("{mv} is not legal here: {reason}")]
    Rule { mv: String, reason: String },
    #[error("{mv} would repeat an earlier position")]
    Repetition { mv: String },
}

impl IllegalMove {
    pub fn rule(mv: impl fmt::Display, reason: impl Into<String>) -> IllegalMove {
        IllegalMove::Rule {
            mv: mv.to_string(),
            reason: reason.into(),
        }
    }
}

/// Why a position string is refused: its text is not the game's notation (`N`, from the
/// game's `notation`), or the setup it describes breaks a rule (`S`, from the game's
/// `Position::from_setup`). The message is the inner error's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError<N, S> {
    #[error(transparent)]
    Syntax(N),
    #[error(transparent)]
    Rule(S),
}

/// A refused [`Game::play`]: the position, untouched, and the reason.
#[derive(Clone, Debug)]
pub struct PlayError<G> {
    pub position: G,
    pub error: IllegalMove,
}

/// A growable move buffer. Search and perft keep one per ply and reuse it, so generating moves
/// allocates nothing once the buffers have grown.
pub type MoveList<M> = Vec<M>;

/// The rules of one game, on one validated position.
pub trait Game: Clone + PartialEq + fmt::Debug + fmt::Display + Send + Sync + 'static {
    /// A move, as small and cheap to copy as the game allows.
    type Move: Copy + Eq + Hash + fmt::Debug + fmt::Display + Send + Sync + 'static;
    /// Why a position string is refused.
    type PositionError: std::error::Error + Send + Sync + 'static;
    /// Why a move string is refused before any position is looked at.
    type MoveError: std::error::Error + Send + Sync + 'static;

    /// Whether the game forbids repeating a position (see [`Game::repetition_key`]).
    const FORBIDS_REPETITION: bool = false;

    /// The initial position for these variants (already checked by [`super::GameKind`]).
    fn start(variants: Variants) -> Self;

    /// Parses a position in the game's notation; every violated rule has its own error.
    fn parse_position(s: &str, variants: Variants) -> Result<Self, Self::PositionError>;

    /// Parses a move leniently (any case, spaces anywhere).
    fn parse_move(s: &str) -> Result<Self::Move, Self::MoveError>;

    /// The player to move (in a finished game: the player who would move next).
    fn turn(&self) -> Player;

    /// Appends every legal move to `out`; nothing when the game is over.
    fn legal_moves(&self, out: &mut MoveList<Self::Move>);

    /// The number of legal moves, as [`Game::legal_moves`] would list them. Games override it
    /// with a counting loop that builds no list (perft's bulk counting).
    fn count_legal(&self) -> u64 {
        let mut moves = MoveList::new();
        self.legal_moves(&mut moves);
        moves.len() as u64
    }

    /// Whether every square `mv` names lies on this position's board. A game whose notation
    /// reaches beyond some of its boards (Pilastri's reaches h8 on 6×6) overrides it; drawing a
    /// move relies on it.
    fn fits_board(&self, _mv: &Self::Move) -> bool {
        true
    }

    /// `Ok` when `mv` is legal here, otherwise the reason it is not.
    fn check(&self, mv: &Self::Move) -> Result<(), IllegalMove>;

    /// Plays a move that must be legal. Cheap; for search.
    fn play_unchecked(&mut self, mv: &Self::Move);

    /// Plays a move if it is legal; otherwise hands the position back untouched with the reason.
    fn play(mut self, mv: &Self::Move) -> Result<Self, PlayError<Self>> {
        match self.check(mv) {
            Ok(()) => {
                self.play_unchecked(mv);
                Ok(self)
            }
            Err(error) => Err(PlayError {
                position: self,
                error,
            }),
        }
    }

    /// How the game ended, if it has (as far as the position alone can tell).
    fn outcome(&self) -> Option<Outcome>;

    /// The Zobrist hash, kept up to date incrementally by [`Game::play_unchecked`].
    fn hash(&self) -> u64;

    /// The hash recomputed from scratch; must always equal [`Game::hash`].
    fn hash_from_scratch(&self) -> u64;

    /// For games that forbid repetition: an exact key of what counts as "the same position".
    fn repetition_key(&self) -> u64 {
        0
    }
}
