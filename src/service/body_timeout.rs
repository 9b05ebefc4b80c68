//! A deadline on reading a request's body: a client that trickles its body in (or stops
//! sending it) is cut off after `--request-timeout-secs` with `408 request_timeout`, instead of
//! holding a connection and a worker's attention for ever. (Reading the head has its own
//! deadline, actix's `client_request_timeout`, set to the same value.)
//!
//! The deadline holds for bodies nobody reads, too. Once a handler has answered, what is left
//! of its request's body is read and dropped here, under the same deadline and at most
//! [`UNREAD_LIMIT`] bytes, so the connection can serve its next request; a body that does not
//! end in time or in size closes the connection after the answer. (Left to itself, actix
//! drains an unread chunked body with no deadline: a client sending a chunk now and then held
//! a connection open for ever on a route that takes no body.)

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::HttpMessage;
use actix_web::body::{BodySize, BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use futures_util::Stream;

/// The message of the error a late body ends with (recognised by the JSON error handler).
pub const TIMED_OUT: &str = "the request body did not arrive in time";

/// Most bytes of a body its handler left unread that are read (and dropped) to keep the
/// connection; past them it is closed instead.
pub const UNREAD_LIMIT: usize = 64 * 1024;

/// A payload that fails once its deadline passes. Its timer is armed only when the body is
/// not all there yet: a small body usually arrives with the head, and then no timer is made
/// (nor registered with the runtime and taken out again) at all.
struct Deadline {
    inner: Payload,
    deadline: tokio::time::Instant,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    expired: bool,
    /// Whether the body was read to its end.
    ended: bool,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired || self.ended {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = Pin::new(&mut self.inner).poll_next(cx) {
            self.ended = item.is_none();
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

/// The request's view of a [`Deadline`] the middleware keeps a hold of, to read what the
/// handler leaves.
struct Shared(Rc<RefCell<Deadline>>);

impl Stream for Shared {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_next(cx)
    }
}

/// An answer's body that holds its request's unread body until it is all written.
struct HoldingUnread {
    body: BoxBody,
    _unread: Rc<RefCell<Deadline>>,
}

impl MessageBody for HoldingUnread {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.body).poll_next(cx)
    }
}

/// Reads the rest of the body and drops it; whether it ended within the deadline and
/// [`UNREAD_LIMIT`] bytes.
async fn drain(body: &Rc<RefCell<Deadline>>) -> bool {
    let mut unread = 0;
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut *body.borrow_mut()).poll_next(cx));
        match next.await {
            None => return body.borrow().ended,
            Some(Ok(bytes)) => {
                unread += bytes.len();
                if unread > UNREAD_LIMIT {
                    return false;
                }
            }
            Some(Err(_)) => return false,
        }
    }
}

/// Whether a request with `headers` declares a body: a `Transfer-Encoding`, or a
/// `Content-Length` other than 0 (HTTP/1.1 has no other way to send one).
pub fn declares_body(headers: &actix_web::http::header::HeaderMap) -> bool {
    use actix_web::http::header;
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// Middleware: the body must arrive within `timeout` of the request's start, whether the
/// handler reads it or not. A request that declares no body (no `Content-Length` above 0, no
/// `Transfer-Encoding`) has nothing to wait for and goes through as it is.
pub async fn middleware(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    timeout: Duration,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, impl MessageBody>>, actix_web::Error> {
    if !declares_body(req.headers()) {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    let inner = req.take_payload();
    let body = Rc::new(RefCell::new(Deadline {
        inner,
        deadline: tokio::time::Instant::now() + timeout,
        sleep: None,
        expired: false,
        ended: false,
    }));
    let boxed: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> =
        Box::pin(Shared(body.clone()));
    req.set_payload(Payload::from(boxed));
    // A handler's or an extractor's error is an answer by now (actix turns it into one in the
    // route); an `Err` could come only from an inner middleware, and none of ours fails.
    let res = next.call(req).await?;
    if drain(&body).await {
        return Ok(res.map_into_left_body());
    }
    Ok(holding(res, body).map_into_right_body())
}

/// `res`, holding its request's `unread` body until it is written, says `Connection: close`,
/// and actix closes the connection after it: it does so after an answer to a request whose
/// body is still held and unread. (A body dropped unread is one actix goes on draining, for
/// as long as the client sends it.)
fn holding(
    mut res: ServiceResponse<impl MessageBody + 'static>,
    unread: Rc<RefCell<Deadline>>,
) -> ServiceResponse<HoldingUnread> {
    res.response_mut()
        .head_mut()
        .set_connection_type(ConnectionType::Close);
    res.map_body(|_, answer| HoldingUnread {
        body: BoxBody::new(answer),
        _unread: unread,
    })
}

/// Whether a payload error is this deadline's.
pub fn is_timeout(err: &PayloadError) -> bool {
    matches!(err, PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut)
}
