//! The HTTP routes, one file per resource, and the one function that mounts them all (used by
//! `pillarz serve` and by the tests alike).

mod analysis;
mod boards;
mod catalog;
mod clock;
mod docs;
mod events;
mod games;
mod health;
mod metrics;
mod moves;
mod page;
mod problems;
mod record;
mod resign;
mod slices;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};

use super::domain::{GameId, IdempotencyKey, SeatToken, StoredGame};
use super::error::{ApiError, ErrorCode};
use super::quota::{self, Class};

pub use docs::ApiDoc;

/// Mounts every route, the JSON limits and the problem+json answers for bad requests.
pub fn configure(cfg: &mut web::ServiceConfig, body_limit: usize) {
    let json = web::JsonConfig::default()
        .limit(body_limit)
        .error_handler(|err, _req| json_error(err).into());
    let query = web::QueryConfig::default()
        .error_handler(|err, _req| ApiError::new(ErrorCode::BadRequest, err.to_string()).into());
    cfg.app_data(json)
        .app_data(query)
        .app_data(web::PayloadConfig::new(body_limit))
        .service(
            resource("/v1/catalog", "GET, HEAD", Some(Class::Read))
                .route(get_or_head().to(catalog::catalog)),
        )
        .service(
            resource("/v1/games", "POST", Some(Class::Create)).route(web::post().to(games::create)),
        )
        // Every route of one game under one scope: its `{id}` is matched once (a regex), and
        // the route within it by plain comparison, where trying each `/v1/games/{id}/...`
        // pattern in turn ran a regex per pattern tried.
        .service(
            web::scope("/v1/games/{id}")
                .service(
                    game_resource!("", "GET, HEAD", Some(Class::Read))
                        .route(get_or_head().to(games::get)),
                )
                .service(
                    game_resource!("/legal-moves", "GET, HEAD", Some(Class::Read))
                        .route(get_or_head().to(moves::legal)),
                )
                .service(
                    game_resource!("/moves", "POST", Some(Class::Write))
                        .route(web::post().to(moves::submit)),
                )
                .service(
                    game_resource!("/resign", "POST", Some(Class::Write))
                        .route(web::post().to(resign::resign)),
                )
                .service(
                    game_resource!("/record", "GET, HEAD", Some(Class::Read))
                        .route(get_or_head().to(record::record)),
                )
                .service(
                    game_resource!("/clock", "GET, HEAD", Some(Class::Read))
                        .route(get_or_head().to(clock::clock)),
                )
                .service(
                    game_resource!("/events", "GET", Some(Class::Read))
                        .route(web::get().to(events::events)),
                )
                .service(
                    game_resource!("/board.svg", "GET, HEAD", Some(Class::Read))
                        .route(get_or_head().to(boards::game_board)),
                )
                .service(
                    game_resource!("/analysis", "POST", None)
                        .route(web::post().to(analysis::analyse_game)),
                )
                .default_service(web::to(not_found)),
        )
        .service(
            resource("/v1/board.svg", "GET, HEAD", Some(Class::Read))
                .route(get_or_head().to(boards::position_board)),
        )
        .service(
            resource("/v1/analysis", "POST", None)
                .route(web::post().to(analysis::analyse_position)),
        )
        .service(resource("/healthz/live", "GET, HEAD", None).route(get_or_head().to(health::live)))
        .service(
            resource("/healthz/ready", "GET, HEAD", None).route(get_or_head().to(health::ready)),
        )
        .service(resource("/metrics", "GET, HEAD", None).route(get_or_head().to(metrics::scrape)))
        .service(
            resource("/openapi.json", "GET, HEAD", None)
                .route(get_or_head().to(docs::openapi_json)),
        )
        .service(resource("/docs", "GET, HEAD", None).route(get_or_head().to(docs::page)))
        .service(resource("/docs/{file}", "GET, HEAD", None).route(get_or_head().to(docs::asset)))
        .service(resource("/problems", "GET, HEAD", None).route(get_or_head().to(problems::index)))
        .service(
            resource("/problems/{code}", "GET, HEAD", None)
                .route(get_or_head().to(problems::problem)),
        )
        .service(resource("/", "GET, HEAD", None).route(get_or_head().to(page::page)))
        .service(resource("/web/{file}", "GET, HEAD", None).route(get_or_head().to(page::asset)))
        .default_service(web::to(not_found));
}

