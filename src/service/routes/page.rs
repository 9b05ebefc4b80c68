//! `GET /` and `/web/{file}`: the service's own web page to play, watch and analyse games.
//!
//! The page is plain HTML, CSS and JavaScript modules from `src/service/web/`, compiled into
//! the binary like Swagger UI, so it works with no network and no build step. It talks to the
//! service only through the public HTTP API, which makes it the reference integration as well.

use actix_web::http::header;
use actix_web::{HttpResponse, web};

use crate::service::error::{ApiError, ErrorCode};

/// Every file of the page, with its media type.
const FILES: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/app.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/api.js"),
    ),
    (
        "boards.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/boards.js"),
    ),
    (
        "clicks.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/clicks.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../web/style.css"),
    ),
];

/// The start of an answer that is one of the service's HTML pages, with the headers that keep
/// it out of other sites' frames: the page holds a player's seat tokens and a resign button,
/// and another site could show it in a frame of its own and have its visitor click there
/// (clickjacking). `frame-ancestors` is the standard, `X-Frame-Options` for browsers older
/// than it.
pub fn unframed_html() -> actix_web::HttpResponseBuilder {
    let mut answer = HttpResponse::Ok();
    answer
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, "frame-ancestors 'none'"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"));
    answer
}

pub async fn page() -> HttpResponse {
    unframed_html()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(super::slices::body(include_str!("../web/index.html")))
}

pub async fn asset(file: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let (_, kind, body) = FILES
        .iter()
        .find(|(name, _, _)| *name == file.as_str())
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no file /web/{file}")))?;
    // Revalidated on every load: the files change with the binary, and are small.
    Ok(HttpResponse::Ok()
        .content_type(*kind)
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(super::slices::body(*body)))
}
