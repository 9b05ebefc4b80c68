//! A kept-alive connection's next request must arrive in time, as its first must.
//!
//! actix times the head of a connection's first request (`client_request_timeout`) and closes
//! a connection that stays idle after an answer (its keep-alive), but a byte of a next request
//! stops the keep-alive timer and no head timer takes its place: a client that sends a
//! request, reads the answer and then sends half a head holds the connection, and the up to
//! 128 KiB of head actix buffers, for ever. No request forms, so no quota counts it; some
//! thousands of such connections fill a replica's memory or its connections.
//!
//! So each connection is watched from the side ([`on_connect`]): the requests it has in
//! flight are counted, from the moment actix hands one over until its answer's body is done
//! ([`middleware`]), and a connection with none in flight for [`KEEP_ALIVE`] and the request
//! timeout (what an idle connection and then a request's head may take) is shut down. An
//! idle one is closed by actix first; only a connection stuck in a head is left to this.
//! The watch sleeps on a timer and looks at two counters when it wakes (once per that time
//! while requests are in flight, such as an event stream): nothing is done per byte.

use std::cell::Cell;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::rc::{Rc, Weak};
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Extensions, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use tokio::time::Instant;

use super::holding_body::Holding;
use super::startup::KEEP_ALIVE;

/// What the watch of one connection knows of it, shared with its requests.
struct Watched {
    /// Requests handed over and not yet answered to their body's end.
    in_flight: Cell<u32>,
    /// When the connection last had no request in flight left (or opened).
    idle_since: Cell<Instant>,
    /// The socket, as its number (the connection owns it), and its two ends, which tell that
    /// the number still names this connection's socket.
    socket: RawFd,
    ends: (SocketAddr, SocketAddr),
    /// The watch, ended with the connection (else it would sleep on to its next look).
    task: Cell<Option<tokio::task::AbortHandle>>,
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The handle of a connection's requests on its [`Watched`].
#[derive(Clone)]
struct Watch(Rc<Watched>);

/// Starts the watch of a new connection: it is shut down once it has had no request in
/// flight for [`KEEP_ALIVE`] and `request_timeout`. For `HttpServer::on_connect`.
pub fn on_connect(
    connection: &dyn std::any::Any,
    data: &mut Extensions,
    request_timeout: Duration,
) {
    let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() else {
        return;
    };
    let (Ok(local), Ok(peer)) = (stream.local_addr(), stream.peer_addr()) else {
        return;
    };
    let watched = Rc::new(Watched {
        in_flight: Cell::new(0),
        idle_since: Cell::new(Instant::now()),
        socket: stream.as_raw_fd(),
        ends: (local, peer),
        task: Cell::new(None),
    });
    let task = actix_web::rt::spawn(watch(Rc::downgrade(&watched), KEEP_ALIVE + request_timeout));
    watched.task.set(Some(task.abort_handle()));
    data.insert(Watch(watched));
}

/// Wakes when the connection may have been idle for `limit`, and shuts it down if it has.
/// Ends when the connection is gone: its data, and so its [`Watched`], go with it, which
/// aborts this (and a look that finds it gone ends it too).
async fn watch(watched: Weak<Watched>, limit: Duration) {
    let mut wake = Instant::now() + limit;
    loop {
        tokio::time::sleep_until(wake).await;
        let Some(watched) = watched.upgrade() else {
            return;
        };
        if watched.in_flight.get() > 0 {
            wake = Instant::now() + limit;
            continue;
        }
        let deadline = watched.idle_since.get() + limit;
        if Instant::now() >= deadline {
            watched.shut_down();
            return;
        }
        wake = deadline;
    }
}

impl Watched {
    /// Shuts the connection's socket down both ways: actix reads its end and drops the
    /// connection, and the client learns it at once.
    fn shut_down(&self) {
        // SAFETY: `self` is part of the connection's data, which its dispatcher holds and
        // drops with the socket it owns (and an actix request lets go of it when pooled), so
        // the connection is open and `socket` is its number; and everything here runs on the
        // connection's worker thread, between its polls. Were the number ever another
        // socket's, its two ends would differ: it is only shut down when they are the same.
        let socket = unsafe { BorrowedFd::borrow_raw(self.socket) };
        let socket = socket2::SockRef::from(&socket);
        let ends = socket
            .local_addr()
            .ok()
            .and_then(|l| l.as_socket())
            .zip(socket.peer_addr().ok().and_then(|p| p.as_socket()));
        if ends == Some(self.ends) {
            let _ = socket.shutdown(std::net::Shutdown::Both);
            tracing::info!(peer = %self.ends.1, "closed a connection stuck in a request's head");
        }
    }
}

/// Counts a request in flight on its connection from now until its answer's body is done.
pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<InFlight>, actix_web::Error> {
    let watch = req.conn_data::<Watch>().cloned();
    let counted = watch.map(Counted::new);
    let res = next.call(req).await?;
    Ok(res.map_body(|_, body| Holding::new(body, counted)))
}

/// One request counted in flight on its connection, until dropped.
pub struct Counted(Watch);

impl Counted {
    fn new(watch: Watch) -> Counted {
        let watched = &watch.0;
        watched.in_flight.set(watched.in_flight.get() + 1);
        Counted(watch)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let watched = &self.0.0;
        watched.in_flight.set(watched.in_flight.get() - 1);
        watched.idle_since.set(Instant::now());
    }
}

/// An answer's body, its request counted in flight until the body is done (handed over whole
/// to the connection, failed, or dropped with the connection).
pub type InFlight = Holding<Counted>;

#[cfg(test)]
mod tests {
    use actix_web::web::Bytes;

