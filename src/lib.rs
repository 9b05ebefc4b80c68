//! pillarz: the rules of four abstract games, an engine that plays them, and the HTTP service
//! and CLI built on both. `main.rs` only parses the command line and calls into here.

pub mod api;
pub mod cli;
pub mod client;
pub mod engine;
pub mod loadgen;
pub mod rules;
pub mod service;
pub mod svg;
pub mod wall_clock;
