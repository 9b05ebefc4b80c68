//! What every client command shares: where the server is, how to print, where tokens live.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::client::{ApiClient, ClientError, tokens};

use super::CliError;

#[derive(Debug, Clone, clap::Args)]
pub struct ClientArgs {
    /// The server's base URL.
    #[arg(
        long,
        env = "PILLARZ_URL",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    pub server: String,
    /// Print the API's JSON instead of human-readable output.
    #[arg(long, global = true)]
    pub json: bool,
    /// Give up on a request after this long (e.g. 30s, 500ms).
    #[arg(long, default_value = "30s", global = true)]
    pub timeout: String,
    /// The seat-token file (default: $PILLARZ_TOKENS or ~/.local/state/pillarz/tokens.json).
    #[arg(long, global = true)]
    pub tokens_file: Option<PathBuf>,
}

/// The validated form of [`ClientArgs`].
pub struct Client {
    pub api: ApiClient,
    pub json: bool,
    pub tokens_file: PathBuf,
}

impl ClientArgs {
    pub fn validate(&self) -> Result<Client, CliError> {
        let timeout = crate::client::duration::parse_ms(&self.timeout).map_err(CliError::Usage)?;
        if !(self.server.starts_with("http://") || self.server.starts_with("https://")) {
            return Err(CliError::Usage(format!(
                "--server {:?} must start with http:// or https://",
                self.server
            )));
        }
        Ok(Client {
            api: ApiClient::new(&self.server, Duration::from_millis(timeout.max(1))),
            json: self.json,
            tokens_file: self
                .tokens_file
                .clone()
                .unwrap_or_else(tokens::default_path),
        })
    }
}

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> CliError {
        CliError::Client(e)
    }
}

/// Runs an async client command on a fresh runtime.
pub fn block_on<T>(
    f: impl std::future::Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?
        .block_on(f)
}

/// Prints an API answer as pretty JSON, with no raw control character of the server's left
/// in it (see `client::terminal`).
pub fn print_json(value: &Value) -> Result<(), super::output::OutputError> {
    let text = serde_json::to_string_pretty(value).expect("JSON prints");
    outln!("{}", crate::client::terminal::escape_json_controls(&text))
}
