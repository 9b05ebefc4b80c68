//! pillarz: the rules of four abstract games, an engine that plays them, and the HTTP service
//! and CLI built on both. `main.rs` only parses the command line and calls into here.
//!
//! One name per concept, in every layer:
//! - A *game* is one of the four, or one played from a start; the HTTP API uses the word both
//!   ways (`"game": "pillarz"`, `/v1/games/{id}`), and the types keep them apart: `GameKind`
//!   names which of the four and `rules::Game` is its rules (implemented by each game's
//!   `Position`); `GameState` (rules), `StoredGame` (service) and `GameView` (wire) are a game
//!   being played.
//! - A *record* is a game's start, its moves and where they led: `rules::record::Record` (one
//!   game's types), `rules::AnyRecord` (any game, in notation), `api::GameRecord` (on the wire,
//!   with times and clocks).
//! - A *player* is a seat (`rules::Player`, the API's `Seat`). An *engine seat* is one the
//!   service plays itself (`engine_seats` in the API and `service::engine_seats`, at a
//!   `engine::levels` level, moved by `engine::any::engine_seat_move` through the seat's
//!   `Thinker`); what plays a seat in a match is an *agent* (`engine::agents`).

pub mod api;
pub mod cli;
pub mod client;
pub mod engine;
pub mod loadgen;
pub mod rules;
pub mod service;
pub mod svg;
pub mod wall_clock;
