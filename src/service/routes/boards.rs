//! `GET /v1/games/{id}/board.svg` and `GET /v1/board.svg`: pictures of positions.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa::IntoParams;

use super::{charge_pages, game_id, if_none_match};
use crate::api::Problem;
use crate::rules::AnyRecord;
use crate::service::error::{ApiError, ErrorCode};
use crate::service::games;
use crate::service::state::AppState;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GameBoardQuery {
    /// Show the position after this many moves (default: the current position); a ply the
    /// game has not reached is `404 not_found`. An earlier ply than the game's is replayed: a
    /// read of the caller's quota more for each whole 512 plies.
    #[param(minimum = 0)]
    ply: Option<u64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BoardQuery {
    /// Which game the position is of.
    game: crate::rules::GameKind,
    /// The position, in the game's notation.
    position: String,
    /// Comma-separated variants (Pilastri: `size-8`, `jumpers`).
    #[param(pattern = r"^((size-8|jumpers)(,(size-8|jumpers))*)?$")]
    variants: Option<String>,
    /// A move to mark as the last one (Pyrga's notation already names it).
    last: Option<String>,
}

/// An SVG answer with a content ETag; `immutable` when the URL names one position for good.
fn svg(req: &HttpRequest, body: String, immutable: bool) -> HttpResponse {
    let etag = format!(
        "\"{}\"",
        &hex::encode(Sha256::digest(body.as_bytes()))[..32]
    );
    let cache = if immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let unchanged = if_none_match(req, &etag);
    let mut response = if unchanged {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, cache));
    if unchanged {
        response.finish()
    } else {
        response.content_type("image/svg+xml").body(body)
    }
}

/// A stored game's board, now or after `ply` moves, with the last move marked.
#[utoipa::path(
    get,
    path = "/v1/games/{id}/board.svg",
    tag = "boards",
    params(("id" = String, Path, description = "The game's UUID"), GameBoardQuery),
    responses(
        (status = 200, description = "The board", content_type = "image/svg+xml", body = String),
        (status = 304, description = "Not modified (`If-None-Match` matched)"),
        (status = 400, description = "`bad_request`: a `ply` that is not a whole number", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`game_not_found`; `not_found`: a `ply` beyond the game's moves", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn game_board(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<GameBoardQuery>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let (loaded, _) = games::read(&state, id).await?;
    let game = &loaded.game;
    let ply = query.ply.unwrap_or(game.ply());
    if ply > game.ply() {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("ply {ply} is beyond the game's {} moves", game.ply()),
        ));
    }
    let (picture, quota_headers) = if ply == game.ply() {
        (
            crate::svg::render(game.rules(), game.last_move()),
            Vec::new(),
        )
    } else {
        // An earlier ply: replay up to it (a look back, not the current game), which costs a
        // read more for each whole page of plies replayed.
        let quota_headers = match charge_pages(&state, &req, ply).await {
            Ok(headers) => headers,
            Err(refusal) => return Ok(refusal),
        };
        let moves: Vec<&str> = game.moves().take(ply as usize).collect();
        let record =
            AnyRecord::replay(game.kind(), game.variants(), game.start_position(), &moves)?;
        (
            crate::svg::render(record.state(), moves.last().copied()),
            quota_headers,
        )
    };
    let mut answer = svg(&req, picture, query.ply.is_some());
    for (name, value) in quota_headers {
        answer.headers_mut().insert(name, value);
    }
    Ok(answer)
}

/// The board of any position.
#[utoipa::path(
    get,
    path = "/v1/board.svg",
    tag = "boards",
    params(BoardQuery),
    responses(
        (status = 200, description = "The board", content_type = "image/svg+xml", body = String),
        (status = 304, description = "Not modified (`If-None-Match` matched)"),
        (status = 400, description = "`bad_request`: a missing or malformed parameter", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`bad_position`: the position does not parse; `bad_variant`: a variant the game does not have; `bad_notation`: `last` is not a move of this game on this board", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn position_board(
    query: web::Query<BoardQuery>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let kind = query.game;
    let variants = match query.variants.as_deref() {
        None | Some("") => Vec::new(),
        // Exactly as the parameter's pattern says: names, comma-separated.
        Some(list) => list
            .split(',')
            .map(|name| {
                crate::rules::Variant::ALL
                    .into_iter()
                    .find(|v| v.as_str() == name)
                    .ok_or_else(|| {
                        ApiError::new(
                            ErrorCode::BadRequest,
                            format!("variants must be comma-separated variant names, not {list:?}"),
                        )
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    let record = AnyRecord::new(kind, kind.with_variants(&variants)?, Some(&query.position))?;
    if let Some(last) = &query.last {
        // The last move was played before this position: it need not be legal in it, only on
        // its board.
        record.state().parse_on_board(last)?;
    }
    Ok(svg(
        &req,
        crate::svg::render(record.state(), query.last.as_deref()),
        true,
    ))
}
