//! The HTTP client behind the CLI's game commands: typed calls to the API (the same types the
//! server uses), the local seat-token file, and terminal boards.

pub mod api_client;
pub mod board;
pub mod duration;
pub mod terminal;
pub mod tokens;

pub use api_client::{ApiClient, ClientError};
