//! An answer's body that holds something for as long as the answer is being sent.
//!
//! actix polls a body until its end as the connection takes it (its write buffer below
//! 32 KiB), and drops it with its connection: a body is where a request's life really ends,
//! well after its handler returned. What must last as long (a caller's place among its
//! requests in flight, the request's count on its connection) is held by the body and let go
//! at its end, when it fails, or when it is dropped. (`body_timeout` keeps its own body: what
//! it holds must last until the body is dropped, not only until its end.)

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::web::Bytes;

/// A body and what it holds until it is done.
pub struct Holding<T> {
    body: BoxBody,
    held: Option<T>,
}

impl<T> Holding<T> {
    pub fn new(body: impl MessageBody + 'static, held: Option<T>) -> Holding<T> {
        Holding {
            body: body.boxed(),
            held,
        }
    }

    /// Lets go of what it holds now.
    pub fn release(&mut self) {
        self.held = None;
    }
}

impl<T: Unpin> MessageBody for Holding<T> {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let next = Pin::new(&mut self.body).poll_next(cx);
        if matches!(next, Poll::Ready(None | Some(Err(_)))) {
            self.held = None;
        }
        next
    }
}

/// The next chunk of `body`, as actix would poll it (for the tests of what a body holds).
#[cfg(test)]
pub async fn next_chunk<T: Unpin>(body: &mut Holding<T>) -> Option<Bytes> {
    std::future::poll_fn(|cx| Pin::new(&mut *body).poll_next(cx))
        .await
        .map(|chunk| chunk.unwrap())
}
