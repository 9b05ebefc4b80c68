//! `GET /openapi.json` and the browsable docs at `/docs`: Swagger UI, vendored from the npm
//! registry and compiled into the binary, so the page works with no network at all.

use std::sync::LazyLock;

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
        super::record::record,
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
        api::TimeControlLimits, api::AnalysisLimits, api::Problem, api::Health, api::SeatSpec, api::EngineSpec,
        api::AnalysisRequest, api::GameAnalysisRequest, api::AnalysisView, api::AnalysisLineView,
        api::LimitSchema, crate::engine::Score, api::GameEvent, api::StreamLine,
        api::GameRecord, api::RecordMove,
    )),
    modifiers(&Contract),
    tags(
        (name = "games", description = "Games, moves and clocks"),
        (name = "analysis", description = "The engine's analysis of any position or game"),
        (name = "boards", description = "Pictures of positions, as SVG"),
        (name = "health", description = "Probes for orchestrators"),
    )
)]
pub struct ApiDoc;

/// What every operation shares, added to the generated document in one place so no handler
/// can forget it: the seat-token security scheme, `405` with `Allow` on every path, the body
/// errors (`408`, `413`, `415`) on every operation that takes a body, and the list of error
/// codes, generated from the same table the server answers from.
struct Contract;

impl utoipa::Modify for Contract {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "seat_token",
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .description(Some(
                            "A seat token from the answer that created the game \
                             (64 hex digits): `Authorization: Bearer <token>`.",
                        ))
                        .build(),
                ),
            );
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "api_key",
                SecurityScheme::ApiKey(utoipa::openapi::security::ApiKey::Header(
                    utoipa::openapi::security::ApiKeyValue::with_description(
                        "X-Api-Key",
                        "Optional: an integrator's key (`pillarz keys create`), whose quotas \
                         replace those of the caller's address.",
                    ),
                )),
            );
        for (path, item) in doc.paths.paths.iter_mut() {
            let counted = path.starts_with("/v1/");
            let allow = [
                ("GET", item.get.is_some()),
                ("POST", item.post.is_some()),
                ("PUT", item.put.is_some()),
                ("DELETE", item.delete.is_some()),
                ("PATCH", item.patch.is_some()),
            ]
            .iter()
            .filter(|(_, present)| *present)
            .map(|(method, _)| *method)
            .collect::<Vec<_>>()
            .join(", ");
            for operation in [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.delete,
            ]
            .into_iter()
            .flatten()
            {
                if counted {
                    use utoipa::openapi::security::SecurityRequirement;
                    let seat = operation.security.take().filter(|s| !s.is_empty());
                    operation.security = Some(match seat {
                        Some(_) => vec![
                            SecurityRequirement::new("seat_token", Vec::<String>::new()),
                            SecurityRequirement::new("seat_token", Vec::<String>::new())
                                .add("api_key", Vec::<String>::new()),
                        ],
                        None => vec![
                            SecurityRequirement::default(),
                            SecurityRequirement::new("api_key", Vec::<String>::new()),
                        ],
                    });
                }
                let responses = &mut operation.responses.responses;
                if counted {
                    responses.entry("429".into()).or_insert_with(|| {
                        problem(
                            "`rate_limited`: over the caller's quota; `Retry-After` says when \
                             to try again, `RateLimit` and `RateLimit-Policy` (also on \
                             successful answers) how much is left",
                            None,
                        )
                    });
                    responses.entry("401".into()).or_insert_with(|| {
                        problem("`bad_api_key`: an unknown or malformed `X-Api-Key`", None)
                    });
                }
                responses.entry("405".into()).or_insert_with(|| {
                    problem(
                        "`method_not_allowed`; `Allow` lists the methods of this path",
                        Some(&allow),
                    )
                });
                if operation.request_body.is_some() {
                    for (status, text) in [
                        ("408", "`request_timeout`: the body did not arrive in time"),
                        ("413", "`payload_too_large`: the body is over the limit"),
                        (
                            "415",
                            "`unsupported_media_type`: send the body as `application/json`",
                        ),
                    ] {
                        responses
                            .entry(status.into())
                            .or_insert_with(|| problem(text, None));
                    }
                }
            }
        }
        stream_contents(doc);
        headers_are_never_null(doc);
        creation_links(doc);
        let mut codes = String::from(
            "\n\nEvery error is `application/problem+json` with a stable `code`; its `type` is \
             `/problems/<code>` (relative to the service), and `GET /problems/<code>` \
             explains it. The codes and their statuses:\n",
        );
        for (code, status) in ErrorCode::all() {
            codes.push_str(&format!("\n- `{code}` ({status})"));
        }
        doc.info.description = Some(doc.info.description.take().unwrap_or_default() + &codes);
    }
}

