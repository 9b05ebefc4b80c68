//! The rules of the four games, as pure code: no I/O, no clock, no printing.
//!
//! Every game follows the same shape, borrowed from shakmaty: a position string is parsed by the
//! game's `notation` into an unchecked `Setup` (syntax errors only), and the game's one fallible
//! constructor, `Position::from_setup`, applies the rules to it (rule errors only), so a
//! position can be built without any text; either way an invalid one is refused with one
//! precise error ([`PositionError`]). The notation depends on the setup alone, the position on
//! both. Moves are parsed syntactically first and then checked against a position,
//! [`Game::play`] leaves the position untouched when the move is illegal, and
//! [`Game::play_unchecked`] is the fast path for search.
//! Rules that depend on more than the position (Alcazar's no-repetition rule) live one level up,
//! in [`state::GameState`]: the position plus the history its rules look at.

pub mod alcazar;
mod any;
mod bits;
mod coordinate;
mod game;
mod kind;
pub mod perft;
pub mod pilastri;
pub mod pillarz;
pub mod pyrga;
pub mod record;
pub mod state;
mod zobrist;

pub use any::{AnyRecord, AnyState, RulesError};
pub use game::{
    Game, IllegalMove, MoveList, Outcome, PlayError, Player, PositionError, Termination, Winner,
};
pub use kind::{GameKind, ParseGameKindError, Variant, VariantError, Variants};
