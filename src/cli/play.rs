//! `pillarz play`: an interactive game against the service's engine in the terminal. The board
//! is redrawn every turn; type a move, `?` for the legal moves, `resign`, or `quit`. While the
//! engine thinks, `play` waits on the game's event stream, not by asking for the view again and
//! again (it asked 20 times a second: a share of the caller's read quota, for nothing).

use std::process::ExitCode;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

use serde_json::json;

use crate::api::{CreatedGame, GameView, LegalMoves, Seat, Status, StreamLine};
use crate::client::ClientError;
use crate::client::api_client::decode;
use crate::client::duration::{parse_clock, show_ms};
use crate::client::terminal::escape_controls;

use super::CliError;
use super::client_args::{Client, ClientArgs, block_on};
use super::game_cmds::{
    WATCH_LONGEST_WAIT, WATCH_SPACING, describe, fetch_view, parse_seat, resumable, save_tokens,
};

#[derive(Debug, clap::Args)]
pub struct PlayArgs {
    /// The game: pillarz, pilastri, pyrga or alcazar.
    game: String,
    /// The engine's level (1-8).
    #[arg(long, value_name = "LEVEL")]
    vs_engine: u8,
    /// Your seat (p1 moves first).
    #[arg(long = "as", default_value = "p1", value_parser = parse_seat)]
    seat: Seat,
    /// A rules variant (repeatable).
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// A Fischer clock, e.g. 5m+3s.
    #[arg(long)]
    clock: Option<String>,
    #[command(flatten)]
    pub(super) client: ClientArgs,
}