/// The events stream's two media types, each item exactly as sent: an SSE event is `event:
/// game` with a game view as `data`, or `event: change` with a game event (heartbeats are
/// comments, not events); an NDJSON line is a `StreamLine`.
fn stream_contents(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
    use utoipa::openapi::{ContentBuilder, Ref};
    let Some(ok) = doc
        .paths
        .paths
        .get_mut("/v1/games/{id}/events")
        .and_then(|item| item.get.as_mut())
        .and_then(|op| op.responses.responses.get_mut("200"))
    else {
        return;
    };
    let utoipa::openapi::RefOr::T(ok) = ok else {
        return;
    };
    let event = |name: &str, payload: &str, text: &str| {
        let mut data = ObjectBuilder::new()
            .schema_type(Type::String)
            .content_media_type("application/json")
            .description(Some(format!("A `{payload}`, as JSON")))
            .build();
        data.extensions.get_or_insert_with(Default::default).insert(
            "contentSchema".into(),
            serde_json::to_value(Ref::from_schema_name(payload)).expect("a ref serializes"),
        );
        ObjectBuilder::new()
            .description(Some(text))
            .property(
                "event",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some([name])),
            )
            .required("event")
            .property(
                "id",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^[0-9]+$"))
                    .description(Some("The game's version after the event")),
            )
            .required("id")
            .property("data", data)
            .required("data")
    };
    let sse = OneOfBuilder::new()
        .description(Some(
            "One Server-Sent Event; heartbeats are comments (`: heartbeat`)",
        ))
        .item(event(
            "game",
            "GameView",
            "The whole game: first, or after a gap the log could not fill",
        ))
        .item(event("change", "GameEvent", "One change of the game"));
    ok.content.clear();
    ok.content.insert(
        "text/event-stream".into(),
        ContentBuilder::new().schema(Some(sse)).build(),
    );
    ok.content.insert(
        "application/x-ndjson".into(),
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("StreamLine")))
            .build(),
    );
}

/// A header is sent or not, never `null`: the `Option`s of header parameters only make them
/// optional.
fn headers_are_never_null(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::schema::{Schema, SchemaType, Type};
    for item in doc.paths.paths.values_mut() {
        for operation in [&mut item.get, &mut item.post].into_iter().flatten() {
            for parameter in operation.parameters.iter_mut().flatten() {
                if parameter.parameter_in != ParameterIn::Header {
                    continue;
                }
                if let Some(utoipa::openapi::RefOr::T(Schema::Object(object))) =
                    parameter.schema.as_mut()
                    && let SchemaType::Array(types) = &object.schema_type
                {
                    let types: Vec<Type> = types
                        .iter()
                        .filter(|t| **t != Type::Null)
                        .cloned()
                        .collect();
                    object.schema_type = match types.as_slice() {
                        [one] => SchemaType::Type(one.clone()),
                        _ => SchemaType::Array(types),
                    };
                }
            }
        }
    }
}

