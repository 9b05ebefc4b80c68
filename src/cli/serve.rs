//! `pillarz serve`: run the HTTP service.

use std::process::ExitCode;

use crate::service::configuration::{ServeArgs, Settings, StoreSettings};
use crate::service::startup::Application;
use crate::service::{open_files, telemetry};

use super::CliError;

pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let settings = Settings::from_args(args).map_err(CliError::Usage)?;
    telemetry::init(settings.json_logs);
    open_files::raise(&settings);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?;
    runtime.block_on(async move {
        let store = match &settings.store {
            StoreSettings::Memory => "the embedded in-memory store".to_string(),
            StoreSettings::Redis { url, prefix } => format!(
                "Redis at {} (keys {prefix}:*)",
                crate::service::redact::redact_url(url)
            ),
        };
        let app = Application::build(settings.clone())?;
        let base = format!("http://{}:{}", settings.listen.ip(), app.port());
        tracing::info!(%base, %store, "pillarz is serving");
        // The banner is for a person at a terminal, and the log (on stderr) has its news: a
        // standard output that nobody reads, or that cannot be written, stops nothing.
        let _ = outln!(
            "pillarz is serving on {base} with {store}\n  API:  {base}/v1/catalog\n  docs: \
             {base}/docs (OpenAPI at {base}/openapi.json)"
        );
        app.run_until_stopped().await?;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}
