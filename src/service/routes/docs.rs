//! `GET /openapi.json` and the browsable docs at `/docs`: Swagger UI, vendored from the npm
//! registry and compiled into the binary, so the page works with no network at all.

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use utoipa::OpenApi;

use crate::api;
use crate::service::error::{ApiError, ErrorCode};

/// The OpenAPI document, generated from the handlers and the DTOs.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "pillarz",
        description = "A stateless game service for pillarz, Pilastri, Pyrga and Alcazar.\n\n\
Create a game, keep the seat tokens from the answer, and send moves with \
`Authorization: Bearer <token>`. Moves and positions use the notation of each game's rules \
(see `GET /v1/catalog`); moves are accepted in any case and with spaces, and always answered \
in canonical form.\n\n\
Every error is `application/problem+json` with a stable `code`: `bad_request` (400), \
`bad_notation` (400), `bad_position` (400), `unauthenticated` (401), `wrong_seat` (403), \
`game_not_found` (404), `not_found` (404), `method_not_allowed` (405), `not_your_turn` (409), \
`stale_version` (409), `game_over` (409), `payload_too_large` (413), \
`unsupported_media_type` (415), `illegal_move` (422), `internal` (500), \
`busy` (503, with `Retry-After`: the analysis pool is full), \
`store_unavailable` (503, with `Retry-After`).\n\n\
Clocks: a timed game's clock runs for the side to move from the moment the game is created; \
a player whose time is up loses (`timeout`) as soon as any request looks at the game.\n\n\
Computer opponents: create a game with `\"seats\": {\"p2\": {\"engine\": {\"level\": 1..8}}}` \
(either seat or both). The service plays the engine's moves itself, shortly after the other \
side moved; read the game (or its legal moves) to see them.",
        license(name = "MIT"),
    ),
    paths(
        super::catalog::catalog,
        super::games::create,
        super::games::get,
        super::moves::legal,
        super::moves::submit,
        super::resign::resign,
        super::clock::clock,
        super::events::events,
        super::boards::game_board,
        super::boards::position_board,
        super::analysis::analyse_position,
        super::analysis::analyse_game,
        super::health::live,
        super::health::ready,
    ),
    components(schemas(
        api::Seat, api::Status, api::GameResult, api::TerminationKind, api::TimeControl,
        api::CreateGame, api::ClockView, api::GameView, api::CreatedGame, api::SubmitMove,
        api::LegalMoves, api::Catalog, api::CatalogGame, api::CatalogVariant, api::CatalogSeat,
        api::TimeControlLimits, api::Problem, api::Health, api::SeatSpec, api::EngineSpec,
        api::AnalysisRequest, api::GameAnalysisRequest, api::AnalysisView, api::AnalysisLineView,
        crate::engine::Limit, crate::engine::Score,
    )),
    tags(
        (name = "games", description = "Games, moves and clocks"),
        (name = "analysis", description = "The engine's analysis of any position or game"),
        (name = "boards", description = "Pictures of positions, as SVG"),
        (name = "health", description = "Probes for orchestrators"),
    )
)]
pub struct ApiDoc;

impl ApiDoc {
    /// The document as committed in `openapi/openapi.json`.
    pub fn pretty_json() -> String {
        ApiDoc::openapi()
            .to_pretty_json()
            .expect("the OpenAPI document serializes")
            + "\n"
    }
}

pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(ApiDoc::pretty_json())
}

const PAGE: &str = r##"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>pillarz API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
  </script>
</body>
</html>
"##;

pub async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(PAGE)
}

pub async fn asset(file: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let (body, kind): (&'static [u8], &str) = match file.as_str() {
        "swagger-ui-bundle.js" => (
            include_bytes!("../vendor/swagger-ui/swagger-ui-bundle.js"),
            "text/javascript; charset=utf-8",
        ),
        "swagger-ui.css" => (
            include_bytes!("../vendor/swagger-ui/swagger-ui.css"),
            "text/css; charset=utf-8",
        ),
        other => {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no file /docs/{other}"),
            ));
        }
    };
    Ok(HttpResponse::Ok()
        .content_type(kind)
        .insert_header((header::CACHE_CONTROL, "public, max-age=86400"))
        .body(body))
}
