//! The engine: a search for every game, generic over the rules, plus the opponents and the
//! match runner used to measure its strength. Pure: no I/O, and the time is read only through
//! the [`limits::Clock`] the caller passes in.

pub mod agents;
pub mod any;
pub mod bench;
pub mod eval;
pub mod levels;
pub mod limits;
mod move_picker;
pub mod nnue;
pub mod score;
pub mod search;
pub mod selfplay;
pub mod tournament;
mod tt;
pub mod tuner;

pub use eval::{Eval, Searchable};
pub use limits::{Caps, Clock, FrozenClock, Limit};
pub use score::Score;
pub use search::{Engine, Line, Params, Report, search};