pub fn play(args: PlayArgs) -> Result<ExitCode, CliError> {
    let client = args.client.validate()?;
    let engine_seat = if args.seat == Seat::P1 {
        Seat::P2
    } else {
        Seat::P1
    };
    let mut body = json!({"game": args.game, "variants": args.variants,
        "seats": {engine_seat.as_str(): {"engine": {"level": args.vs_engine}}}});
    if let Some(clock) = &args.clock {
        let (initial_ms, increment_ms) = parse_clock(clock).map_err(CliError::Usage)?;
        body["time_control"] = json!({"initial_ms": initial_ms, "increment_ms": increment_ms});
    }
    block_on(async {
        let created: CreatedGame = decode(&client.api.post("/v1/games", &body, None).await?)?;
        let id = created.game.id.clone();
        let token = created.tokens.get(&args.seat).cloned().ok_or_else(|| {
            ClientError::Protocol(format!(
                "the server created the game without a token for {}",
                args.seat.as_str()
            ))
        })?;
        save_tokens(&client, &created)?;
        // The id as the terminal shows it (from the server: its control characters escaped).
        let shown = escape_controls(&id, false);
        outln!(
            "game {shown}: you play {} against the level-{} engine",
            args.seat.as_str(),
            args.vs_engine
        )?;
        let mut input = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let ticking = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let mut shown_ply = u64::MAX;
        loop {
            let (_, view) = fetch_view(&client, &id).await?;
            if view.status == Status::Finished {
                out!("{}", describe(&view))?;
                outln!("game over")?;
                return Ok(ExitCode::SUCCESS);
            }
            if view.turn != args.seat {
                if shown_ply != view.ply {
                    out!("{}", describe(&view))?;
                    outln!("the engine is thinking…")?;
                    shown_ply = view.ply;
                }
                wait_for_change(&client, &id, view.version).await?;
                continue;
            }
            if shown_ply != view.ply {
                out!("{}", describe(&view))?;
                shown_ply = view.ply;
            }
            out!("your move (? for legal moves, resign, quit): ")?;
            super::output::flush()?;
            let Some(line) = read_line(&mut input, ticking.then_some(&view)).await? else {
                outln!()?;
                outln!("input ended; the game {shown} stays open")?;
                return Ok(ExitCode::SUCCESS);
            };
            match line.trim() {
                "" => {}
                "?" => {
                    let legal: LegalMoves = decode(
                        &client
                            .api
                            .get(&format!("/v1/games/{id}/legal-moves"))
                            .await?,
                    )?;
                    outln!(
                        "legal moves: {}",
                        escape_controls(&legal.moves.join(" "), false)
                    )?;
                }
                "quit" => {
                    outln!("left the game {shown} open")?;
                    return Ok(ExitCode::SUCCESS);
                }
                "resign" => {
                    client
                        .api
                        .post(&format!("/v1/games/{id}/resign"), &json!({}), Some(&token))
                        .await?;
                    shown_ply = u64::MAX;
                }
                mv => {
                    let answer = client
                        .api
                        .post(
                            &format!("/v1/games/{id}/moves"),
                            &json!({"move": mv}),
                            Some(&token),
                        )
                        .await;
                    match answer {
                        Ok(value) => {
                            let after: GameView = decode(&value)?;
                            let played = after.moves.last().map_or("?", String::as_str);
                            outln!("you played {}", escape_controls(played, false))?;
                        }
                        Err(ClientError::Refused(p)) => {
                            let refusal = format!("{}: {}", p.code, p.detail);
                            outln!("{}", escape_controls(&refusal, false))?;
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
    })
}

/// How long a stream may send nothing (the service sends a heartbeat every 15 s) before the
/// wait for the engine gives it up and looks at the game again.
const WAIT_IDLE: Duration = Duration::from_secs(45);

/// Why a wait for the engine's move ended early.
enum Waited {
    /// The game has a version after the one waited on.
    Changed,
    /// The stream failed.
    Failed(ClientError),
}

impl From<ClientError> for Waited {
    fn from(e: ClientError) -> Waited {
        Waited::Failed(e)
    }
}

/// Waits until game `id` is past `version` (the engine moved, or a clock or a resignation
/// ended the game), or its stream ends or fails for a moment (a restart, a proxy, a 5xx or a
/// `429`, whose `Retry-After` is waited out): the caller looks at the game again either way.
/// Other failures are errors. Waits start `watch`'s spacing apart, and wait out a `Retry-After`
/// of at most `watch`'s longest: a stream that ends at once, or a server that fakes changes,
/// costs at most four rounds of a view and a stream a second.
async fn wait_for_change(client: &Client, id: &str, version: u64) -> Result<(), CliError> {
    let started = tokio::time::Instant::now();
    let followed =
        client
            .api
            .follow_lines(
                &format!("/v1/games/{id}/events"),
                Some(version),
                WAIT_IDLE,
                |line| match serde_json::from_str::<StreamLine>(line) {
                    Ok(
                        StreamLine::Game { version: v, .. } | StreamLine::Change { version: v, .. },
                    ) if v <= version => Ok(()),
                    Ok(StreamLine::Heartbeat) => Ok(()),
                    Ok(_) => Err(Waited::Changed),
                    Err(e) => Err(ClientError::Protocol(e.to_string()).into()),
                },
            )
            .await;
    let asked = match followed {
        Ok(()) | Err((Waited::Changed, _)) => Duration::ZERO,
        Err((Waited::Failed(e), wait)) if resumable(&e) => wait.unwrap_or_default(),
        Err((Waited::Failed(e), _)) => return Err(e.into()),
    };
    let asked = asked.min(WATCH_LONGEST_WAIT);
    tokio::time::sleep_until((started + WATCH_SPACING).max(tokio::time::Instant::now() + asked))
        .await;
    Ok(())
}

/// Reads the player's next line. On a terminal the clocks tick meanwhile: the prompt line is
/// redrawn every second with the running clock counted down from the last view.
async fn read_line(
    input: &mut tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>,
    view: Option<&GameView>,
) -> Result<Option<String>, CliError> {
    let clock = view.and_then(|v| v.clock.clone());
    let started = std::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.reset();
    loop {
        tokio::select! {
            line = input.next_line() => return line.map_err(|e| CliError::Failure(e.into())),
            _ = tick.tick(), if clock.is_some() => {
                let clock = clock.as_ref().expect("ticking needs a clock");
                let elapsed = started.elapsed().as_millis() as u64;
                let shown: Vec<String> = clock
                    .remaining_ms
                    .iter()
                    .map(|(seat, ms)| {
                        let left = if clock.running == Some(*seat) { ms.saturating_sub(elapsed) } else { *ms };
                        format!("{} {}", seat.as_str(), show_ms(left))
                    })
                    .collect();
                out!("\r[{}] your move (? for legal moves, resign, quit): ", shown.join(" | "))?;
                super::output::flush()?;
            }
        }
    }
}
