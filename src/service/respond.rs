//! How an [`ApiError`] becomes an HTTP answer: `application/problem+json` with the request's
//! id and a `Retry-After` where the error has one. This is where an error's cost to the
//! operator is paid, once per answer: the store-failure counter and the log line of a corrupt
//! record (the error values themselves stay free of side effects).

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};

use super::error::{ApiError, Cause, PROBLEM_JSON};
use super::metrics::METRICS;
use super::request_id;

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code.status()
    }

    fn error_response(&self) -> HttpResponse {
        match &self.cause {
            Some(Cause::StoreUnavailable | Cause::StoreFull) => METRICS.store_errors.inc(),
            Some(Cause::StoreCorrupt(detail)) => {
                tracing::error!(%detail, "corrupt record in the store");
            }
            None => {}
        }
        let mut response = HttpResponse::build(self.status_code());
        response.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON)));
        if let Some(secs) = self.retry_after {
            response.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        response.json(self.problem(request_id::current()))
    }
}
