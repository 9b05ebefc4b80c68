//! Request bodies are taken as they are sent, never inflated: a request with a body whose
//! `Content-Encoding` is anything but `identity` gets `415 unsupported_media_type` (with
//! `Accept-Encoding: identity`, RFC 9110 §15.5.16) before any route reads it. A request
//! without a body has nothing to inflate, so a stray `Content-Encoding` on it is ignored.
//!
//! The body limit counts bytes as they arrive, but an inflater turns each arriving chunk into
//! all it stands for at once: 4 KiB of zstd stood for 128 MiB of spaces and made a replica
//! hold 260 MiB more, half a pod's memory limit. No client of this API needs to compress a
//! request of a few hundred bytes, so the service builds without actix's decoders and refuses
//! the header here, where the refusal is a problem like every other.

use actix_web::ResponseError;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::middleware::Next;

use super::body_timeout::declares_body;
use super::error::{ApiError, ErrorCode};

/// The codings of `headers`' `Content-Encoding` other than `identity`, if any.
fn refused_coding(headers: &HeaderMap) -> Option<String> {
    let codings: Vec<&str> = headers
        .get_all(header::CONTENT_ENCODING)
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .map(str::trim)
        .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"))
        .collect();
    (!codings.is_empty()).then(|| codings.join(", "))
}

/// Middleware: refuses a body sent with a content coding.
pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let refused = declares_body(req.headers())
        .then(|| refused_coding(req.headers()))
        .flatten();
    let Some(coding) = refused else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let error = ApiError::new(
        ErrorCode::UnsupportedMediaType,
        format!("bodies are taken uncompressed, not with Content-Encoding {coding:?}"),
    );
    let mut response = error.error_response();
    response.headers_mut().insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    Ok(req.into_response(response).map_into_right_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::CONTENT_ENCODING, HeaderValue::from_str(v).unwrap());
        }
        headers
    }

    #[test]
    fn only_identity_is_taken() {
        assert_eq!(refused_coding(&with(&[])), None);
        assert_eq!(refused_coding(&with(&["identity"])), None);
        assert_eq!(refused_coding(&with(&["Identity, identity"])), None);
        assert_eq!(refused_coding(&with(&["gzip"])).as_deref(), Some("gzip"));
        assert_eq!(
            refused_coding(&with(&["identity", "zstd, br"])).as_deref(),
            Some("zstd, br")
        );
    }
}
