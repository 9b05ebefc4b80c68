//! Whether the client of a request is still there, for the work that makes it wait (a search,
//! a place in the analysis queue, an event stream).
//!
//! actix drops a request's handler when reading or writing its connection fails, as it does
//! after a reset; but not when the client closes its sending half (a FIN), since HTTP/1 lets a
//! client do that and still read the answer. A FIN is what a client sends when it gives up:
//! a timeout or an interrupted command closes a socket with nothing left unread, and a proxy
//! in front (nginx, an ingress) closes its connection upstream the same way when its own
//! client leaves. So a handler that answered only after a reset would search, hold its places
//! and count against its caller's share for nobody. As nginx (its `499`) and Go's `net/http`
//! (a cancelled request context) do, a closed sending half is taken as the client gone.
//!
//! actix can do this itself (`HttpServer::h1_allow_half_closed(false)`), but for every request
//! of the connection at once: a move whose client sent it and closed its side would be
//! dropped halfway and never answered, and nothing would be logged. Here only the waits that
//! can last (a search, a place in a queue, a stream) end: an analysis with an answer, a stream
//! (already answered) by ending its body.
//!
//! Each connection's socket is noted when it opens ([`on_connect`]); a handler that waits on
//! something takes its own handle on that socket ([`Peer::of`]) and waits, with the reactor,
//! for it to be closed ([`gone`]). Nothing is polled on a timer, so a thousand idle
//! event streams cost nothing more than their sockets.

use std::any::Any;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use actix_web::HttpRequest;
use actix_web::dev::Extensions;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use super::error::{ApiError, ErrorCode};

/// The socket of a connection, as its number (the connection owns the socket).
#[derive(Clone, Copy)]
struct Socket(RawFd);

/// Notes a new connection's socket, for [`Peer::of`]. For `HttpServer::on_connect`.
pub fn on_connect(connection: &dyn Any, data: &mut Extensions) {
    if let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
        data.insert(Socket(stream.as_raw_fd()));
    }
}

/// A handle on the socket of a request's client, kept by the handler while it waits.
pub struct Peer {
    socket: AsyncFd<OwnedFd>,
}

impl Peer {
    /// A handle on `req`'s connection (`None` for a request that came without one, as in
    /// unit tests, or when no file descriptor is left to copy it). Only for a handler of
    /// `req`, while it runs: that is what keeps the connection's socket open (see below).
    pub(crate) fn of(req: &HttpRequest) -> Option<Peer> {
        let Socket(fd) = *req.conn_data::<Socket>()?;
        // SAFETY: a handler runs while its connection's dispatcher polls it, and the
        // dispatcher owns the socket, which it closes only when it is itself dropped (with
        // the handler). So while this runs, `fd` is that connection's open socket. The handle
        // taken here is a copy of it (`dup`), ours to close, whatever becomes of the original.
        let socket = unsafe { BorrowedFd::borrow_raw(fd) }
            .try_clone_to_owned()
            .ok()?;
        // SAFETY: the copy is owned here, so it stays open, and refers to the same socket,
        // for as long as the `AsyncFd` holds it. (It shares the original's non-blocking mode,
        // which the reactor needs.)
        unsafe { AsyncFd::register_with_interest(socket, Interest::READABLE) }
            .ok()
            .map(|socket| Peer { socket })
    }

    /// Resolves once the client has closed its sending half of the connection, or the
    /// connection failed. Bytes it sent after its request (a pipelined request) are not its
    /// leaving: they are left for actix to read.
    async fn closed(&self) {
        loop {
            let Ok(mut ready) = self.socket.readable().await else {
                return;
            };
            if ready.ready().is_read_closed() {
                return;
            }
            let mut byte = [MaybeUninit::uninit()];
            match ready.try_io(|socket| socket2::SockRef::from(socket.get_ref()).peek(&mut byte)) {
                // Its end of the stream, or a failure such as a reset.
                Ok(Ok(0) | Err(_)) => return,
                Ok(Ok(_)) => ready.clear_ready(),
                // Woken for nothing: `try_io` cleared the readiness.
                Err(_) => {}
            }
        }
    }
}

/// Resolves once the client of `peer` has left: it closed its sending half of the connection,
/// or the connection failed; never without a peer.
pub async fn gone(peer: Option<&Peer>) {
    match peer {
        Some(peer) => peer.closed().await,
        None => std::future::pending().await,
    }
}

/// `work`, unless the client of `peer` leaves first: then `work` is dropped and the answer is
/// `client_closed_request`, for the logs and metrics (a client that closed only its sending
/// side may still read it).
pub async fn unless_gone<T>(
    peer: Option<&Peer>,
    work: impl Future<Output = T>,
) -> Result<T, ApiError> {
    tokio::select! {
        // Work that is done is answered, even if the client left at the same moment.
        biased;
        done = work => Ok(done),
        () = gone(peer) => Err(ApiError::new(
            ErrorCode::ClientClosedRequest,
            "the client closed the connection before the answer was ready",
        )),
    }
}
