//! `POST /v1/games` and `GET /v1/games/{id}`.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};

use super::{game_id, json_with_etag, not_modified};
use crate::api::{CreateGame, CreatedGame, GameView, Problem, Seat};
use crate::engine::levels::Level;
use crate::rules::AnyState;
use crate::service::domain::{GameId, SeatToken, StoredGame, ValidTimeControl};
use crate::service::error::{ApiError, ErrorCode};
use crate::service::games;
use crate::service::quota::{self, Class};
use crate::service::state::AppState;

/// Create a game. The answer holds the seat tokens: they are shown only here.
#[utoipa::path(
    post,
    path = "/v1/games",
    tag = "games",
    request_body = CreateGame,
    responses(
        (status = 201, description = "Created; `Location` names the game", body = CreatedGame,
         headers(("Location" = String, description = "/v1/games/{id}"))),
        (status = 400, description = "`bad_request`: bad JSON, or a value outside this document's schema (unknown game or variant, time control or engine level out of range)",
         body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`bad_position`: the position does not parse for this game; `bad_variant`: a variant this game does not have",
         body = Problem, content_type = "application/problem+json"),
        (status = 408, description = "`request_timeout`: the body did not arrive within the request timeout", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "`payload_too_large`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, with `Retry-After`; `store_full`, with `Retry-After`: the store holds all it may (the embedded store its `--memory-max-games` games or `--memory-max-mb` MiB, Redis its `maxmemory`); such a create is not counted among the day's games", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<CreateGame>,
) -> Result<HttpResponse, ApiError> {
    let request = body.into_inner();
    let kind = request.game;
    let variants = kind.with_variants(&request.variants)?;
    let time_control = request
        .time_control
        .map(ValidTimeControl::parse)
        .transpose()
        .map_err(|e| ApiError::new(ErrorCode::BadRequest, e))?;
    let rules = AnyState::new(kind, variants, request.position.as_deref())?;
    let mut engine_seats = [None, None];
    for (seat, spec) in &request.seats {
        if !Level::exists(spec.engine.level) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("engine level must be 1 to 8, not {}", spec.engine.level),
            ));
        }
        engine_seats[usize::from(*seat == Seat::P2)] = Some(spec.engine.level);
    }
    // A valid request counts among the caller's games of the day (the store holds each for
    // days); the game's engine seats think on the caller's analysis time.
    let (caller, quota_headers) = match quota::admit_also(&state, &req, Class::Games, 1).await {
        Ok(admitted) => admitted,
        Err(refusal) => return Ok(refusal),
    };
    let payer = caller
        .as_ref()
        .filter(|_| engine_seats.iter().any(Option::is_some))
        .map(|c| c.id.clone());
    let id = GameId::new_random();
    let tokens = [SeatToken::generate(), SeatToken::generate()];
    let game = games::create(&state, |now| {
        let game = StoredGame::create(id, rules.clone(), time_control, engine_seats, &tokens, now);
        match &payer {
            Some(payer) => game.paid_by(payer.clone()),
            None => game,
        }
    })
    .await;
    let game = match game {
        Ok(game) => game,
        Err(error) => {
            // A full store wrote nothing, so the day's game is given back; a create that
            // failed otherwise (`store_unavailable`) may have been written and stays counted.
            if error.code == ErrorCode::StoreFull
                && let Some(caller) = &caller
                && let Err(lost) = state
                    .quotas
                    .refund(&state.store, caller, Class::Games, 1)
                    .await
            {
                tracing::warn!(error = %lost, "a refused create's game was not given back");
            }
            return Err(error);
        }
    };
    tracing::info!(game = %game.id(), kind = %kind, "game created");
    let created = CreatedGame {
        game: game.view(game.changed_at()),
        tokens: [(Seat::P1, &tokens[0]), (Seat::P2, &tokens[1])]
            .into_iter()
            .filter(|(seat, _)| !game.is_engine_seat(*seat))
            .map(|(seat, t)| (seat, t.expose().to_string()))
            .collect(),
    };
    let mut response = HttpResponse::Created();
    response
        .insert_header((header::LOCATION, format!("/v1/games/{}", game.id())))
        .insert_header((header::ETAG, format!("\"{}\"", game.version())));
    for quota_header in quota_headers {
        response.insert_header(quota_header);
    }
    Ok(response.json(created))
}

/// Read a game: position, turn, moves, result and clocks. `ETag` is its version.
#[utoipa::path(
    get,
    path = "/v1/games/{id}",
    tag = "games",
    params(("id" = String, Path, description = "The game's UUID")),
    responses(
        (status = 200, description = "The game", body = GameView,
         headers(("ETag" = String, description = "The game's version, quoted"))),
        (status = 304, description = "Not modified (`If-None-Match` matched the version)"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get(
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (loaded, now) = games::read(&state, id).await?;
    let game = &loaded.game;
    if let Some(unchanged) = not_modified(&req, game.version()) {
        return Ok(unchanged);
    }
    let body = game.view_json(now);
    Ok(json_with_etag(StatusCode::OK, game.version(), body))
}
