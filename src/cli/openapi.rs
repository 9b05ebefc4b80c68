//! `pillarz openapi`: print the OpenAPI document (as committed in `openapi/openapi.json`).

use std::process::ExitCode;

use crate::service::routes::ApiDoc;

use super::CliError;

/// Print the OpenAPI document of the HTTP API.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    out!("{}", ApiDoc::pretty_json())?;
    Ok(ExitCode::SUCCESS)
}
