//! The client's game commands: `catalog`, `new`, `show`, `moves`, `move`, `resign`, `clock`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::api::{Catalog, ClockView, CreatedGame, GameView, LegalMoves, Seat, Status, StreamLine};
use crate::client::api_client::decode;
use crate::client::duration::{parse_clock, show_ms};
use crate::client::terminal::escape_controls;
use crate::client::{board, tokens};

use super::CliError;
use super::client_args::{Client, ClientArgs, block_on, print_json};

#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// A rules variant (repeatable): size-8, jumpers.
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// A Fischer clock, initial+increment, e.g. 5m+3s (untimed when absent).
    #[arg(long)]
    clock: Option<String>,
    /// Let the service's engine play one seat, at this level (1-8).
    #[arg(long, value_name = "LEVEL")]
    vs_engine: Option<u8>,
    /// The seat the engine plays with --vs-engine.
    #[arg(long, default_value = "p2", value_parser = parse_seat)]
    engine_seat: Seat,
    /// Start from this position instead of the initial one.
    #[arg(long, allow_hyphen_values = true)]
    position: Option<String>,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub struct IdArgs {
    /// The game's id.
    id: String,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The game's id.
    id: String,
    /// Reconnect when the stream is silent this long (the service sends a heartbeat every
    /// 15 s by default, so a live stream is never silent for three of them).
    #[arg(long, default_value = "45s")]
    idle_timeout: String,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub struct MoveArgs {
    /// The game's id.
    id: String,
    /// The move, in the game's notation.
    #[arg(allow_hyphen_values = true, value_name = "MOVE")]
    mv: String,
    /// The seat to play for (default: the seat to move, if its token is saved).
    #[arg(long, value_parser = parse_seat)]
    seat: Option<Seat>,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub struct ResignArgs {
    /// The game's id.
    id: String,
    /// The seat that resigns (default: the only seat held, or the seat to move).
    #[arg(long, value_parser = parse_seat)]
    seat: Option<Seat>,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

pub fn parse_seat(s: &str) -> Result<Seat, String> {
    Seat::parse(&s.to_ascii_lowercase()).ok_or_else(|| format!("{s:?} is not a seat (p1 or p2)"))
}

/// The game view as text: board, moves, status and clocks, with the server's strings escaped
/// for the terminal.
pub fn describe(view: &GameView) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} game {}  (ply {}, version {})",
        view.game, view.id, view.ply, view.version
    );
    match board::render(view.game, &view.variants, &view.position) {
        Ok(text) => out.push_str(&text),
        Err(e) => {
            let _ = writeln!(out, "  (cannot draw the board: {e})");
        }
    }
    let _ = writeln!(out, "position: {}", view.position);
    if !view.moves.is_empty() {
        let _ = writeln!(out, "moves: {}", view.moves.join(" "));
    }
    match view.status {
        Status::Ongoing => {
            let _ = writeln!(out, "{} to move", view.turn.as_str());
        }
        Status::Finished => {
            let result = view.result.map_or("?", |r| r.as_str());
            let how = view.termination.map_or("?", |t| t.as_str());
            let _ = writeln!(out, "finished: {result} ({how})");
        }
    }
    if let Some(clock) = &view.clock {
        out.push_str(&describe_clock(clock));
    }
    for (seat, level) in &view.engine_seats {
        let _ = writeln!(
            out,
            "{} is played by the engine (level {level})",
            seat.as_str()
        );
    }
    escape_controls(&out, true).into_owned()
}

pub fn describe_clock(clock: &ClockView) -> String {
    let mut out = String::new();
    for (seat, ms) in &clock.remaining_ms {
        let running = if clock.running == Some(*seat) {
            "  (running)"
        } else {
            ""
        };
        let _ = writeln!(out, "clock {}: {}{running}", seat.as_str(), show_ms(*ms));
    }
    out
}

