//! Cross-origin access for web pages on other origins.
//!
//! The API uses no cookies (a seat is a bearer token a page holds), so answering any origin
//! exposes nothing a page could not already do from a server; operators who want fewer
//! callers list the origins they allow. Preflights are answered before routing, so they cost
//! no store access; the exposed headers are the ones an integrator reads (`ETag` for
//! conditional reads, `Location` of a new game, `Retry-After` and `RateLimit` when refused,
//! `X-Request-Id` to quote in a bug report).

use actix_cors::{Cors, CorsError};
use actix_web::ResponseError;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{Method, header};
use actix_web::middleware::Next;

use super::error::{ApiError, ErrorCode};

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// Every origin (`*`).
    Any,
    /// Only these, each `scheme://host[:port]` exactly as a browser sends it.
    Only(Vec<String>),
}

impl AllowedOrigins {
    /// Parses `*` or a comma-separated list of origins.
    pub fn parse(raw: &str) -> Result<AllowedOrigins, String> {
        let raw = raw.trim();
        if raw == "*" {
            return Ok(AllowedOrigins::Any);
        }
        let mut origins = Vec::new();
        for origin in raw.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let valid = ["http://", "https://"].iter().any(|scheme| {
                origin.strip_prefix(scheme).is_some_and(|host| {
                    !host.is_empty() && !host.contains('/') && !host.contains(char::is_whitespace)
                })
            });
            if !valid {
                return Err(format!(
                    "--cors-origins {origin:?}: an origin is scheme://host[:port], without a path"
                ));
            }
            origins.push(origin.to_string());
        }
        Ok(AllowedOrigins::Only(origins))
    }
}

/// Headers a cross-origin page may read on an answer.
const EXPOSED: [&str; 9] = [
    "etag",
    "location",
    "retry-after",
    "ratelimit",
    "ratelimit-policy",
    "x-request-id",
    "allow",
    "content-type",
    "accept-encoding",
];

/// The middleware for `origins`.
pub fn middleware(origins: &AllowedOrigins) -> Cors {
    let mut cors = Cors::default()
        .allowed_methods([Method::GET, Method::POST, Method::HEAD])
        .allowed_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            header::IF_NONE_MATCH,
            header::HeaderName::from_static("idempotency-key"),
            header::HeaderName::from_static("last-event-id"),
            header::HeaderName::from_static("x-api-key"),
        ])
        .expose_headers(EXPOSED)
        .max_age(3600);
    match origins {
        AllowedOrigins::Any => cors = cors.send_wildcard().allow_any_origin(),
        AllowedOrigins::Only(list) => {
            for origin in list {
                cors = cors.allowed_origin(origin);
            }
        }
    }
    cors
}

/// Middleware around [`middleware`]: its refusals (an origin, a method or a header it does not
/// allow) are `400 bad_request` problems like every other bad request, not its plain text.
pub async fn problems(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let res = next.call(req).await?;
    let Some(refusal) = res
        .response()
        .error()
        .and_then(|e| e.as_error::<CorsError>())
    else {
        return Ok(res.map_into_left_body());
    };
    let problem = ApiError::new(
        ErrorCode::BadRequest,
        format!("cross-origin request refused: {refusal}"),
    )
    .error_response();
    Ok(res.into_response(problem).map_into_right_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_as_a_list_or_any() {
        assert_eq!(AllowedOrigins::parse("*"), Ok(AllowedOrigins::Any));
        assert_eq!(
            AllowedOrigins::parse("http://a.test, https://b.test:8443"),
            Ok(AllowedOrigins::Only(vec![
                "http://a.test".into(),
                "https://b.test:8443".into()
            ]))
        );
        assert!(AllowedOrigins::parse("a.test").is_err());
        assert!(AllowedOrigins::parse("http://a.test/path").is_err());
        assert!(AllowedOrigins::parse("ftp://a.test").is_err());
    }
}
