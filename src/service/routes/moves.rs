//! `GET /v1/games/{id}/legal-moves` and `POST /v1/games/{id}/moves`.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};

use super::{bearer, game_id, idempotency_key, json_with_etag, seat_of_token};
use crate::api::{GameView, LegalMoves, Problem, SubmitMove};
use crate::service::computer;
use crate::service::domain::seat_of;
use crate::service::error::{ApiError, ErrorCode};
use crate::service::games::{self, Idempotent, Written};
use crate::service::state::AppState;

/// Every legal move of the current position, in canonical notation.
#[utoipa::path(
    get,
    path = "/v1/games/{id}/legal-moves",
    tag = "games",
    params(("id" = String, Path, description = "The game's UUID")),
    responses(
        (status = 200, description = "The legal moves (none once the game is over)", body = LegalMoves),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn legal(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (game, _) = games::read(&state, id).await?;
    computer::nudge(&state, &game);
    let moves = if game.is_finished() {
        Vec::new()
    } else {
        game.rules().legal_moves()
    };
    Ok(HttpResponse::Ok().json(LegalMoves {
        ply: game.ply(),
        turn: seat_of(game.rules().turn()),
        moves,
    }))
}

/// Play a move for the seat whose token is sent. The answer is the game after the move.
#[utoipa::path(
    post,
    path = "/v1/games/{id}/moves",
    tag = "games",
    params(
        ("id" = String, Path, description = "The game's UUID"),
        ("Authorization" = String, Header, description = "`Bearer <seat token>`"),
        ("Idempotency-Key" = Option<String>, Header,
         description = "1 to 128 visible ASCII characters, chosen by the client per request: a retry of the same request by the same seat with the same key gets the first answer again (kept 24 hours); the same key with a different request is refused with `422 idempotency_key_reused`"),
    ),
    request_body = SubmitMove,
    responses(
        (status = 200, description = "The move was played", body = GameView,
         headers(("ETag" = String, description = "The game's new version, quoted"))),
        (status = 400, description = "`bad_notation`, or `bad_request` (bad JSON, bad header)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "`unauthenticated`: no or malformed seat token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`wrong_seat`: the token holds no seat in this game", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`not_your_turn`, `stale_version` (`expected_ply` differs) or `game_over`", body = Problem, content_type = "application/problem+json"),
        (status = 408, description = "`request_timeout`: the body did not arrive within the request timeout", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "`payload_too_large`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`illegal_move`, with the reason; `idempotency_key_reused`: this seat already sent a different move with this `Idempotency-Key`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, with `Retry-After`", body = Problem, content_type = "application/problem+json"),
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
    let written = games::write(
        &state,
        id,
        idempotent,
        |game, now| {
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
            game.play(seat, &request.mv, now)
        },
        |game, _, now| serde_json::to_string(&game.view(now)).expect("a view serializes"),
    )
    .await?;
    Ok(view_answer(&state, written))
}

/// The answer of a write whose body is a game view (and a nudge for the engine, if it is to
/// move now).
pub(super) fn view_answer(state: &web::Data<AppState>, written: Written) -> HttpResponse {
    match written {
        Written::Applied(game, body) => {
            computer::nudge(state, &game);
            json_with_etag(StatusCode::OK, game.version(), body)
        }
        Written::Replayed(body) => {
            let version = serde_json::from_str::<GameView>(&body).map_or(0, |v| v.version);
            json_with_etag(StatusCode::OK, version, body)
        }
    }
}
