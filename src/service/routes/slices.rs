//! Large fixed answers (the Swagger UI bundle, 1.7 MB; its stylesheet; the OpenAPI document)
//! are sent in slices, never whole.
//!
//! actix copies each chunk of an answer's body into the connection's write buffer whole, and
//! asks for the next chunk only once that buffer has drained below 32 KiB. A body given as one
//! chunk is therefore copied whole into every connection that asks for it, and stays there
//! until the client has taken it: with the kernel's send buffers at a real network's size,
//! 200 connections that asked for the bundle and read nothing made a replica hold 363 MB more
//! for 30 s, on routes that count no quota, below a pod's 512 MiB. Sliced, a connection holds
//! at most its buffer and one slice, and the slices are views of the one copy in the binary.

use std::convert::Infallible;

use actix_web::body::SizedStream;
use actix_web::web::Bytes;
use futures_util::Stream;

/// The largest slice of a body handed to a connection at once.
pub const SLICE: usize = 16 * 1024;

/// `bytes` as a body of the same length (its `Content-Length` is sent) that hands them to the
/// connection [`SLICE`] bytes at a time, without copying them.
pub fn body(
    bytes: impl Into<Bytes>,
) -> SizedStream<impl Stream<Item = Result<Bytes, Infallible>> + Unpin> {
    let bytes = bytes.into();
    let len = bytes.len();
    let slices = (0..len)
        .step_by(SLICE)
        .map(move |start| Ok(bytes.slice(start..(start + SLICE).min(len))));
    SizedStream::new(len as u64, futures_util::stream::iter(slices))
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;

    use actix_web::body::{BodySize, MessageBody};
    use actix_web::{App, test};

    use super::SLICE;

    /// Every fixed answer, the large ones above all, reaches the connection in slices of at
    /// most [`SLICE`] bytes, with its whole length declared.
    #[actix_web::test]
    async fn fixed_answers_are_handed_over_in_slices() {
        let app =
            test::init_service(App::new().configure(|cfg| super::super::configure(cfg, 16 * 1024)))
                .await;
        let mut largest = 0;
        for path in [
            "/docs/swagger-ui-bundle.js",
            "/docs/swagger-ui.css",
            "/openapi.json",
            "/",
            "/web/app.js",
            "/web/style.css",
        ] {
            let res =
                test::call_service(&app, test::TestRequest::get().uri(path).to_request()).await;
            assert_eq!(res.status(), 200, "{path}");
            let mut body = Box::pin(res.into_body());
            let BodySize::Sized(declared) = body.size() else {
                panic!("{path}: no Content-Length");
            };
            let (mut total, mut slices) = (0, 0);
            while let Some(slice) =
                std::future::poll_fn(|cx| Pin::new(&mut body).as_mut().poll_next(cx)).await
            {
                let slice = slice.unwrap();
                assert!(
                    slice.len() <= SLICE,
                    "{path}: a chunk of {} bytes",
                    slice.len()
                );
                total += slice.len() as u64;
                slices += 1;
            }
            assert_eq!(total, declared, "{path}");
            assert_eq!(slices as u64, declared.div_ceil(SLICE as u64), "{path}");
            largest = largest.max(declared);
        }
        assert!(
            largest > 1 << 20,
            "the bundle is the large one: {largest} bytes"
        );
    }
}
