//! A deadline on reading a request's body: a client that trickles its body in (or stops
//! sending it) is cut off after `--request-timeout-secs` with `408 request_timeout`, instead of
//! holding a connection and a worker's attention for ever. (Reading the head has its own
//! deadline, actix's `client_request_timeout`, set to the same value.)

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use futures_util::Stream;

/// The message of the error a late body ends with (recognised by the JSON error handler).
pub const TIMED_OUT: &str = "the request body did not arrive in time";

/// A payload that fails once its deadline passes. Its timer is armed only when the body is
/// not all there yet: a small body usually arrives with the head, and then no timer is made
/// (nor registered with the runtime and taken out again) at all.
struct Deadline {
    inner: Payload,
    deadline: tokio::time::Instant,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    expired: bool,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = Pin::new(&mut self.inner).poll_next(cx) {
            return Poll::Ready(item);
        }
        let deadline = self.deadline;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.as_mut().poll(cx).is_ready() {
            self.expired = true;
            return Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                TIMED_OUT,
            )))));
        }
        Poll::Pending
    }
}

/// Middleware: the body must arrive within `timeout` of the request's start. A request that
/// declares no body (no `Content-Length` above 0, no `Transfer-Encoding`) has nothing to wait
/// for and goes through as it is.
pub async fn middleware(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
    timeout: Duration,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    use actix_web::http::header;
    let headers = req.headers();
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    if !has_body {
        return next.call(req).await;
    }
    let inner = req.take_payload();
    let deadline = Deadline {
        inner,
        deadline: tokio::time::Instant::now() + timeout,
        sleep: None,
        expired: false,
    };
    let boxed: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(deadline);
    req.set_payload(Payload::from(boxed));
    next.call(req).await
}

/// Whether a payload error is this deadline's.
pub fn is_timeout(err: &PayloadError) -> bool {
    matches!(err, PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut)
}