/// A route for `GET`, and for `HEAD`, which RFC 9110 (9.3.2) asks a server to answer as it
/// would `GET` without the body (actix sends the head only): uptime monitors and caches ask
/// with it. Not for the event stream, whose body is an hour of waiting that `HEAD` would make
/// the replica hold for nothing.
fn get_or_head() -> actix_web::Route {
    use actix_web::guard;
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// [`resource`] for a path within the scope `/v1/games/{id}`, labelled with its whole pattern.
macro_rules! game_resource {
    ($path:literal, $allow:expr, $class:expr) => {
        labelled($path, concat!("/v1/games/{id}", $path), $allow, $class)
    };
}
use game_resource;

/// A resource that answers other methods than `allow` with `405 method_not_allowed` and an
/// `Allow` header.
/// Requests of a resource with a `class` count against the caller's quota of that class.
/// Each resource also labels its requests with its pattern (for the metrics), so that the
/// request middleware need not route the request a second time to learn it.
fn resource(
    path: &'static str,
    allow: &'static str,
    class: Option<Class>,
) -> actix_web::Resource<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    labelled(path, path, allow, class)
}

/// [`resource`] at `path`, its requests labelled `label` (its whole pattern, for a resource
/// within a scope).
fn labelled(
    path: &'static str,
    label: &'static str,
    allow: &'static str,
    class: Option<Class>,
) -> actix_web::Resource<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    web::resource(path)
        .wrap(actix_web::middleware::from_fn(move |req, next| {
            quota::middleware(req, next, class)
        }))
        .default_service(web::to(move |req: HttpRequest| {
            method_not_allowed(req, allow)
        }))
        .wrap_fn(move |req, service| {
            use actix_web::HttpMessage;
            req.extensions_mut()
                .insert(crate::service::request_id::RouteLabel {
                    pattern: label,
                    allow,
                });
            actix_web::dev::Service::call(service, req)
        })
}

async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::new(
        ErrorCode::NotFound,
        format!("no route {} {}", req.method(), req.path()),
    ))
}

async fn method_not_allowed(req: HttpRequest, allow: &'static str) -> HttpResponse {
    let mut res = actix_web::ResponseError::error_response(&ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!(
            "{} is not allowed on {}; use {allow}",
            req.method(),
            req.path()
        ),
    ));
    res.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    res
}

fn json_error(err: actix_web::error::JsonPayloadError) -> ApiError {
    use actix_web::error::JsonPayloadError as E;
    match err {
        E::OverflowKnownLength { .. } | E::Overflow { .. } => {
            ApiError::new(ErrorCode::PayloadTooLarge, err.to_string())
        }
        E::Payload(ref e) if crate::service::body_timeout::is_timeout(e) => ApiError::new(
            ErrorCode::RequestTimeout,
            crate::service::body_timeout::TIMED_OUT,
        ),
        E::ContentType => ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "send the body as application/json",
        ),
        other => ApiError::new(ErrorCode::BadRequest, format!("invalid JSON body: {other}")),
    }
}

/// The game id of a path, or `404` for anything that is not a UUID.
fn game_id(raw: &str) -> Result<GameId, ApiError> {
    GameId::parse(raw).ok_or_else(|| ApiError::game_not_found(raw))
}

/// The seat token of `Authorization: Bearer <token>`.
fn bearer(req: &HttpRequest) -> Result<SeatToken, ApiError> {
    let header = req.headers().get(header::AUTHORIZATION).ok_or_else(|| {
        ApiError::new(
            ErrorCode::Unauthenticated,
            "send a seat token as Authorization: Bearer <token>",
        )
    })?;
    header
        .to_str()
        .ok()
        .and_then(SeatToken::from_authorization)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::Unauthenticated,
                "the Authorization header must be \"Bearer <64 hex digits>\"",
            )
        })
}

