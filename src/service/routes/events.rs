//! `GET /v1/games/{id}/events`: a live stream of the game, as Server-Sent Events or NDJSON.
//!
//! The first event is the full game view; then one event per change (a move, a resignation, a
//! clock flag, the end), each the full view with its version, read from the game's event log in
//! the store. A change made on any replica wakes the stream through the store's fan-out; a
//! reconnection with `Last-Event-ID` resumes right after that version. The stream watches the
//! running clock too, and settles a flag itself when nobody else calls. Every stream is a small
//! state machine on the async workers: idle watchers cost no thread.

use std::collections::VecDeque;
use std::time::Duration;

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use tokio::sync::watch;

use super::game_id;
use crate::api::{GameView, Problem, Status};
use crate::service::domain::GameId;
use crate::service::error::{ApiError, ErrorCode};
use crate::service::state::{AppState, now_ms};
use crate::service::{computer, games};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Sse,
    Ndjson,
}

/// Most events read from the store at once: a long backlog is sent in pages of this size.
pub const EVENTS_PAGE: usize = 64;

struct Watch {
    /// This stream's place among the replica's `--max-event-streams`, freed when it ends.
    _slot: tokio::sync::OwnedSemaphorePermit,
    /// Whether the last read of the log was a full page (so more may follow at once).
    more: bool,
    state: web::Data<AppState>,
    id: GameId,
    format: Format,
    queue: VecDeque<(u64, String)>,
    last: u64,
    done: bool,
    changes: watch::Receiver<u64>,
    heartbeat: tokio::time::Interval,
    /// When the running clock falls (epoch ms), if it runs.
    flag_at: Option<u64>,
}

fn frame(format: Format, version: u64, view: &str) -> Bytes {
    Bytes::from(match format {
        Format::Sse => format!("id: {version}\nevent: game\ndata: {view}\n\n"),
        Format::Ndjson => format!("{{\"event\":\"game\",\"version\":{version},\"game\":{view}}}\n"),
    })
}

fn heartbeat(format: Format) -> Bytes {
    Bytes::from_static(match format {
        Format::Sse => b": heartbeat\n\n",
        Format::Ndjson => b"{\"event\":\"heartbeat\"}\n",
    })
}

impl Watch {
    /// Notes what an event means for the stream: the end, or when the clock will fall.
    fn observe(&mut self, view: &str) {
        let Ok(view) = serde_json::from_str::<GameView>(view) else {
            return;
        };
        self.done = view.status == Status::Finished;
        self.flag_at = view.clock.and_then(|c| {
            let seat = c.running?;
            Some(c.server_now + c.remaining_ms.get(&seat).copied().unwrap_or(0))
        });
    }

    /// Reads the next page of the log after what was sent.
    async fn refill(&mut self) {
        match self
            .state
            .store
            .events_after(&self.id.to_string(), self.last, EVENTS_PAGE)
            .await
        {
            Ok(events) => {
                self.more = events.len() == EVENTS_PAGE;
                self.queue.extend(events);
            }
            Err(e) => {
                self.more = false;
                tracing::debug!(game = %self.id, error = %e, "event log unavailable");
            }
        }
    }

    /// The next bytes to send, or `None` when the stream is over.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some((version, view)) = self.queue.pop_front() {
                if version <= self.last {
                    continue;
                }
                self.last = version;
                self.observe(&view);
                return Some(frame(self.format, version, &view));
            }
            if self.done {
                return None;
            }
            if self.more {
                self.refill().await;
                continue;
            }
            let flag_in = self
                .flag_at
                .map(|at| Duration::from_millis(at.saturating_sub(now_ms()) + 5));
            tokio::select! {
                changed = self.changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    self.refill().await;
                }
                _ = self.heartbeat.tick() => return Some(heartbeat(self.format)),
                _ = tokio::time::sleep(flag_in.unwrap_or(Duration::from_secs(86_400))), if flag_in.is_some() => {
                    // Nobody else may look at the game: settle the flag here (it is written,
                    // logged and announced like any change).
                    self.flag_at = None;
                    if let Ok((game, _)) = games::read(&self.state, self.id).await {
                        computer::nudge(&self.state, &game);
                    }
                    self.refill().await;
                }
            }
        }
    }
}

/// `Retry-After` when this replica serves its maximum of streams.
const STREAMS_RETRY_SECS: u32 = 5;

/// Follow a game live: Server-Sent Events (default) or NDJSON (`Accept: application/x-ndjson`).
/// Each event is the full game view; its SSE `id` is the version, and reconnecting with
/// `Last-Event-ID` resumes after it. Heartbeats keep idle connections open (SSE comments, or
/// `{"event":"heartbeat"}` lines); the stream ends after the event that finishes the game.
#[utoipa::path(
    get,
    path = "/v1/games/{id}/events",
    tag = "games",
    params(
        ("id" = String, Path, description = "The game's UUID"),
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this version"),
    ),
    responses(
        (status = 200, description = "`text/event-stream` (`id: <version>`, `event: game`, `data: <game view>`) or `application/x-ndjson` (`{\"event\": \"game\", \"version\": v, \"game\": <game view>}` lines)",
         content_type = "text/event-stream", body = GameView),
        (status = 400, description = "`bad_request`: a `Last-Event-ID` that is not a version; `event_id_ahead`: a `Last-Event-ID` beyond the game's version", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, with `Retry-After`; `busy`, with `Retry-After`: this replica serves its maximum of streams (`--max-event-streams`)", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn events(
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let format = if accept.contains("application/x-ndjson") {
        Format::Ndjson
    } else {
        Format::Sse
    };
    let last: Option<u64> = match req.headers().get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::BadRequest,
                        "Last-Event-ID must be a game version",
                    )
                })?,
        ),
    };
    let slot = state
        .event_streams
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError {
            code: ErrorCode::Busy,
            detail: format!(
                "this replica already serves its maximum of {} event streams",
                state.settings.max_event_streams
            ),
            retry_after: Some(STREAMS_RETRY_SECS),
        })?;
    // Subscribe before reading, so that no change can slip in between.
    let changes = state.store.changes().subscribe(&id.to_string());
    let (game, now) = games::read(&state, id).await?;
    computer::nudge(&state, &game);
    let mut queue = VecDeque::new();
    let mut more = false;
    match last {
        None => queue.push_back((game.version(), game.event(now))),
        Some(after) if after > game.version() => {
            return Err(ApiError::new(
                ErrorCode::EventIdAhead,
                format!(
                    "Last-Event-ID {after} is beyond the game's version {}",
                    game.version()
                ),
            ));
        }
        Some(after) => {
            let page = state
                .store
                .events_after(&id.to_string(), after, EVENTS_PAGE)
                .await?;
            more = page.len() == EVENTS_PAGE;
            queue.extend(page);
            if queue.is_empty() && game.version() > after {
                // The log no longer reaches back that far: start from the present.
                queue.push_back((game.version(), game.event(now)));
            }
        }
    }
    let mut heartbeat = tokio::time::interval(state.settings.events_heartbeat);
    heartbeat.reset();
    let watch = Watch {
        _slot: slot,
        more,
        state: state.clone(),
        id,
        format,
        queue,
        last: last.unwrap_or(0),
        done: false,
        changes,
        heartbeat,
        flag_at: None,
    };
    let stream = futures_util::stream::unfold(watch, |mut w| async move {
        w.next()
            .await
            .map(|bytes| (Ok::<_, actix_web::Error>(bytes), w))
    });
    let content_type = match format {
        Format::Sse => "text/event-stream",
        Format::Ndjson => "application/x-ndjson",
    };
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(stream))
}