    use super::*;
    use crate::service::holding_body::next_chunk;

    fn watched() -> Rc<Watched> {
        let end: SocketAddr = "127.0.0.1:1".parse().unwrap();
        Rc::new(Watched {
            in_flight: Cell::new(0),
            idle_since: Cell::new(Instant::now()),
            socket: -1,
            ends: (end, end),
            task: Cell::new(None),
        })
    }

    #[actix_web::test]
    async fn a_request_is_in_flight_until_its_body_is_done() {
        let watched = watched();
        let stream = futures_util::stream::iter([
            Ok::<_, std::io::Error>(Bytes::from_static(b"a")),
            Ok(Bytes::from_static(b"b")),
        ]);
        let mut body = Holding::new(
            actix_web::body::BodyStream::new(stream),
            Some(Counted::new(Watch(watched.clone()))),
        );
        assert_eq!(watched.in_flight.get(), 1);
        let before = watched.idle_since.get();
        assert_eq!(next_chunk(&mut body).await.as_deref(), Some(&b"a"[..]));
        assert_eq!(next_chunk(&mut body).await.as_deref(), Some(&b"b"[..]));
        assert_eq!(watched.in_flight.get(), 1);
        assert_eq!(next_chunk(&mut body).await, None);
        assert_eq!(watched.in_flight.get(), 0);
        assert!(watched.idle_since.get() >= before);

        // Dropped with its connection before its end.
        let body: InFlight = Holding::new(
            actix_web::body::BodyStream::new(futures_util::stream::pending::<
                Result<Bytes, std::io::Error>,
            >()),
            Some(Counted::new(Watch(watched.clone()))),
        );
        assert_eq!(watched.in_flight.get(), 1);
        drop(body);
        assert_eq!(watched.in_flight.get(), 0);
    }

    #[actix_web::test]
    async fn the_watch_ends_with_its_connection() {
        let watched = watched();
        let watch = actix_web::rt::spawn(super::watch(
            Rc::downgrade(&watched),
            Duration::from_millis(20),
        ));
        // In flight: the watch only looks again later.
        watched.in_flight.set(1);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!watch.is_finished());
        drop(watched);
        tokio::time::timeout(Duration::from_secs(1), watch)
            .await
            .expect("the watch ends once its connection is gone")
            .unwrap();

        // Aborted at once when its connection goes, rather than at its next look.
        let watched = super::tests::watched();
        let watch = actix_web::rt::spawn(super::watch(
            Rc::downgrade(&watched),
            Duration::from_secs(3600),
        ));
        watched.task.set(Some(watch.abort_handle()));
        drop(watched);
        let ended = tokio::time::timeout(Duration::from_secs(1), watch)
            .await
            .expect("the watch ends with its connection");
        assert!(ended.unwrap_err().is_cancelled());
    }
}
