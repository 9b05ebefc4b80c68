//! `GET /problems` and `GET /problems/{code}`: what each error code means, so that a
//! problem's `type` (`/problems/<code>`) resolves to an explanation on the service itself.
//! Generated from the same table the errors are answered from.

use actix_web::{HttpResponse, web};

use crate::service::error::{ApiError, ErrorCode};

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn page(title: &str, body: &str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header(("cache-control", "public, max-age=86400"))
        .body(format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width\">\
             <title>{}</title></head><body>\n{body}\n</body></html>\n",
            escape(title)
        ))
}

/// Every error code, with its status and title.
pub async fn index() -> HttpResponse {
    let mut rows = String::new();
    for code in ErrorCode::ALL {
        rows.push_str(&format!(
            "<li><a href=\"/problems/{name}\"><code>{name}</code></a> ({status}): {title}</li>\n",
            name = code.as_str(),
            status = code.status().as_u16(),
            title = escape(code.title())
        ));
    }
    page(
        "pillarz problems",
        &format!(
            "<h1>Problems</h1>\n<p>Every error of the pillarz API is \
             <code>application/problem+json</code> with one of these stable codes.</p>\n\
             <ul>\n{rows}</ul>"
        ),
    )
}

/// One error code: its status, title and what to do about it.
pub async fn problem(code: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let code = ErrorCode::from_name(&code).ok_or_else(|| {
        ApiError::new(
            ErrorCode::NotFound,
            format!("no problem code {:?} (see /problems)", code.as_str()),
        )
    })?;
    Ok(page(
        &format!("{} — pillarz", code.as_str()),
        &format!(
            "<h1><code>{name}</code>: {title}</h1>\n<p>HTTP status {status}.</p>\n<p>{text}</p>\n\
             <p><a href=\"/problems\">All problems</a> · <a href=\"/docs\">API docs</a></p>",
            name = code.as_str(),
            title = escape(code.title()),
            status = code.status().as_u16(),
            text = escape(code.explanation())
        ),
    ))
}
