//! `GET /v1/games/{id}/legal-moves` and `POST /v1/games/{id}/moves`.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};

use super::{
    bearer, game_id, idempotency_key, json_with_etag, not_modified, seat_of_token, written_answer,
};
use crate::api::{GameView, LegalMoves, Problem, SubmitMove};
use crate::service::cache::Loaded;
use crate::service::error::{ApiError, ErrorCode};
use crate::service::games::{self, Idempotent};
use crate::service::state::AppState;

/// Every legal move of the current position, in canonical notation.
#[utoipa::path(
    get,
    path = "/v1/games/{id}/legal-moves",
    tag = "games",
    params(("id" = String, Path, description = "The game's UUID")),
    responses(
        (status = 200, description = "The legal moves (none once the game is over)", body = LegalMoves,
         headers(("ETag" = String, description = "The game's version, quoted"))),
        (status = 304, description = "Not modified (`If-None-Match` matched the version)"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn legal(
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (loaded, _) = games::read(&state, id).await?;
    if let Some(unchanged) = not_modified(&req, loaded.game.version()) {
        return Ok(unchanged);
    }
    // A first ask at this version: the game is cached again with its answer, weighed with it
    // (an entry's weight never changes while it is cached).
    let loaded = if loaded.has_legal_moves() {
        loaded
    } else {
        let answered = Loaded::with_legal_moves(loaded.game.clone());
        state.cache.put(&answered);
        answered
    };
    Ok(json_with_etag(
        StatusCode::OK,
        loaded.game.version(),
        loaded.legal_moves_json().to_string(),
    ))
}

/// Play a move for the seat whose token is sent. The answer is the game after the move.
#[utoipa::path(
    post,
    path = "/v1/games/{id}/moves",
    tag = "games",
    params(
        ("id" = String, Path, description = "The game's UUID"),
        ("Idempotency-Key" = Option<String>, Header, pattern = r"^[!-~]{1,128}$",
         description = "1 to 128 visible ASCII characters, chosen by the client per request: a retry of the same request by the same seat with the same key gets the first answer again (kept as long as the game); the same key with a different request is refused with `422 idempotency_key_reused`"),
    ),
    request_body = SubmitMove,
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The move was played", body = GameView,
         headers(("ETag" = String, description = "The game's new version, quoted"))),
        (status = 400, description = "`bad_request` (bad JSON, bad header)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthenticated`: no or malformed seat token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`wrong_seat`: the token holds no seat in this game", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`not_your_turn`, `stale_version` (`expected_ply` differs) or `game_over`", body = Problem, content_type = "application/problem+json"),
        (status = 408, description = "`request_timeout`: the body did not arrive within the request timeout", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "`payload_too_large`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`illegal_move`, with the reason; `bad_notation`: not a move of this game's notation; `idempotency_key_reused`: this seat already sent a different move with this `Idempotency-Key`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn submit(
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
    body: web::Json<SubmitMove>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let token = bearer(&req)?;
    let key = idempotency_key(&req)?;
    let request = body.into_inner();
    let idempotent = key.as_ref().map(|key| Idempotent {
        key,
        token: &token,
        operation: "move",
        request: serde_json::to_string(&request).expect("a request serializes"),
    });
    let max_plies = state.settings.max_plies;
    let written = games::write(&state, id, idempotent, |game, now| {
        let seat = seat_of_token(game, &token)?;
        if let Some(expected) = request.expected_ply
            && expected != game.ply()
        {
            return Err(ApiError::new(
                ErrorCode::StaleVersion,
                format!(
                    "expected ply {expected}, but the game is at ply {}",
                    game.ply()
                ),
            ));
        }
        game.play(seat, &request.mv, now, max_plies)
    })
    .await?;
    written_answer(&state, &req, written).await
}
