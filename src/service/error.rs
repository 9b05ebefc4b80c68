//! Every error the API can answer with: a stable `code`, its HTTP status from one table, and
//! an `application/problem+json` body.
//!
//! Errors are plain values: making or converting one touches no metric, log or request. What
//! an error costs the operator (a counter, a log line) is paid once, where the answer is
//! produced, in `service::respond`.

use actix_web::http::StatusCode;

use crate::api::Problem;
use crate::rules::{IllegalMove, RulesError, VariantError};

use super::store::StoreError;

/// The stable error codes. Adding one means adding its row to [`ErrorCode::row`] (the compiler
/// insists) and to [`ErrorCode::ALL`] (a test insists).
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
    ClientClosedRequest,
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
    /// Every code, for the documentation and the `/problems` pages.
    pub const ALL: [ErrorCode; 25] = [
        ErrorCode::BadRequest,
        ErrorCode::BadNotation,
        ErrorCode::BadPosition,
        ErrorCode::BadVariant,
        ErrorCode::EventIdAhead,
        ErrorCode::Unauthenticated,
        ErrorCode::BadApiKey,
        ErrorCode::WrongSeat,
        ErrorCode::GameNotFound,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::RequestTimeout,
        ErrorCode::ClientClosedRequest,
        ErrorCode::NotYourTurn,
        ErrorCode::StaleVersion,
        ErrorCode::GameOver,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::IllegalMove,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::RateLimited,
        ErrorCode::Busy,
        ErrorCode::StoreUnavailable,
        ErrorCode::StoreFull,
        ErrorCode::Internal,
    ];

    /// The one table: name, status, title and what a client should do. A `match`, so a new
    /// code without its row does not compile. `400` is for a request the document already rules
    /// out (bad JSON, a value outside its schema); a request the document allows whose content
    /// cannot be applied (a position that does not parse, a variant the game does not have, an
    /// illegal move) is `422` (RFC 9110 §15.5.21); one at odds with the game's present state is
    /// `409`.
    const fn row(self) -> (&'static str, u16, &'static str, &'static str) {
        use ErrorCode as E;
        match self {
            E::BadRequest => (
                "bad_request",
                400,
                "Bad request",
                "The request is malformed: bad JSON, an unknown field, a value out of range, a bad header. The detail names the part; fix it and send again.",
            ),
            E::BadNotation => (
                "bad_notation",
                422,
                "Bad move notation",
                "The move is not written in the game's notation (see GET /v1/catalog for each game's move notation).",
            ),
            E::BadPosition => (
                "bad_position",
                422,
                "Bad position",
                "The position is not a valid position of the game in its notation, or breaks its rules.",
            ),
            E::BadVariant => (
                "bad_variant",
                422,
                "Variant not played in this game",
                "The game does not have this variant (see GET /v1/catalog for each game's variants).",
            ),
            E::EventIdAhead => (
                "event_id_ahead",
                409,
                "Last-Event-ID beyond the game's version",
                "Last-Event-ID names a version the game has not reached: send the last version you received, or none.",
            ),
            E::Unauthenticated => (
                "unauthenticated",
                401,
                "Unauthenticated",
                "This operation needs a seat token: Authorization: Bearer <token>, from the answer that created the game.",
            ),
            E::BadApiKey => (
                "bad_api_key",
                401,
                "Unknown or malformed API key",
                "X-Api-Key is not a key this service knows (or it was revoked). Send a valid key, or none to be counted by your address.",
            ),
            E::WrongSeat => (
                "wrong_seat",
                403,
                "Not a seat of this game",
                "The seat token belongs to no seat of this game.",
            ),
            E::GameNotFound => (
                "game_not_found",
                404,
                "Game not found",
                "No game has this id: it never existed, or it expired (unfinished games after their idle time, finished ones after their retention).",
            ),
            E::NotFound => (
                "not_found",
                404,
                "Not found",
                "Nothing is at this path (or the game has no such part, e.g. the clock of an untimed game).",
            ),
            E::MethodNotAllowed => (
                "method_not_allowed",
                405,
                "Method not allowed",
                "This path does not take this method; the Allow header lists the ones it takes.",
            ),
            E::RequestTimeout => (
                "request_timeout",
                408,
                "Request timeout",
                "The request's body did not arrive in time. Send it again, all at once.",
            ),
            E::ClientClosedRequest => (
                "client_closed_request",
                499,
                "Client closed request",
                "The client closed its side of the connection before the answer was ready, and the work it asked for was stopped. It is sent for the logs and metrics (nginx's 499); a client that closed only its sending side may still read it.",
            ),
            E::NotYourTurn => (
                "not_your_turn",
                409,
                "Not your turn",
                "The other seat is to move. Wait for its move (follow the events stream) and try again.",
            ),
            E::StaleVersion => (
                "stale_version",
                409,
                "Stale version",
                "expected_ply does not match the game any more: someone moved first. Read the game and decide again.",
            ),
            E::GameOver => (
                "game_over",
                409,
                "Game over",
                "The game is finished; nothing can be played or resigned any more.",
            ),
            E::PayloadTooLarge => (
                "payload_too_large",
                413,
                "Payload too large",
                "The body is larger than the service accepts (--body-limit).",
            ),
            E::UnsupportedMediaType => (
                "unsupported_media_type",
                415,
                "Unsupported media type",
                "Send the body as JSON, with Content-Type: application/json, uncompressed (no Content-Encoding but identity).",
            ),
            E::IllegalMove => (
                "illegal_move",
                422,
                "Illegal move",
                "The move is well written but not legal in this position; GET legal-moves lists the legal ones.",
            ),
            E::IdempotencyKeyReused => (
                "idempotency_key_reused",
                422,
                "Idempotency-Key reused with a different request",
                "This Idempotency-Key was used by this seat for a different request. Use a new key for a new request.",
            ),
            E::RateLimited => (
                "rate_limited",
                429,
                "Over quota",
                "The caller (its API key, or its address) is over a quota. Wait for Retry-After seconds; RateLimit and RateLimit-Policy say how much is left.",
            ),
            E::Busy => (
                "busy",
                503,
                "Busy",
                "The service is at its capacity for this kind of work (analysis pool, event streams). Try again after Retry-After seconds.",
            ),
            E::StoreUnavailable => (
                "store_unavailable",
                503,
                "Store unavailable",
                "The game store did not answer in time, so a write may or may not have been made. Retry after Retry-After seconds: a move or resignation with the same Idempotency-Key is made at most once (or read the game to see); a game created may exist without its id having reached you.",
            ),
            E::StoreFull => (
                "store_full",
                503,
                "Store full",
                "The store holds all it may (the embedded store its --memory-max-games or --memory-max-mb, Redis its maxmemory) and wrote nothing; games expire continually, so try again after Retry-After.",
            ),
            E::Internal => (
                "internal",
                500,
                "Internal error",
                "A fault of the service (for example an unreadable stored game). Quote the request id when you report it.",
            ),
        }
    }

    pub const fn as_str(self) -> &'static str {
        self.row().0
    }

    pub fn status(self) -> StatusCode {
        StatusCode::from_u16(self.row().1).expect("valid status")
    }

    pub const fn title(self) -> &'static str {
        self.row().2
    }

    /// What the code means and what a client should do about it.
    pub const fn explanation(self) -> &'static str {
        self.row().3
    }

    /// The code with this name.
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        Self::ALL.into_iter().find(|code| code.as_str() == name)
    }

    /// Every code with its status, for the documentation.
    pub fn all() -> impl Iterator<Item = (&'static str, u16)> {
        Self::ALL
            .into_iter()
            .map(|code| (code.as_str(), code.row().1))
    }
}

