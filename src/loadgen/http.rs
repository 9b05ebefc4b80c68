//! The generator's HTTP client: one keep-alive HTTP/1.1 connection per task and replica, made
//! with hyper's connection API.
//!
//! Why not reqwest, as the CLI client uses: a load generator shares the machine with what it
//! measures, so every microsecond it spends is one the replicas and Redis do not get. reqwest
//! parses each request's URL (and its host through IDNA), takes a connection from a pool
//! behind a lock, and wakes the pool's tasks across threads; here a task owns its connections
//! outright, a request's path is formatted once per game, and nothing is shared between tasks
//! but the statistics.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;

/// A replica to send requests to.
#[derive(Clone, Debug)]
pub struct Target {
    /// `host:port`, to connect to and to send as `Host`.
    authority: String,
    host: HeaderValue,
}

impl Target {
    /// A target from a base URL (`http://host:port`; no path, no TLS: the generator runs beside
    /// the replicas it loads).
    pub fn parse(base: &str) -> Result<Target, String> {
        let authority = base
            .strip_prefix("http://")
            .ok_or_else(|| format!("{base}: the load generator speaks plain http:// only"))?
            .trim_end_matches('/');
        if authority.is_empty() || authority.contains('/') {
            return Err(format!("{base}: expected http://host:port"));
        }
        Ok(Target {
            authority: authority.to_string(),
            host: HeaderValue::from_str(authority).map_err(|e| format!("{base}: {e}"))?,
        })
    }
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("connect: {0}")]
    Connect(std::io::Error),
    #[error("{0}")]
    Http(#[from] hyper::Error),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

/// A request: method, path (with its query), extra headers and a JSON body.
pub struct Call<'a> {
    pub method: Method,
    pub path: &'a str,
    pub headers: &'a [(header::HeaderName, HeaderValue)],
    pub json: Option<Bytes>,
}

impl<'a> Call<'a> {
    pub fn get(path: &'a str) -> Call<'a> {
        Call {
            method: Method::GET,
            path,
            headers: &[],
            json: None,
        }
    }

    pub fn post(path: &'a str, json: Vec<u8>) -> Call<'a> {
        Call {
            method: Method::POST,
            path,
            headers: &[],
            json: Some(Bytes::from(json)),
        }
    }

    pub fn with_headers(self, headers: &'a [(header::HeaderName, HeaderValue)]) -> Call<'a> {
        Call { headers, ..self }
    }
}

/// One task's connections, one per target, each made on first use and again after a failure.
pub struct Connections {
    targets: Vec<Target>,
    open: Vec<Option<SendRequest<Full<Bytes>>>>,
    timeout: Duration,
}

impl Connections {
    pub fn new(targets: &[Target], timeout: Duration) -> Connections {
        Connections {
            targets: targets.to_vec(),
            open: targets.iter().map(|_| None).collect(),
            timeout,
        }
    }

    /// Sends `call` to target `index` and reads the whole answer: its status and body. A
    /// connection the replica closed (its keep-alive ran out) is replaced before sending; a
    /// request that fails is not sent again here (the players retry, with the same
    /// `Idempotency-Key`, and the failure counts).
    pub async fn send(&mut self, index: usize, call: Call<'_>) -> Result<(u16, Bytes), Error> {
        let timeout = self.timeout;
        match tokio::time::timeout(timeout, self.exchange(index, &call)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => {
                self.open[index] = None;
                Err(e)
            }
            Err(_) => {
                // The connection may still carry the late answer: never reuse it.
                self.open[index] = None;
                Err(Error::Timeout(timeout))
            }
        }
    }

    async fn exchange(&mut self, index: usize, call: &Call<'_>) -> Result<(u16, Bytes), Error> {
        let target = &self.targets[index];
        let mut request = Request::builder()
            .method(call.method.clone())
            .uri(call.path)
            .header(header::HOST, target.host.clone());
        for (name, value) in call.headers {
            request = request.header(name, value);
        }
        let body = match &call.json {
            Some(json) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Full::new(json.clone())
            }
            None => Full::new(Bytes::new()),
        };
        let request = request.body(body).expect("a request from valid parts");
        let sender = match &mut self.open[index] {
            Some(sender) if !sender.is_closed() => sender,
            slot => slot.insert(connect(&target.authority).await?),
        };
        sender.ready().await?;
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }
}

async fn connect(authority: &str) -> Result<SendRequest<Full<Bytes>>, Error> {
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(Error::Connect)?;
    stream.set_nodelay(true).map_err(Error::Connect)?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
    // The connection's driver ends when the sender is dropped or the peer closes.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    #[test]
    fn a_target_is_a_plain_http_authority() {
        let t = Target::parse("http://127.0.0.1:8080/").unwrap();
        assert_eq!(t.authority, "127.0.0.1:8080");
        assert!(Target::parse("https://example.com").is_err());
        assert!(Target::parse("http://").is_err());
        assert!(Target::parse("http://host:1/path").is_err());
    }

    /// Reads one request head (this test server's clients send no bodies).
    async fn read_head(stream: &mut tokio::net::TcpStream) -> bool {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => return false,
            }
        }
        true
    }

    /// A server that answers each connection's first request, then closes it.
    async fn one_answer_per_connection() -> (Target, tokio::task::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = Target::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        let server = tokio::spawn(async move {
            let mut connections = 0;
            while connections < 3 {
                let (mut stream, _) = listener.accept().await.unwrap();
                connections += 1;
                if read_head(&mut stream).await {
                    let _ = stream
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                        .await;
                }
                // Closed without `connection: close`, as a server's keep-alive timeout does.
            }
            connections
        });
        (target, server)
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_replaced() {
        let (target, server) = one_answer_per_connection().await;
        let mut connections = Connections::new(&[target], Duration::from_secs(5));
        for _ in 0..3 {
            let (status, body) = connections.send(0, Call::get("/")).await.unwrap();
            assert_eq!((status, &body[..]), (200, &b"ok"[..]));
            // Idle long enough for the client to see the close.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(server.await.unwrap(), 3, "one connection per request");
    }

    #[tokio::test]
    async fn an_answer_that_never_comes_is_a_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = Target::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        let _server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            read_head(&mut stream).await;
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let mut connections = Connections::new(&[target], Duration::from_millis(200));
        let started = std::time::Instant::now();
        let answer = connections.send(0, Call::get("/")).await;
        assert!(matches!(answer, Err(Error::Timeout(_))), "{answer:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            connections.open[0].is_none(),
            "the late connection is dropped"
        );
    }

    #[tokio::test]
    async fn a_refused_connection_is_an_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let target = Target::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        drop(listener);
        let mut connections = Connections::new(&[target], Duration::from_secs(5));
        let answer = connections.send(0, Call::get("/")).await;
        assert!(matches!(answer, Err(Error::Connect(_))), "{answer:?}");
    }
}
