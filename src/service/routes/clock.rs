//! `GET /v1/games/{id}/clock`.

use actix_web::{HttpResponse, web};

use super::game_id;
use crate::api::{ClockView, Problem};
use crate::service::error::ApiError;
use crate::service::games;
use crate::service::state::AppState;

/// The clocks: time left per seat, whose clock runs, since when, and the server's time; `null`
/// for an untimed game (as the game's `clock`).
#[utoipa::path(
    get,
    path = "/v1/games/{id}/clock",
    tag = "games",
    params(("id" = String, Path, description = "The game's UUID")),
    responses(
        (status = 200, description = "The clocks, or `null` for an untimed game", body = Option<ClockView>),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn clock(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (loaded, now) = games::read(&state, id).await?;
    Ok(HttpResponse::Ok().json(loaded.game.clock_view(now)))
}