/// An error answer. Its `Display` (for logs) names the cause, which the answer never shows.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code:?}: {detail}{}", cause.as_ref().map(|c| format!(" ({c})")).unwrap_or_default())]
pub struct ApiError {
    pub code: ErrorCode,
    pub detail: String,
    /// Seconds, for `503`s: when to try again.
    pub retry_after: Option<u32>,
    /// What failed underneath, for the operator (never shown to the client).
    pub cause: Option<Cause>,
}

/// A failure underneath an error answer that the operator is told about: counted or logged
/// when the answer is produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Cause {
    /// The store did not answer (`store_errors_total`).
    #[error("the store is unavailable")]
    StoreUnavailable,
    /// The store had no room for a write (`store_errors_total`).
    #[error("the store is full")]
    StoreFull,
    /// The store holds something unreadable (logged, with what and where).
    #[error("corrupt record in the store: {0}")]
    StoreCorrupt(String),
}

impl ApiError {
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> ApiError {
        ApiError {
            code,
            detail: detail.into(),
            retry_after: None,
            cause: None,
        }
    }

    pub fn game_not_found(id: &str) -> ApiError {
        ApiError::new(ErrorCode::GameNotFound, format!("no game with id {id:?}"))
    }

    /// The body of the answer to the request with id `request_id`.
    pub fn problem(&self, request_id: Option<String>) -> Problem {
        Problem {
            kind: format!("/problems/{}", self.code.as_str()),
            title: self.code.title().to_string(),
            status: self.code.status().as_u16(),
            code: self.code.as_str().to_string(),
            detail: self.detail.clone(),
            request_id,
        }
    }
}

/// `Retry-After` of `store_full`: games expire continually, so a minute later there may be
/// room.
pub const STORE_FULL_RETRY_SECS: u32 = 60;

/// The header value of problem responses.
pub const PROBLEM_JSON: &str = "application/problem+json";

impl From<RulesError> for ApiError {
    fn from(e: RulesError) -> ApiError {
        let code = match &e {
            RulesError::UnknownGame(_) | RulesError::Variant(VariantError::Unknown(_)) => {
                ErrorCode::BadRequest
            }
            RulesError::Variant(VariantError::Unsupported { .. }) => ErrorCode::BadVariant,
            RulesError::BadPosition { .. } => ErrorCode::BadPosition,
            RulesError::BadNotation { .. } => ErrorCode::BadNotation,
            RulesError::Illegal(IllegalMove::GameOver) => ErrorCode::GameOver,
            RulesError::Illegal(_) => ErrorCode::IllegalMove,
        };
        ApiError::new(code, e.to_string())
    }
}

impl From<VariantError> for ApiError {
    fn from(e: VariantError) -> ApiError {
        RulesError::from(e).into()
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Unavailable(detail) => ApiError {
                code: ErrorCode::StoreUnavailable,
                detail: format!("the game store is unavailable: {detail}"),
                retry_after: Some(1),
                cause: Some(Cause::StoreUnavailable),
            },
            StoreError::Full(detail) => ApiError {
                code: ErrorCode::StoreFull,
                detail: format!("the store is full: {detail}; try again later"),
                retry_after: Some(STORE_FULL_RETRY_SECS),
                cause: Some(Cause::StoreFull),
            },
            StoreError::Corrupt(detail) => ApiError {
                cause: Some(Cause::StoreCorrupt(detail)),
                ..ApiError::new(ErrorCode::Internal, "a stored game could not be read")
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once_with_a_distinct_name() {
        let mut names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        // Each code's row is reachable by its name: a code missing from ALL would have a row
        // (the match insists) that no name finds.
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
        }
    }
}
