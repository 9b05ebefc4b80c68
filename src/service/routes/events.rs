//! `GET /v1/games/{id}/events`: a live stream of the game, as Server-Sent Events or NDJSON.
//!
//! A stream starts with a `game` event, the full game view; then it sends one `change` event
//! per change (a move, a resignation, a clock flag) with the game's state right after it,
//! read from the game's event log page by page. A change made on any replica wakes the
//! stream through the store's fan-out. A reconnection with `Last-Event-ID` resumes right after
//! that version with `change` events; if the log no longer reaches back that far, the stream
//! starts again with a `game` event of the present. The stream settles a flag itself when it
//! is due and nobody else did, and ends after the change that finishes the game. Every stream
//! is a small state machine on the async workers: idle watchers cost no thread.
//!
//! Nothing a client opens is held for ever: a stream ends as soon as its client leaves (it
//! closes its side of the connection, or resets it: see `peer`), when its game is gone (it
//! expired; noticed at a heartbeat, whose read of the game also says whether the log needs
//! reading), after `--events-max-lifetime-secs`, from where the client resumes with
//! `Last-Event-ID`, and when its caller's place for it was lost (its lease in Redis) and is
//! taken by another stream. Its heartbeats (which renew that place) and its lifetime keep
//! their time while a backlog is sent as well, however slowly its client takes it. A client
//! that stops reading is let go by the kernel once its receive window has stayed shut for
//! `--stalled-client-timeout-secs` (see `startup`): actix stops polling a body whose client
//! takes nothing, so the stream itself would never learn of it. (One that stops reading with
//! room left in its buffers keeps the stream until its lifetime.)

use std::collections::VecDeque;
use std::time::Duration;

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::FutureExt;
use tokio::sync::watch;

use super::{charge_pages, game_id};
use crate::api::{GameEvent, Problem};
use crate::service::domain::{GameId, StoredGame};
use crate::service::error::{ApiError, ErrorCode};
use crate::service::games;
use crate::service::peer::{self, Peer};
use crate::service::state::AppState;

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
    /// Its place among its caller's streams (quota `streams`), freed when it ends.
    caller_slot: Option<crate::service::quota::StreamSlot>,
    state: web::Data<AppState>,
    id: GameId,
    format: Format,
    /// The game as of the last event sent.
    game: StoredGame,
    /// Frames ready to send.
    queue: VecDeque<Bytes>,
    /// Whether the last read of the log was a full page (so more may follow at once).
    more: bool,
    /// Whether the last read of the log failed (the store was away): it is tried again after
    /// `RETRY` (and at each heartbeat), since the change that woke it will not wake it again.
    retry: bool,
    /// No earlier than this does the stream try to settle a fallen flag again: an attempt
    /// that changed nothing (Redis without room for the game's end, say) is not repeated at
    /// once, which made each such stream ask the store ~800 times a second.
    settle_after: tokio::time::Instant,
    changes: watch::Receiver<u64>,
    heartbeat: tokio::time::Interval,
    /// Fires when the stream ends, however lively (`--events-max-lifetime-secs`).
    lifetime: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The client's connection: the stream ends as soon as the client closes its side, and
    /// gives its places back.
    peer: Option<Peer>,
}

/// The whole game at `now`, as a `game` event.
fn game_frame(format: Format, game: &StoredGame, now: u64) -> Bytes {
    let json = game.view_json(now);
    let version = game.version();
    Bytes::from(match format {
        Format::Sse => format!("id: {version}\nevent: game\ndata: {json}\n\n"),
        Format::Ndjson => {
            format!("{{\"event\":\"game\",\"version\":{version},\"game\":{json}}}\n")
        }
    })
}

fn change_frame(format: Format, change: &GameEvent) -> Bytes {
    let json = serde_json::to_string(change).expect("an event serializes");
    Bytes::from(match format {
        Format::Sse => format!("id: {}\nevent: change\ndata: {json}\n\n", change.version),
        Format::Ndjson => format!(
            "{{\"event\":\"change\",\"version\":{},\"change\":{json}}}\n",
            change.version
        ),
    })
}

fn heartbeat(format: Format) -> Bytes {
    Bytes::from_static(match format {
        Format::Sse => b": heartbeat\n\n",
        Format::Ndjson => b"{\"event\":\"heartbeat\"}\n",
    })
}