pub fn catalog(args: CatalogArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    block_on(async {
        let value = client.api.get("/v1/catalog").await?;
        if client.json {
            print_json(&value)?;
            return Ok(ExitCode::SUCCESS);
        }
        let catalog: Catalog = decode(&value)?;
        for game in &catalog.games {
            let variants: Vec<&str> = game.variants.iter().map(|v| v.name.as_str()).collect();
            let line = format!(
                "{:<9} {:<9} variants: {:<18} start: {}",
                game.game,
                game.title,
                if variants.is_empty() {
                    "-".to_string()
                } else {
                    variants.join(",")
                },
                game.start_position
            );
            outln!("{}", escape_controls(&line, false))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn new(args: NewArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    let mut body = json!({"game": args.game, "variants": args.variants});
    if let Some(clock) = &args.clock {
        let (initial_ms, increment_ms) = parse_clock(clock).map_err(CliError::Usage)?;
        body["time_control"] = json!({"initial_ms": initial_ms, "increment_ms": increment_ms});
    }
    if let Some(level) = args.vs_engine {
        body["seats"] = json!({ args.engine_seat.as_str(): {"engine": {"level": level}} });
    }
    if let Some(position) = &args.position {
        body["position"] = json!(position);
    }
    block_on(async {
        let value = client.api.post("/v1/games", &body, None).await?;
        let created: CreatedGame = decode(&value)?;
        save_tokens(&client, &created)?;
        if client.json {
            print_json(&value)?;
        } else {
            outln!("{}", escape_controls(&created.game.id, false))?;
            let seats: Vec<&str> = created.tokens.keys().map(|s| s.as_str()).collect();
            eprintln!(
                "created a {} game; tokens for {} saved to {}",
                created.game.game,
                seats.join(" and "),
                client.tokens_file.display()
            );
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Saves a new game's tokens. The game exists on the server whether or not they are saved: if
/// they cannot be, the error carries them, to be shown with it (see
/// [`CliError::TokensNotSaved`]), so that the game can still be played.
pub fn save_tokens(client: &Client, created: &CreatedGame) -> Result<(), CliError> {
    tokens::save(&client.tokens_file, &created.game.id, &created.tokens).map_err(|e| {
        CliError::TokensNotSaved {
            game: created.game.id.clone(),
            tokens: json!(created.tokens),
            cause: e.to_string(),
        }
    })
}

pub async fn fetch_view(client: &Client, id: &str) -> Result<(Value, GameView), CliError> {
    let value = client.api.get(&format!("/v1/games/{id}")).await?;
    let view = decode(&value)?;
    Ok((value, view))
}

pub fn show(args: IdArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    block_on(async {
        let (value, view) = fetch_view(&client, &args.id).await?;
        if client.json {
            print_json(&value)?;
        } else {
            out!("{}", describe(&view))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn moves(args: IdArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    block_on(async {
        let value = client
            .api
            .get(&format!("/v1/games/{}/legal-moves", args.id))
            .await?;
        if client.json {
            print_json(&value)?;
        } else {
            let legal: LegalMoves = decode(&value)?;
            outln!("{}", escape_controls(&legal.moves.join(" "), false))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn clock(args: IdArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    block_on(async {
        let value = client
            .api
            .get(&format!("/v1/games/{}/clock", args.id))
            .await?;
        if client.json {
            print_json(&value)?;
        } else {
            // An untimed game's clock is `null`.
            match decode::<Option<ClockView>>(&value)? {
                Some(clock) => out!("{}", describe_clock(&clock))?,
                None => outln!("no clock: the game is untimed")?,
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The saved token for `seat` (or, without one, for the only or the moving seat held).
pub fn token_for(
    client: &Client,
    id: &str,
    seat: Option<Seat>,
    view: &GameView,
) -> Result<(Seat, String), CliError> {
    let all =
        tokens::load(&client.tokens_file).map_err(|e| CliError::Failure(anyhow::anyhow!(e)))?;
    let held: BTreeMap<Seat, String> = all.get(id).cloned().unwrap_or_default();
    let seat = match seat {
        Some(s) => s,
        None if held.len() == 1 => *held.keys().next().expect("one"),
        None => view.turn,
    };
    let token = held.get(&seat).cloned().ok_or_else(|| {
        CliError::Usage(format!(
            "no saved token for {} of game {id} in {}",
            seat.as_str(),
            client.tokens_file.display()
        ))
    })?;
    Ok((seat, token))
}

pub fn play_move(args: MoveArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    block_on(async {
        let (_, view) = fetch_view(&client, &args.id).await?;
        let seat = args.seat.or(Some(view.turn));
        let (_, token) = token_for(&client, &args.id, seat, &view)?;
        let value = client
            .api
            .post(
                &format!("/v1/games/{}/moves", args.id),
                &json!({"move": args.mv}),
                Some(&token),
            )
            .await?;
        if client.json {
            print_json(&value)?;
        } else {
            let after: GameView = decode(&value)?;
            let played = after.moves.last().map_or("?", String::as_str);
            outln!("played {}", escape_controls(played, false))?;
            out!("{}", describe(&after))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn resign(args: ResignArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    block_on(async {
        let (_, view) = fetch_view(&client, &args.id).await?;
        let (seat, token) = token_for(&client, &args.id, args.seat, &view)?;
        let value = client
            .api
            .post(
                &format!("/v1/games/{}/resign", args.id),
                &json!({}),
                Some(&token),
            )
            .await?;
        if client.json {
            print_json(&value)?;
        } else {
            outln!("{} resigned", seat.as_str())?;
            out!("{}", describe(&decode(&value)?))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

#[derive(Debug, clap::Args)]
pub struct BoardArgs {
    /// The game's id.
    id: String,
    /// Write the SVG here (default: standard output).
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
    /// The position after this many moves (default: now).
    #[arg(long)]
    ply: Option<u64>,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

pub fn board(args: BoardArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    block_on(async {
        let path = match args.ply {
            Some(ply) => format!("/v1/games/{}/board.svg?ply={ply}", args.id),
            None => format!("/v1/games/{}/board.svg", args.id),
        };
        let svg = client.api.get_text(&path).await?;
        match &args.output {
            Some(file) => {
                std::fs::write(file, svg)
                    .map_err(|e| CliError::Failure(anyhow::anyhow!("{}: {e}", file.display())))?;
                eprintln!("wrote {}", file.display());
            }
            // To a terminal, the SVG's control characters are escaped as any server text is;
            // into a pipe or a file it goes byte for byte (it is for a program).
            None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
                out!("{}", escape_controls(&svg, true))?;
            }
            None => out!("{svg}")?,
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// How many fruitless resumptions in a row `watch` makes before it gives up (waiting 0.25 s,
/// then twice as long each time, at most 5 s: about 20 s in all; longer when the server asks
/// for a longer wait). A resumption is fruitless unless its stream brought a newer version
/// of the game or stayed live for [`WATCH_LIVELY_STREAM`].
const WATCH_RESUMES: u32 = 8;

/// How long after it was asked for a stream must still send a line (a heartbeat will do) to
/// count as fruitful without a newer version. The service ends a stream after
/// `--events-max-lifetime-secs` (an hour by default), and a restart or a proxy cuts it: such
/// a stream, even of a game where nothing happens, was live for longer than this, and its
/// resumption starts the backoff afresh. It is less than the service's heartbeat period
/// (15 s), so a resumed stream of an idle game counts from its first heartbeat on. A server
/// that ends every stream sooner with nothing new (a heartbeat, the version already seen) is
/// backed off and given up: each line once counted, and `watch` reconnected thousands of
/// times a second.
const WATCH_LIVELY_STREAM: std::time::Duration = std::time::Duration::from_secs(10);

/// The least time between the starts of two connections of `watch`, whatever its streams
/// bring: a server that fakes progress (a newer version on every stream) gets at most four
/// connections a second.
pub(super) const WATCH_SPACING: std::time::Duration = std::time::Duration::from_millis(250);

/// The longest `Retry-After` `watch` waits out before a resumption.
pub(super) const WATCH_LONGEST_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether `watch` resumes after this error: the stream was cut or fell silent, or the server
/// is away or busy for a moment (5xx), or refused it for now (429: the `streams` quota still
/// counting the stream just abandoned, until the server notices it is gone).
pub(super) fn resumable(e: &crate::client::ClientError) -> bool {
    use crate::client::ClientError;
    match e {
        ClientError::Network { .. }
        | ClientError::Timeout { .. }
        | ClientError::Silent { .. }
        | ClientError::ServerError(_) => true,
        ClientError::Refused(problem) => problem.status == 429,
        _ => false,
    }
}

pub fn watch(args: WatchArgs) -> Result<ExitCode, CliError> {
    use crate::client::ClientError;
    let client = args.client.validate()?;
    let idle_ms = crate::client::duration::parse_ms(&args.idle_timeout).map_err(CliError::Usage)?;
    if idle_ms == 0 {
        return Err(CliError::Usage(
            "--idle-timeout must be at least 1ms".into(),
        ));
    }
    let idle = std::time::Duration::from_millis(idle_ms);
    let clear = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let path = format!("/v1/games/{}/events", args.id);
    block_on(async {
        use tokio::time::Instant;
        let mut game: Option<GameView> = None;
        // The server ends a stream after a while, and a proxy or a restart may cut it: resume
        // after the last version seen until the game ends, backing off after each fruitless
        // resumption (see `WATCH_RESUMES`).
        let mut fruitless = 0;
        // The wait the server asked for (`Retry-After`) before the next resumption.
        let mut asked = std::time::Duration::ZERO;
        // The earliest start of the next connection (see `WATCH_SPACING`).
        let mut next_start = Instant::now();
        while game
            .as_ref()
            .is_none_or(|view| view.status != Status::Finished)
        {
            let backoff = if fruitless > 0 {
                (250u64 << (fruitless - 1).min(5)).min(5000)
            } else {
                0
            };
            let wait = std::time::Duration::from_millis(backoff).max(asked);
            tokio::time::sleep_until(next_start.max(Instant::now() + wait)).await;
            asked = std::time::Duration::ZERO;
            let started = Instant::now();
            next_start = started + WATCH_SPACING;
            let last = game.as_ref().map(|view| view.version);
            let mut last_line: Option<Instant> = None;
            let followed = client
                .api
                .follow_lines(&path, last, idle, |line| {
                    last_line = Some(Instant::now());
                    let event: StreamLine = serde_json::from_str(line)
                        .map_err(|e| CliError::from(ClientError::Protocol(e.to_string())))?;
                    match event {
                        StreamLine::Heartbeat => return Ok(()),
                        StreamLine::Game { game: view, .. } => game = Some(view),
                        StreamLine::Change { change, .. } => match &mut game {
                            // Each change makes the next version: anything else is a stream
                            // this client cannot follow (and must not pile up).
                            Some(view) if Some(change.version) == view.version.checked_add(1) => {
                                view.apply(&change)
                            }
                            Some(view) => {
                                return Err(ClientError::Protocol(format!(
                                    "a change to version {} after version {}",
                                    change.version, view.version
                                ))
                                .into());
                            }
                            None => {
                                return Err(ClientError::Protocol(
                                    "a change before the game".into(),
                                )
                                .into());
                            }
                        },
                    }
                    if client.json {
                        outln!("{}", crate::client::terminal::escape_json_controls(line))?;
                    } else if let Some(view) = &game {
                        if clear {
                            out!("\x1b[2J\x1b[H")?;
                        }
                        out!("{}", describe(view))?;
                        outln!()?;
                    }
                    Ok(())
                })
                .await;
            let progress = game.as_ref().map(|view| view.version) > last;
            let lively = last_line.is_some_and(|at| at - started >= WATCH_LIVELY_STREAM);
            fruitless = if progress || lively { 0 } else { fruitless + 1 };
            match followed {
                Ok(()) => {}
                Err((CliError::Client(e), wait))
                    if resumable(&e) && game.is_some() && fruitless < WATCH_RESUMES =>
                {
                    asked = wait.unwrap_or_default().min(WATCH_LONGEST_WAIT);
                }
                Err((e, _)) => return Err(e),
            }
            if fruitless >= WATCH_RESUMES {
                return Err(ClientError::Protocol(format!(
                    "the stream ended {WATCH_RESUMES} times in a row without anything new"
                ))
                .into());
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}
