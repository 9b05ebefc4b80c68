//! `GET /healthz/live` and `GET /healthz/ready`.

use actix_web::{HttpResponse, web};

use crate::api::{Health, Problem};
use crate::service::error::ApiError;
use crate::service::state::AppState;

/// The process is up.
#[utoipa::path(get, path = "/healthz/live", tag = "health",
    responses((status = 200, description = "Alive", body = Health)))]
pub async fn live() -> HttpResponse {
    HttpResponse::Ok().json(Health {
        status: "ok".into(),
    })
}

/// The service can serve games: its store answers (asked at most once a second).
#[utoipa::path(get, path = "/healthz/ready", tag = "health",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "`store_unavailable`", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn ready(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state.readiness.check(&state.store).await?;
    Ok(HttpResponse::Ok().json(Health {
        status: "ok".into(),
    }))
}
