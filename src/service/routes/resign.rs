//! `POST /v1/games/{id}/resign`.

use actix_web::{HttpRequest, HttpResponse, web};

use super::{bearer, game_id, idempotency_key, seat_of_token, written_answer};
use crate::api::{GameView, Problem};
use crate::service::error::ApiError;
use crate::service::games::{self, Idempotent};
use crate::service::state::AppState;

/// Resign for the seat whose token is sent; the opponent wins.
#[utoipa::path(
    post,
    path = "/v1/games/{id}/resign",
    tag = "games",
    params(
        ("id" = String, Path, description = "The game's UUID"),
        ("Idempotency-Key" = Option<String>, Header, pattern = r"^[!-~]{1,128}$", description = "As for moves (a key is scoped to the seat and the operation: a key a move used is a new key here)"),
    ),
    security(("seat_token" = [])),
    responses(
        (status = 200, description = "The finished game", body = GameView),
        (status = 401, description = "`unauthenticated`", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`wrong_seat`", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`game_over`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`idempotency_key_reused`: the key was used by this seat for another request", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn resign(
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let token = bearer(&req)?;
    let key = idempotency_key(&req)?;
    let idempotent = key.as_ref().map(|key| Idempotent {
        key,
        token: &token,
        operation: "resign",
        request: String::new(),
    });
    let written = games::write(&state, id, idempotent, |game, now| {
        let seat = seat_of_token(game, &token)?;
        game.resign(seat, now)
    })
    .await?;
    written_answer(&state, &req, written).await
}
