//! An answer holds its caller's place in flight until the connection has taken all of it.
//!
//! A handler's answer is made before it is sent, and actix copies a body's chunk into the
//! connection's write buffer whole: an answer its client does not read stays in the replica's
//! memory until the client takes it or `--stalled-client-timeout-secs` drops the connection.
//! Were the place given back when the handler returns, a caller's requests in flight would not
//! bound what it makes a replica hold: at its read rate (100/s) it could leave 3,000 records
//! of long games (200 KB each) unread for 30 s. Held until the body ends — actix asks for its
//! end once the buffer is below 32 KiB — they are bounded by `concurrent` times the largest
//! answer. (So an answer that fits in the buffer gives its place back at once, as before: a
//! connection holds at most its buffer outside the count.)
//!
//! Only answers of a known length hold it: an event stream is held for its whole life and is
//! bounded by its own count (`streams`), and the few bytes a stream has ready at once.

use actix_web::body::{BodySize, MessageBody};

use super::places::Place;
use crate::service::holding_body::Holding;

/// A body and the place it holds until its last byte is handed to the connection (or it is
/// dropped with its connection).
pub type UntilSent = Holding<Place>;

/// `body`, holding `place` if it has a known length that is not zero.
pub fn until_sent(body: impl MessageBody + 'static, place: Option<Place>) -> UntilSent {
    let mut body = Holding::new(body, place);
    if !matches!(body.size(), BodySize::Sized(len) if len > 0) {
        body.release();
    }
    body
}

#[cfg(test)]
mod tests {
    use actix_web::web::Bytes;

    use super::*;
    use crate::service::holding_body::next_chunk;
    use crate::service::quota::places::Counts;

    #[actix_web::test]
    async fn a_place_is_held_until_the_last_chunk_is_taken() {
        let counts = Counts::default();
        let mut body = until_sent(
            Bytes::from_static(b"an answer"),
            Some(counts.take("a", 1).unwrap()),
        );
        assert!(
            counts.take("a", 1).is_none(),
            "held while the body is unsent"
        );
        assert_eq!(
            next_chunk(&mut body).await.as_deref(),
            Some(&b"an answer"[..])
        );
        assert!(
            counts.take("a", 1).is_none(),
            "held until the body says it has ended"
        );
        assert_eq!(next_chunk(&mut body).await, None);
        assert!(counts.take("a", 1).is_some(), "given back at its end");
    }

    #[actix_web::test]
    async fn a_dropped_body_gives_its_place_back() {
        let counts = Counts::default();
        let body = until_sent(
            Bytes::from_static(b"unread"),
            Some(counts.take("a", 1).unwrap()),
        );
        drop(body);
        assert!(counts.take("a", 1).is_some());
    }

    #[actix_web::test]
    async fn streams_and_empty_answers_hold_nothing() {
        let counts = Counts::default();
        let stream = actix_web::body::BodyStream::new(futures_util::stream::pending::<
            Result<Bytes, std::convert::Infallible>,
        >());
        let _stream = until_sent(stream, Some(counts.take("a", 1).unwrap()));
        let _empty = until_sent(Bytes::new(), Some(counts.take("a", 1).unwrap()));
        assert!(counts.take("a", 1).is_some());
    }
}