impl Watch {
    /// Reads the next page of the log after what was sent, and frames it.
    async fn refill(&mut self) {
        let id = self.id.to_string();
        let page = match self
            .state
            .store
            .events_after(&id, self.game.version(), EVENTS_PAGE)
            .await
        {
            Ok(page) => {
                self.retry = false;
                page
            }
            Err(e) => {
                self.more = false;
                self.retry = true;
                tracing::debug!(game = %self.id, error = %e, "event log unavailable");
                return;
            }
        };
        self.more = page.len() == EVENTS_PAGE;
        for (version, line) in page {
            if version != self.game.version() + 1 {
                // A gap: the log lost events (trimmed by hand, say). Start from the present.
                self.restart().await;
                return;
            }
            let change = self
                .game
                .decode_event(version, &line)
                .ok_or_else(|| ApiError::new(ErrorCode::Internal, "an unreadable event"))
                .and_then(|event| self.game.apply(version, &event));
            match change {
                Ok(change) => self.queue.push_back(change_frame(self.format, &change)),
                Err(e) => {
                    tracing::error!(game = %self.id, error = %e, "event cannot be followed");
                    self.restart().await;
                    return;
                }
            }
        }
    }

    /// Sends the present game whole and follows on from it.
    async fn restart(&mut self) {
        self.more = false;
        match games::read(&self.state, self.id).await {
            Ok((loaded, now)) => {
                self.game = loaded.game.clone();
                self.queue
                    .push_back(game_frame(self.format, &self.game, now));
            }
            // Tried again after `RETRY` (the log still shows the gap then).
            Err(_) => self.retry = true,
        }
    }

    /// What a heartbeat learns of the game: `None` when it no longer exists (it expired, say);
    /// otherwise whether it may have changed since the last event sent (a store that cannot
    /// answer now neither ends the stream nor rules a change out).
    async fn check(&self) -> Option<bool> {
        match games::read(&self.state, self.id).await {
            Err(e) if e.code == ErrorCode::GameNotFound => None,
            Ok((loaded, _)) => Some(loaded.game.version() != self.game.version()),
            Err(_) => Some(true),
        }
    }

    /// A heartbeat: whether the game still exists and may have changed (then the log is read),
    /// and the renewal of the caller's place; `None` when the stream must end (its game is
    /// gone, or its caller holds its maximum of streams without it).
    async fn beat(&mut self) -> Option<Bytes> {
        let changed = self.check().await?;
        if let Some(slot) = &self.caller_slot
            && !slot.renew().await
        {
            return None;
        }
        // A safety net under the announcements (best effort in a Redis Cluster): what the log
        // holds and no announcement told is sent after the heartbeat (in the middle of a
        // backlog, the backlog's own reads get it).
        if changed && !self.more && self.queue.is_empty() {
            self.refill().await;
        }
        // The next beat a whole period after this one ended, however long it took.
        self.heartbeat.reset();
        Some(heartbeat(self.format))
    }

    /// The next bytes to send, or `None` when the stream is over.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            // Kept while a backlog is sent too, however slowly its client takes it.
            if self.lifetime.deadline() <= tokio::time::Instant::now() {
                return None;
            }
            if self.heartbeat.tick().now_or_never().is_some() {
                return self.beat().await;
            }
            if let Some(frame) = self.queue.pop_front() {
                return Some(frame);
            }
            if self.game.is_finished() {
                return None;
            }
            if self.more {
                self.refill().await;
                continue;
            }
            let now = self.state.store.clock().now_ms();
            let flag_at = self.game.time_left_to_move(now).map(|left| {
                let due = tokio::time::Instant::now() + Duration::from_millis(left + 5);
                due.max(self.settle_after)
            });
            let ends = self.lifetime.deadline();
            tokio::select! {
                changed = self.changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    self.refill().await;
                }
                _ = &mut self.lifetime => return None,
                () = peer::gone(self.peer.as_ref()) => return None,
                _ = self.heartbeat.tick() => return self.beat().await,
                _ = tokio::time::sleep(RETRY), if self.retry => {
                    self.refill().await;
                }
                _ = tokio::time::sleep_until(flag_at.unwrap_or(ends)), if flag_at.is_some() => {
                    // Settle the flag here if nobody else did yet (it is written, logged and
                    // announced like any change, and the next refill sends it).
                    let _ = games::read(&self.state, self.id).await;
                    self.refill().await;
                    if self.queue.is_empty() {
                        self.settle_after = tokio::time::Instant::now() + RETRY;
                    }
                }
            }
        }
    }
}

/// `Retry-After` when this replica serves its maximum of streams.
const STREAMS_RETRY_SECS: u32 = 5;
/// How soon a stream reads the log again after the store failed it, or tries again to settle
/// a fallen flag that it could not.
const RETRY: Duration = Duration::from_secs(1);

