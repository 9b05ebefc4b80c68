//! `GET /v1/games/{id}/record`: a game's record, built from its event log (which keeps every
//! change, with its time and the clocks after it, for as long as the game lives).

use std::collections::BTreeMap;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};

use super::{charge_pages, game_id};
use crate::api::{GameRecord, Problem, RecordMove, TimeControl};
use crate::rules::{AnyState, Player};
use crate::service::domain::Event;
use crate::service::error::{ApiError, ErrorCode};
use crate::service::games;
use crate::service::state::AppState;

/// Events read from the store at once while building a record.
const PAGE: usize = 512;

/// A game's record: variants, start, every move with its ply, time and the clocks after it,
/// the result and how it ended. JSON by default; `Accept: text/plain` gives the same record as
/// text (tags, then numbered moves) that a person can read and archive. The record's
/// `position` starts a new game from where this one stands (`POST /v1/games`, `position`).
/// Available until the game expires. A record counts one read more for each 512 events of
/// its game's log (a game of 2,000 plies: three more).
#[utoipa::path(
    get,
    path = "/v1/games/{id}/record",
    tag = "games",
    params(("id" = String, Path, description = "The game's UUID")),
    responses(
        (status = 200, description = "The record (`text/plain` with `Accept: text/plain`)",
         content((GameRecord = "application/json"), (String = "text/plain"))),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn record(
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (loaded, now) = games::read(&state, id).await?;
    let game = &loaded.game;
    // A long game's record is pages of its log to read and decode (a record of 2,000 plies
    // is some 200 KB): it costs a read more for each whole page of events.
    let quota_headers = match charge_pages(&state, &req, game.version()).await {
        Ok(headers) => headers,
        Err(refusal) => return Ok(refusal),
    };
    let key = id.to_string();
    let incomplete = || ApiError::new(ErrorCode::Internal, "the game's event log is incomplete");

    // The log up to the version read, so the record matches that game exactly.
    let mut events = Vec::new();
    let mut after = 0;
    while after < game.version() {
        let page = state.store.events_after(&key, after, PAGE).await?;
        if page.is_empty() {
            return Err(incomplete());
        }
        for (version, line) in page {
            // A gap first: a page that starts past the version read must not be read again.
            if version != after + 1 {
                return Err(incomplete());
            }
            if version > game.version() {
                break;
            }
            events.push(game.decode_event(version, &line).ok_or_else(incomplete)?);
            after = version;
        }
    }

    let start = AnyState::new(game.kind(), game.variants(), Some(game.start_position()))
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    let first = start.turn();
    let clocks = |c: Option<[u64; 2]>| {
        c.map(|[p1, p2]| BTreeMap::from([(Player::P1, p1), (Player::P2, p2)]))
    };
    let mut moves = Vec::new();
    let (mut ended_at, mut ended_by) = (None, None);
    for event in &events {
        match event {
            Event::Created { .. } => {}
            Event::Moved {
                at,
                ply,
                mv,
                clocks: after_move,
                end,
            } => {
                let seat = match (first, ply % 2 == 1) {
                    (seat, true) => seat,
                    (Player::P1, false) => Player::P2,
                    (Player::P2, false) => Player::P1,
                };
                moves.push(RecordMove {
                    ply: *ply,
                    seat,
                    mv: mv.clone(),
                    at: *at,
                    remaining_ms: clocks(*after_move),
                });
                if end.is_some() {
                    ended_at = Some(*at);
                }
            }
            Event::Resigned { at, seat, .. } | Event::TimedOut { at, seat } => {
                ended_at = Some(*at);
                ended_by = Some(*seat);
            }
        }
    }
    let record = GameRecord {
        id: key,
        game: game.kind(),
        variants: game.variants().iter().collect(),
        created_at: game.created_at(),
        time_control: game.clock_view(now).map(|c| TimeControl {
            initial_ms: c.initial_ms,
            increment_ms: c.increment_ms,
        }),
        start_position: game.start_position().to_string(),
        moves,
        position: game.rules().position(),
        status: game.status(),
        result: game.result(),
        termination: game.termination(),
        ended_at: ended_at.filter(|_| game.is_finished()),
        ended_by,
    };
    let wants_text = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/plain") && !accept.contains("json"));
    let mut answer = HttpResponse::Ok();
    // The answer depends on `Accept`: a cache must not give one kind to a client of the other.
    answer.insert_header((header::VARY, "Accept"));
    for quota_header in quota_headers {
        answer.insert_header(quota_header);
    }
    Ok(if wants_text {
        answer
            .content_type("text/plain; charset=utf-8")
            .body(record.to_text())
    } else {
        answer.json(record)
    })
}
