//! `analyze` (one position or a stored game) and `analyze-batch` (a file of positions in,
//! NDJSON out, with bounded concurrency and a progress bar on stderr).

use std::io::Write;
use std::process::ExitCode;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::api::AnalysisView;
use crate::client::api_client::decode;
use crate::client::duration::parse_ms;
use crate::client::terminal::escape_json_controls;
use crate::client::{ApiClient, ClientError};

use super::CliError;
use super::client_args::{ClientArgs, block_on, print_json};

/// How long to think: one of --depth and --movetime (default: 1 s).
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Search this many plies deep.
    #[arg(long, conflicts_with = "movetime")]
    depth: Option<u32>,
    /// Search this long (e.g. 500ms, 2s).
    #[arg(long)]
    movetime: Option<String>,
    /// Report this many best moves.
    #[arg(long, default_value_t = 1)]
    multipv: usize,
}

impl LimitArgs {
    fn limits(&self) -> Result<Value, CliError> {
        Ok(match (&self.depth, &self.movetime) {
            (Some(d), _) => json!({"depth": d}),
            (None, Some(t)) => json!({"movetime_ms": parse_ms(t).map_err(CliError::Usage)?}),
            (None, None) => json!({"movetime_ms": 1000}),
        })
    }
}

#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// A stored game's id (or give --game and --position).
    #[arg(conflicts_with_all = ["game", "position"])]
    id: Option<String>,
    /// The game of --position.
    #[arg(long, requires = "position")]
    game: Option<String>,
    /// A position in the game's notation.
    #[arg(long, requires = "game", allow_hyphen_values = true)]
    position: Option<String>,
    /// A rules variant (repeatable).
    #[arg(long = "variant")]
    variants: Vec<String>,
    #[command(flatten)]
    limit: LimitArgs,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// Positions, one per line (with --game), or NDJSON objects
    /// {"game", "position", "variants"?, "limits"?, "multipv"?}; `-` reads stdin.
    file: String,
    /// The game of plain position lines.
    #[arg(long)]
    game: Option<String>,
    /// A rules variant for plain position lines (repeatable).
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Requests in flight at once (the service's share of its analysis pool for one caller
    /// is often 2; more are refused for a moment, then tried again).
    #[arg(long, default_value_t = 2)]
    concurrency: usize,
    #[command(flatten)]
    limit: LimitArgs,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

fn show_score(v: &Value) -> String {
    if v.as_str() == Some("draw") {
        "draw".into()
    } else if let Some(n) = v.get("win_in") {
        format!("win in {n}")
    } else if let Some(n) = v.get("loss_in") {
        format!("loss in {n}")
    } else {
        v.get("value").map_or("?".into(), |n| format!("{n}"))
    }
}

fn describe(view: &AnalysisView, raw: &Value) -> String {
    let mut out = format!(
        "best move: {}\nscore: {}\ndepth {}, {} nodes, {} ms\n",
        view.best_move
            .as_deref()
            .unwrap_or("(none: the game is over)"),
        show_score(&raw["score"]),
        view.depth,
        view.nodes,
        view.time_ms
    );
    for (i, line) in raw["lines"].as_array().into_iter().flatten().enumerate() {
        let pv: Vec<&str> = line["pv"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        out += &format!(
            "{}. {} ({}): {}\n",
            i + 1,
            line["move"].as_str().unwrap_or("?"),
            show_score(&line["score"]),
            pv.join(" ")
        );
    }
    crate::client::terminal::escape_controls(&out, true).into_owned()
}

pub fn analyze(args: AnalyzeArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    let limits = args.limit.limits()?;
    let (path, body) = match (&args.id, &args.game, &args.position) {
        (Some(id), _, _) => (
            format!("/v1/games/{id}/analysis"),
            json!({"limits": limits, "multipv": args.limit.multipv}),
        ),
        (None, Some(game), Some(position)) => (
            "/v1/analysis".to_string(),
            json!({"game": game, "variants": args.variants, "position": position,
                   "limits": limits, "multipv": args.limit.multipv}),
        ),
        _ => {
            return Err(CliError::Usage(
                "give a game id, or --game and --position".into(),
            ));
        }
    };
    block_on(async {
        let value = client.api.post(&path, &body, None).await?;
        if client.json {
            print_json(&value)?;
        } else {
            out!("{}", describe(&decode(&value)?, &value))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// How many times one line of `analyze-batch` is tried again after a `429` or `503` whose
/// `Retry-After` is at most [`BATCH_LONGEST_WAIT`]: the service refuses at once a caller past
/// its share of the analysis pool, or any caller when pool and queue are full, and asks it to
/// come back in a second. Ten tries ride out a busy pool for about ten seconds per line.
const BATCH_RETRIES: u32 = 10;

/// The longest `Retry-After` `analyze-batch` waits out; a longer one (an analysis-time quota
/// used up for the minute) fails the line with the server's answer.
const BATCH_LONGEST_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One input line as a request body, or why it cannot be one.
fn request_for(line: &str, args: &BatchArgs, limits: &Value) -> Result<Value, String> {
    let trimmed = line.trim();
    if trimmed.starts_with('{') {
        let mut body: Value =
            serde_json::from_str(trimmed).map_err(|e| format!("bad JSON: {e}"))?;
        let object = body
            .as_object_mut()
            .ok_or("a JSON line must be an object")?;
        object.entry("limits").or_insert_with(|| limits.clone());
        object.entry("multipv").or_insert(json!(args.limit.multipv));
        Ok(body)
    } else {
        let game = args
            .game
            .as_ref()
            .ok_or("a plain position line needs --game")?;
        Ok(
            json!({"game": game, "variants": args.variants, "position": trimmed,
                  "limits": limits, "multipv": args.limit.multipv}),
        )
    }
}

async fn analyse_line(api: &ApiClient, n: usize, request: Result<Value, String>) -> Value {
    let body = match request {
        Ok(body) => body,
        Err(detail) => {
            return json!({"line": n, "ok": false, "error": {"code": "bad_input", "detail": detail}});
        }
    };
    match api
        .post_retrying("/v1/analysis", &body, BATCH_RETRIES, BATCH_LONGEST_WAIT)
        .await
    {
        Ok(analysis) => {
            json!({"line": n, "ok": true, "position": body["position"], "analysis": analysis})
        }
        Err(ClientError::Refused(p) | ClientError::ServerError(p)) => {
            json!({"line": n, "ok": false, "position": body["position"], "error": {"code": p.code, "detail": p.detail}})
        }
        Err(e) => json!({"line": n, "ok": false, "position": body["position"],
                          "error": {"code": e.code(), "detail": e.to_string()}}),
    }
}

pub fn batch(args: BatchArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    let limits = args.limit.limits()?;
    if args.concurrency == 0 {
        return Err(CliError::Usage("--concurrency must be at least 1".into()));
    }
    let text = if args.file == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(anyhow::Error::from)?
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| CliError::Usage(format!("{}: {e}", args.file)))?
    };
    let lines: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect();
    let progress = indicatif::ProgressBar::with_draw_target(
        Some(lines.len() as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} positions, {elapsed}")
            .expect("a valid template"),
    );
    let failures = block_on(async {
        let api = &client.api;
        let mut results = futures_util::stream::iter(lines.iter().map(|(n, line)| {
            let request = request_for(line, &args, &limits);
            analyse_line(api, *n, request)
        }))
        .buffered(args.concurrency);
        let mut out = std::io::stdout().lock();
        let mut failures = 0;
        while let Some(result) = results.next().await {
            if result["ok"] != json!(true) {
                failures += 1;
            }
            let line = result.to_string();
            writeln!(out, "{}", escape_json_controls(&line))
                .map_err(super::output::OutputError::from)?;
            progress.inc(1);
        }
        Ok(failures)
    })?;
    progress.finish_and_clear();
    eprintln!("{} positions, {failures} failed", lines.len());
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_FAILURE)
    })
}
