//! The service's domain: validated newtypes (one fallible constructor each) and the stored game
//! with its clock and seat rules. Pure: the current time is always passed in.

mod event;
mod game;
mod game_id;
mod idempotency_key;
mod seat_token;
mod time_control;

pub use event::Event;
pub use game::{Change, Known, Logged, Newer, Snapshot, StoredGame};
pub use game_id::GameId;
pub use idempotency_key::IdempotencyKey;
pub use seat_token::SeatToken;
pub use time_control::{MAX_INCREMENT_MS, MAX_INITIAL_MS, MIN_INITIAL_MS, ValidTimeControl};