/// The seat `token` holds in `game`, or `403 wrong_seat`.
fn seat_of_token(game: &StoredGame, token: &SeatToken) -> Result<crate::api::Seat, ApiError> {
    game.seat_for(token)
        .ok_or_else(crate::service::games::wrong_seat)
}

/// The optional `Idempotency-Key` header.
fn idempotency_key(req: &HttpRequest) -> Result<Option<IdempotencyKey>, ApiError> {
    match req.headers().get("idempotency-key") {
        None => Ok(None),
        Some(value) => value
            .to_str()
            .map_err(|_| "Idempotency-Key must be ASCII".to_string())
            .and_then(IdempotencyKey::parse)
            .map(Some)
            .map_err(|e| ApiError::new(ErrorCode::BadRequest, e)),
    }
}

/// Whether the request's `If-None-Match` names `etag` (a quoted tag) or is `*`. The
/// comparison is weak, as RFC 9110 (13.1.2) asks of this header: a `W/` before a tag is
/// ignored, so a tag a proxy marked weak (nginx does when it compresses) still matches.
fn if_none_match(req: &HttpRequest, etag: &str) -> bool {
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
}

/// Plies (or events of a game's log) one read of the caller's quota pays for, in a request
/// whose work grows with the game's length: a record reads and decodes the log, a look back
/// at an earlier ply replays the game up to it.
const READ_PAGE: u64 = 512;

/// Charges the caller a read more for each whole [`READ_PAGE`] of the `work` (plies or
/// events) its request asks for, before the work is done, so that its read rate bounds the
/// work and not only its requests: the quota headers to add to the answer (the middleware
/// shows a policy charged twice once, at its later state), or the `429` to answer instead.
async fn charge_pages(
    state: &crate::service::state::AppState,
    req: &HttpRequest,
    work: u64,
) -> Result<Vec<(header::HeaderName, HeaderValue)>, HttpResponse> {
    let pages = work / READ_PAGE;
    if pages == 0 {
        return Ok(Vec::new());
    }
    quota::admit_also(state, req, Class::Read, pages)
        .await
        .map(|(_, headers)| headers)
}

/// `304 Not Modified` when the request's `If-None-Match` names this version.
fn not_modified(req: &HttpRequest, version: u64) -> Option<HttpResponse> {
    let etag = format!("\"{version}\"");
    if_none_match(req, &etag).then(|| {
        HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .finish()
    })
}

/// The answer of a move or a resignation: the game as the change left it (rendered at the
/// change's time, so a replayed answer is the first answer byte for byte), with its `ETag`.
///
/// A retry of a request that later changes followed is rebuilt by replaying the game up to it,
/// and costs a read more for each whole page of plies replayed, as any look back does.
async fn written_answer(
    state: &crate::service::state::AppState,
    req: &HttpRequest,
    written: crate::service::games::Written,
) -> Result<HttpResponse, ApiError> {
    use crate::service::games::Written;
    let answer = |game: &StoredGame| {
        let body = game.view_json(game.changed_at());
        json_with_etag(actix_web::http::StatusCode::OK, game.version(), body)
    };
    Ok(match written {
        Written::Applied(loaded) => answer(&loaded.game),
        Written::Replayed(game) => answer(&game),
        Written::LookBack(back) => {
            let quota_headers = match charge_pages(state, req, back.plies()).await {
                Ok(headers) => headers,
                Err(refusal) => return Ok(refusal),
            };
            let mut answer = answer(&back.game()?);
            for (name, value) in quota_headers {
                answer.headers_mut().insert(name, value);
            }
            answer
        }
    })
}

/// A JSON answer with the game's version as its `ETag`.
fn json_with_etag(status: actix_web::http::StatusCode, version: u64, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ))
        .insert_header((header::ETAG, format!("\"{version}\"")))
        .body(body)
}