/// Follow a game live: Server-Sent Events (default) or NDJSON (`Accept: application/x-ndjson`).
/// The stream starts with a `game` event (the full game view), then sends a `change` event
/// (`GameEvent`) per change; every event's SSE `id` is the game's version, and reconnecting
/// with `Last-Event-ID` resumes after it with `change` events (`0`: the game as it started,
/// then every change; if the game's log no longer reaches back that far, it starts again with
/// a `game` event of the present; a finished game's last version: `204`, nothing more). Heartbeats keep idle connections
/// open (SSE comments, or `{"event":"heartbeat"}` lines); the stream ends after the change
/// that finishes the game, when the game expires, after the server's maximum stream
/// lifetime (an hour by default: resume with `Last-Event-ID`), when its client's receive
/// window stays shut for the server's stall timeout (30 s by default), and when its place
/// among its caller's `streams` was lost (a Redis restarted without its data) and the caller
/// has used that place for another stream since.
#[utoipa::path(
    get,
    path = "/v1/games/{id}/events",
    tag = "games",
    params(
        ("id" = String, Path, description = "The game's UUID"),
        ("Last-Event-ID" = Option<u64>, Header, minimum = 0, description = "Resume after this version (`0`: from the game's start). The game is replayed up to it: a read of the caller's quota more for each whole 512 versions"),
    ),
    responses(
        (status = 200, description = "`text/event-stream`: `event: game` (`data`: a game view) first, then `event: change` (`data`: a game event); or `application/x-ndjson`: lines `{\"event\": \"game\", \"version\": v, \"game\": <game view>}`, `{\"event\": \"change\", \"version\": v, \"change\": <game event>}` and `{\"event\": \"heartbeat\"}`",
         content_type = "text/event-stream", body = GameEvent),
        (status = 204, description = "The game is over and `Last-Event-ID` is its last version: nothing more will come (an EventSource stops reconnecting on this answer)"),
        (status = 400, description = "`bad_request`: a `Last-Event-ID` that is not a whole number", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`event_id_ahead`: a `Last-Event-ID` beyond the game's version (the game has not got there)", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`; `busy`, with `Retry-After`: this replica serves its maximum of streams (`--max-event-streams`)", body = Problem, content_type = "application/problem+json"),
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
    let caller_slot = state
        .quotas
        .open_stream(&state, &req, state.settings.events_heartbeat)
        .await?;
    let slot = state
        .event_streams
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError {
            retry_after: Some(STREAMS_RETRY_SECS),
            ..ApiError::new(
                ErrorCode::Busy,
                format!(
                    "this replica already serves its maximum of {} event streams",
                    state.settings.max_event_streams
                ),
            )
        })?;
    let (loaded, now) = games::read(&state, id).await?;
    if last == Some(loaded.game.version()) && loaded.game.is_finished() {
        // The client has every event of a game that will have no more. An empty stream would
        // end at once, and an EventSource reconnects after every end, so it would come back
        // every few seconds for ever: `204` is the answer that makes it stop.
        return Ok(HttpResponse::NoContent().finish());
    }
    let current = &loaded.game;
    // A resume from an earlier version replays the game up to it: a read more for each whole
    // page of plies replayed, charged before anything is subscribed or replayed.
    let replayed = last.filter(|&after| after < current.version()).unwrap_or(0);
    let quota_headers = match charge_pages(&state, &req, replayed).await {
        Ok(headers) => headers,
        Err(refusal) => return Ok(refusal),
    };
    // Following the game from here on; what changed since the read above is read from the log
    // first thing (so a game that does not exist costs no subscription).
    let mut changes = state.store.watch(&id.to_string()).await;
    changes.mark_changed();
    let mut queue = VecDeque::new();
    let game = match last {
        None => {
            queue.push_back(game_frame(format, current, now));
            current.clone()
        }
        Some(after) if after > current.version() => {
            return Err(ApiError::new(
                ErrorCode::EventIdAhead,
                format!(
                    "Last-Event-ID {after} is beyond the game's version {}",
                    current.version()
                ),
            ));
        }
        Some(after) if after == current.version() => current.clone(),
        Some(after) => {
            // The game as it was after `after` (`0`: from its very start, sent whole).
            let version = after.max(1);
            let page = state
                .store
                .events_after(&id.to_string(), version - 1, 1)
                .await?;
            let then = page
                .first()
                .filter(|(v, _)| *v == version)
                .and_then(|(v, line)| current.decode_event(*v, line))
                .map(|event| current.as_of(version, &event));
            match then {
                Some(game) => {
                    let game = game?;
                    if after == 0 {
                        queue.push_back(game_frame(format, &game, game.changed_at()));
                    }
                    game
                }
                None => {
                    // The log no longer reaches back that far: start from the present.
                    queue.push_back(game_frame(format, current, now));
                    current.clone()
                }
            }
        }
    };
    let mut heartbeat = tokio::time::interval(state.settings.events_heartbeat);
    // After a slow stretch (a backlog its client took slowly), one beat, not one per period.
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    heartbeat.reset();
    let lifetime = Box::pin(tokio::time::sleep(state.settings.events_max_lifetime));
    let more = game.version() < current.version();
    let watch = Watch {
        _slot: slot,
        caller_slot,
        state: state.clone(),
        id,
        format,
        game,
        queue,
        more,
        retry: false,
        settle_after: tokio::time::Instant::now(),
        changes,
        heartbeat,
        lifetime,
        peer: Peer::of(&req),
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
    let mut answer = HttpResponse::Ok();
    for quota_header in quota_headers {
        answer.insert_header(quota_header);
    }
    Ok(answer
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(stream))
}

#[cfg(test)]
mod tests {
    //! A stream's body is polled here only when the test reads it, as actix polls it only
    //! when its client takes what was sent: a slow client without the kernel's buffers.

    use std::pin::Pin;
    use std::sync::Arc;

    use actix_web::body::{BoxBody, MessageBody};
    use actix_web::{App, test};
    use serde_json::{Value, json};

    use super::*;
    use crate::service::cache::GameCache;
    use crate::service::configuration::Settings;
    use crate::service::engine_seats::engine_thinker;
    use crate::service::store::{MemoryStore, Store, StoreClock};

    /// A game with three moves played, and a stream of it from its start (`Last-Event-ID:
    /// 0`): a backlog of four events, the first of them read.
    async fn a_backlog_after_its_first_event(settings: Settings) -> Pin<Box<BoxBody>> {
        let store = Store::Memory(Box::new(MemoryStore::new(
            10,
            1 << 20,
            StoreClock::with_skew(0),
        )));
        let cache = Arc::new(GameCache::new(1 << 20));
        let state = web::Data::new(AppState::new(store, cache, settings, engine_thinker()));
        let app = test::init_service(
            App::new()
                .app_data(state)
                .configure(|cfg| super::super::configure(cfg, 16 * 1024)),
        )
        .await;
        let created: Value = test::call_and_read_body_json(
            &app,
            test::TestRequest::post()
                .uri("/v1/games")
                .set_json(json!({"game": "pillarz"}))
                .to_request(),
        )
        .await;
        let id = created["game"]["id"].as_str().unwrap();
        for ply in 0..3 {
            let legal: Value = test::call_and_read_body_json(
                &app,
                test::TestRequest::get()
                    .uri(&format!("/v1/games/{id}/legal-moves"))
                    .to_request(),
            )
            .await;
            let seat = ["p1", "p2"][ply % 2];
            let token = created["tokens"][seat].as_str().unwrap();
            let played = test::call_service(
                &app,
                test::TestRequest::post()
                    .uri(&format!("/v1/games/{id}/moves"))
                    .insert_header(("authorization", format!("Bearer {token}")))
                    .set_json(json!({"move": legal["moves"][0]}))
                    .to_request(),
            )
            .await;
            assert_eq!(played.status(), 200);
        }
        let stream = test::call_service(
            &app,
            test::TestRequest::get()
                .uri(&format!("/v1/games/{id}/events"))
                .insert_header(("last-event-id", "0"))
                .to_request(),
        )
        .await;
        assert_eq!(stream.status(), 200);
        let mut body = Box::pin(stream.into_body());
        let first = next_frame(&mut body).await.expect("the game as it started");
        assert!(first.starts_with(b"id: 1\nevent: game\n"));
        body
    }

    async fn next_frame(body: &mut Pin<Box<BoxBody>>) -> Option<Bytes> {
        std::future::poll_fn(|cx| body.as_mut().poll_next(cx))
            .await
            .map(|frame| frame.expect("a frame"))
    }

    #[actix_web::test]
    async fn a_stream_ends_at_its_lifetime_in_the_middle_of_a_backlog() {
        let mut settings = Settings::for_tests();
        settings.events_max_lifetime = Duration::from_millis(500);
        let mut body = a_backlog_after_its_first_event(settings).await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(next_frame(&mut body).await, None);
    }

    /// One heartbeat however many periods the client took (they renew the caller's place),
    /// then the backlog goes on.
    #[actix_web::test]
    async fn heartbeats_keep_their_time_in_the_middle_of_a_backlog() {
        let mut settings = Settings::for_tests();
        settings.events_heartbeat = Duration::from_millis(300);
        let mut body = a_backlog_after_its_first_event(settings).await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        let beat = next_frame(&mut body).await.unwrap();
        assert_eq!(
            beat,
            heartbeat(Format::Sse),
            "a heartbeat before the backlog goes on"
        );
        let change = next_frame(&mut body).await.unwrap();
        assert!(change.starts_with(b"id: 2\nevent: change\n"), "{change:?}");
    }
}
