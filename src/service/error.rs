//! Every error the API can answer with: a stable `code`, its HTTP status from one table, and
//! an `application/problem+json` body.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};

use crate::api::Problem;
use crate::rules::{IllegalMove, RulesError};

use super::store::StoreError;

/// The stable error codes. Adding one means adding its row to [`ErrorCode::TABLE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    BadRequest,
    BadNotation,
    BadPosition,
    BadVariant,
    EventIdAhead,
    Unauthenticated,
    BadApiKey,
    WrongSeat,
    GameNotFound,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    NotYourTurn,
    StaleVersion,
    GameOver,
    PayloadTooLarge,
    UnsupportedMediaType,
    IllegalMove,
    IdempotencyKeyReused,
    RateLimited,
    Busy,
    StoreUnavailable,
    StoreFull,
    Internal,
}

impl ErrorCode {
    /// The one table from code to name, status and title. `400` is for a request the
    /// document already rules out (bad JSON, a value outside its schema); a request the document
    /// allows whose content cannot be applied (a position that does not parse, a variant the game
    /// does not have, an illegal move) is `422` (RFC 9110 §15.5.21); one that conflicts with the
    /// game's present state is `409`.
    const TABLE: [(ErrorCode, &'static str, u16, &'static str); 24] = [
        (ErrorCode::BadRequest, "bad_request", 400, "Bad request"),
        (
            ErrorCode::BadNotation,
            "bad_notation",
            422,
            "Bad move notation",
        ),
        (ErrorCode::BadPosition, "bad_position", 422, "Bad position"),
        (
            ErrorCode::BadVariant,
            "bad_variant",
            422,
            "Variant not played in this game",
        ),
        (
            ErrorCode::EventIdAhead,
            "event_id_ahead",
            409,
            "Last-Event-ID beyond the game's version",
        ),
        (
            ErrorCode::Unauthenticated,
            "unauthenticated",
            401,
            "Unauthenticated",
        ),
        (
            ErrorCode::BadApiKey,
            "bad_api_key",
            401,
            "Unknown or malformed API key",
        ),
        (
            ErrorCode::WrongSeat,
            "wrong_seat",
            403,
            "Not a seat of this game",
        ),
        (
            ErrorCode::GameNotFound,
            "game_not_found",
            404,
            "Game not found",
        ),
        (ErrorCode::NotFound, "not_found", 404, "Not found"),
        (
            ErrorCode::MethodNotAllowed,
            "method_not_allowed",
            405,
            "Method not allowed",
        ),
        (
            ErrorCode::RequestTimeout,
            "request_timeout",
            408,
            "Request timeout",
        ),
        (
            ErrorCode::NotYourTurn,
            "not_your_turn",
            409,
            "Not your turn",
        ),
        (
            ErrorCode::StaleVersion,
            "stale_version",
            409,
            "Stale version",
        ),
        (ErrorCode::GameOver, "game_over", 409, "Game over"),
        (
            ErrorCode::PayloadTooLarge,
            "payload_too_large",
            413,
            "Payload too large",
        ),
        (
            ErrorCode::UnsupportedMediaType,
            "unsupported_media_type",
            415,
            "Unsupported media type",
        ),
        (ErrorCode::IllegalMove, "illegal_move", 422, "Illegal move"),
        (
            ErrorCode::IdempotencyKeyReused,
            "idempotency_key_reused",
            422,
            "Idempotency-Key reused with a different request",
        ),
        (ErrorCode::RateLimited, "rate_limited", 429, "Over quota"),
        (ErrorCode::Busy, "busy", 503, "Busy"),
        (
            ErrorCode::StoreUnavailable,
            "store_unavailable",
            503,
            "Store unavailable",
        ),
        (ErrorCode::StoreFull, "store_full", 503, "Store full"),
        (ErrorCode::Internal, "internal", 500, "Internal error"),
    ];

    fn row(self) -> (&'static str, u16, &'static str) {
        let (_, name, status, title) = Self::TABLE
            .iter()
            .find(|(code, ..)| *code == self)
            .expect("every code has a row");
        (name, *status, title)
    }

    pub fn as_str(self) -> &'static str {
        self.row().0
    }

    pub fn status(self) -> StatusCode {
        StatusCode::from_u16(self.row().1).expect("valid status")
    }

    pub fn title(self) -> &'static str {
        self.row().2
    }

    /// Every code with its status, for the documentation.
    pub fn all() -> impl Iterator<Item = (&'static str, u16)> {
        Self::TABLE
            .iter()
            .map(|(_, name, status, _)| (*name, *status))
    }
}

/// An error answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code:?}: {detail}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub detail: String,
    /// Seconds, for `503`s: when to try again.
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> ApiError {
        ApiError {
            code,
            detail: detail.into(),
            retry_after: None,
        }
    }

    pub fn game_not_found(id: &str) -> ApiError {
        ApiError::new(ErrorCode::GameNotFound, format!("no game with id {id:?}"))
    }

    pub fn problem(&self) -> Problem {
        Problem {
            kind: format!("https://pillarz.dev/problems/{}", self.code.as_str()),
            title: self.code.title().to_string(),
            status: self.code.status().as_u16(),
            code: self.code.as_str().to_string(),
            detail: self.detail.clone(),
            request_id: super::request_id::current(),
        }
    }
}

/// `Retry-After` of `store_full`: games expire continually, so a minute later there may be
/// room.
pub const STORE_FULL_RETRY_SECS: u32 = 60;

/// The header value of problem responses.
pub const PROBLEM_JSON: &str = "application/problem+json";

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code.status()
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        response.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON)));
        if let Some(secs) = self.retry_after {
            response.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        response.json(self.problem())
    }
}

impl From<RulesError> for ApiError {
    fn from(e: RulesError) -> ApiError {
        let code = match &e {
            RulesError::UnknownGame(_) | RulesError::UnknownVariant(_) => ErrorCode::BadRequest,
            RulesError::UnsupportedVariant { .. } => ErrorCode::BadVariant,
            RulesError::BadPosition { .. } => ErrorCode::BadPosition,
            RulesError::BadNotation { .. } => ErrorCode::BadNotation,
            RulesError::Illegal(IllegalMove::GameOver) => ErrorCode::GameOver,
            RulesError::Illegal(_) => ErrorCode::IllegalMove,
        };
        ApiError::new(code, e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Unavailable(detail) => {
                super::metrics::METRICS.store_errors.inc();
                ApiError {
                    code: ErrorCode::StoreUnavailable,
                    detail: format!("the game store is unavailable: {detail}"),
                    retry_after: Some(1),
                }
            }
            StoreError::Full(detail) => ApiError {
                code: ErrorCode::StoreFull,
                detail: format!("no room for a new game now: {detail}; try again later"),
                retry_after: Some(STORE_FULL_RETRY_SECS),
            },
            StoreError::Corrupt(detail) => {
                tracing::error!(%detail, "corrupt record in the store");
                ApiError::new(ErrorCode::Internal, "a stored game could not be read")
            }
        }
    }
}
