//! What the search needs from a game beyond its rules: a static evaluation and a slot per move
//! for the history table. One file per game, each hand-tuned; [`Incremental`] keeps a learned
//! evaluation's accumulators along the search path (pillarz's network, `engine::nnue`).

mod alcazar;
mod incremental;
pub mod linear;
mod pilastri;
mod pillarz;
mod pyrga;

pub use incremental::Incremental;

use crate::engine::levels::{LEVELS, Level};
use crate::rules::Game;

/// Which static evaluation a search uses: the hand-written one every game has, or a learned
/// network where the game has one ([`Searchable::network_evaluate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eval {
    Hand,
    Network,
}

impl Eval {
    pub fn parse(s: &str) -> Result<Eval, String> {
        match s {
            "hand" => Ok(Eval::Hand),
            "nnue" => Ok(Eval::Network),
            _ => Err(format!("unknown evaluation {s:?} (expected hand or nnue)")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Eval::Hand => "hand",
            Eval::Network => "nnue",
        }
    }
}

pub trait Searchable: Game {
    /// Whether the search may prune and reduce at this node (reverse futility, late-move and
    /// futility pruning, late-move and internal iterative reductions). Matches showed it gains
    /// in every game (README, "Measured"); Pyrga turns it off for its last plies, so that late
    /// positions are solved exactly. Once off it must stay off down every line: a search from a
    /// position where it is off, as deep as [`Searchable::plies_left`], is then exact.
    #[inline]
    fn prunes(&self) -> bool {
        true
    }

    /// Whether the game has threats: [`Searchable::threatened`] and the threat-making move
    /// class 2 mean something, and the horizon tries the moves that make one.
    const THREATS: bool = false;

    /// This game's computer levels 1–8 ([`crate::engine::levels`]): Pyrga has its own table.
    const LEVELS: [Level; 8] = LEVELS;

    /// How gently late moves are reduced (the search's `reduction`): Pilastri, some sixty moves
    /// a node and most of them alike, reduces harder than the others (README, "Measured").
    const LMR_DIVISOR: f64 = 2.25;

    /// The number of history slots; every [`Searchable::move_slot`] is below it.
    const MOVE_SLOTS: usize;

    fn move_slot(mv: &Self::Move) -> usize;

    /// A heuristic value of a position that is not over, from the side to move's view (the
    /// hand-written evaluation).
    fn evaluate(&self) -> i32;

    /// The evaluation a search uses unless told otherwise.
    const DEFAULT_EVAL: Eval = Eval::Hand;

    /// What the learned evaluation keeps of a position so that a child's costs a few changes
    /// rather than a sum over the whole board (NNUE's accumulator); `()` where the game has no
    /// network. The search keeps one per ply ([`Incremental`]).
    type Accumulator: Clone + Default;

    /// How an [`Searchable::Accumulator`] changes from a position to its child.
    type Delta: Copy + Default;

    /// This position's accumulator, from scratch.
    fn refresh(&self, _out: &mut Self::Accumulator) {}

    /// The change from this position to `child`; `None` when `child`'s accumulator must be
    /// computed from scratch.
    fn delta(&self, _child: &Self) -> Option<Self::Delta> {
        Some(Self::Delta::default())
    }

    /// The accumulator of the child `delta` leads to from `parent`'s, written to `out`.
    fn update(_parent: &Self::Accumulator, _delta: &Self::Delta, _out: &mut Self::Accumulator) {}

    /// The learned evaluation, on the hand-written one's scale, from this position's
    /// accumulator; the hand-written one where the game has no network.
    fn network_evaluate(&self, _acc: &Self::Accumulator) -> i32 {
        self.evaluate()
    }

    /// A move that wins on the spot for the side to move, found cheaply (the search asks at
    /// every node and plays it at once). `None` when there is none, or when the game has no cheap
    /// test; it must never name a move that does not win.
    fn winning_move(&self) -> Option<Self::Move> {
        None
    }

    /// Whether the side *not* to move could win on the spot if it were its turn: the side to
    /// move must stop that threat. The search extends and resolves such nodes, checking every
    /// reply with the exact [`Searchable::winning_move`], so a false alarm costs only time; a
    /// missed threat is found one ply later. Games without a cheap test say `false`.
    fn threatened(&self) -> bool {
        false
    }

    /// An upper bound on the plies left before the game ends, whatever is played; `None` when
    /// the game has none. A search without pruning at least this deep sees every line to its
    /// end, so its result is exact, draws included (see [`crate::engine::Score::Draw`]).
    fn plies_left(&self) -> Option<u32> {
        None
    }

    /// How promising a move looks before it is searched, in classes: 2 makes a threat, 1
    /// improves (climbs, for instance), 0 the rest. Within a class the history decides.
    fn move_class(&self, _mv: &Self::Move) -> u8 {
        0
    }
}