/// OpenAPI links from a created game to what can be done with it, so that a client (or a
/// fuzzer's stateful phase) can follow them: the game's id from the answer, and the seat
/// tokens for the operations that need one.
fn creation_links(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::link::LinkBuilder;
    let targets: Vec<(String, String, bool)> =
        doc.paths
            .paths
            .iter()
            .filter(|(path, _)| path.starts_with("/v1/games/{id}"))
            .flat_map(|(_, item)| [&item.get, &item.post].into_iter().flatten())
            .filter_map(|op| {
                let seat =
                    op.security.iter().flatten().any(|s| {
                        serde_json::to_value(s).is_ok_and(|v| v.get("seat_token").is_some())
                    });
                op.operation_id.clone().map(|id| (id.clone(), id, seat))
            })
            .collect();
    let Some(created) = doc
        .paths
        .paths
        .get_mut("/v1/games")
        .and_then(|item| item.post.as_mut())
        .and_then(|op| op.responses.responses.get_mut("201"))
    else {
        return;
    };
    let utoipa::openapi::RefOr::T(created) = created else {
        return;
    };
    for (name, operation_id, seat) in targets {
        // utoipa 5.5 serializes `Link::operation_id` as `operation_id`, not the `operationId`
        // of the specification, so the id goes in as an extension under its proper name.
        let link = || {
            LinkBuilder::new()
                .extensions(Some(
                    [("operationId", serde_json::json!(operation_id))]
                        .into_iter()
                        .collect(),
                ))
                .parameter("path.id", "$response.body#/game/id")
        };
        if seat {
            for (label, seat) in [("P1", "p1"), ("P2", "p2")] {
                created.links.insert(
                    format!("{name}{label}"),
                    link()
                        .parameter(
                            "header.Authorization",
                            format!("Bearer {{$response.body#/tokens/{seat}}}"),
                        )
                        .description(format!("`{operation_id}` as seat `{seat}`, with its token"))
                        .build()
                        .into(),
                );
            }
        } else {
            created.links.insert(
                name,
                link()
                    .description(format!("`{operation_id}` of the new game"))
                    .build()
                    .into(),
            );
        }
    }
}

/// A problem+json response, with an `Allow` header when `allow` is given.
fn problem(
    description: &str,
    allow: Option<&str>,
) -> utoipa::openapi::RefOr<utoipa::openapi::response::Response> {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder, header::HeaderBuilder};
    let mut response = ResponseBuilder::new().description(description).content(
        crate::service::error::PROBLEM_JSON,
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("Problem")))
            .build(),
    );
    if let Some(allow) = allow {
        response = response.header(
            "Allow",
            HeaderBuilder::new()
                .schema(
                    utoipa::openapi::ObjectBuilder::new()
                        .schema_type(utoipa::openapi::schema::Type::String),
                )
                .description(Some(format!("`{allow}`")))
                .build(),
        );
    }
    response.build().into()
}

impl ApiDoc {
    /// The document as committed in `openapi/openapi.json`.
    pub fn pretty_json() -> String {
        ApiDoc::openapi()
            .to_pretty_json()
            .expect("the OpenAPI document serializes")
            + "\n"
    }
}

/// The document, built once per process: building and printing it takes milliseconds, and
/// the route is open to anyone, uncounted.
fn served_document() -> web::Bytes {
    static DOCUMENT: LazyLock<web::Bytes> = LazyLock::new(|| ApiDoc::pretty_json().into());
    DOCUMENT.clone()
}

pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(super::slices::body(served_document()))
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
    // Its "Try it out" sends requests as the visitor: kept out of other sites' frames too.
    super::page::unframed_html().body(PAGE)
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
        .body(super::slices::body(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_built_once_and_is_the_one_committed() {
        let first = served_document();
        assert_eq!(
            first.as_ptr(),
            served_document().as_ptr(),
            "one document, shared by every answer"
        );
        assert_eq!(first, ApiDoc::pretty_json().as_bytes());
    }
}
