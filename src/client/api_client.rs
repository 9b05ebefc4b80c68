//! A thin typed client of the HTTP API over reqwest. Answers come back as JSON values (printed
//! as they are with `--json`) and are decoded into the shared API types for people.
//!
//! The server is not trusted to be well-behaved: a body is read only up to [`MAX_BODY`] bytes
//! (a hostile answer declaring 100 GB once took the CLI to 1.8 GB of memory), a stream line
//! only up to the same, and a stream that falls silent for longer than its idle timeout is
//! given up (the caller resumes it) instead of waited on for ever.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::Problem;

/// The most bytes read of one answer, or of one line of an event stream. The largest answers
/// of the API are game views: a game at the service's default move limit (2000 plies) lists
/// its moves in some tens of KiB. 4 MiB leaves room for a service configured with many times
/// that limit, and is little enough memory that no server can make the CLI hold more.
pub const MAX_BODY: usize = 4 << 20;

/// Why a request failed, each with its own exit code (see [`ClientError::exit_code`]).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server refused the request with a problem+json answer.
    #[error("{}: {} (HTTP {})", .0.code, .0.detail, .0.status)]
    Refused(Box<Problem>),
    /// The server failed or is unavailable (5xx).
    #[error("server error: {}: {} (HTTP {})", .0.code, .0.detail, .0.status)]
    ServerError(Box<Problem>),
    /// The server could not be reached.
    #[error("cannot reach the server at {url}: {detail}")]
    Network { url: String, detail: String },
    /// The server did not answer in time.
    #[error("the server at {url} did not answer within {after:?}")]
    Timeout { url: String, after: Duration },
    /// An event stream sent nothing, not even a heartbeat, for this long.
    #[error("the stream from {url} sent nothing for {idle:?}")]
    Silent { url: String, idle: Duration },
    /// The answer is larger than the client reads (declared so, or found so while reading).
    #[error("the answer from {url} {}", too_large(*declared, *limit))]
    TooLarge {
        url: String,
        declared: Option<u64>,
        limit: usize,
    },
    /// A line of an event stream went past the limit without ending.
    #[error("a line of the stream from {url} passed {limit} bytes without ending")]
    LineTooLong { url: String, limit: usize },
    /// The answer was not what the API promises.
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
}

/// How [`ClientError::TooLarge`] says what was too large.
fn too_large(declared: Option<u64>, limit: usize) -> String {
    match declared {
        Some(n) => format!("declares {n} bytes, more than the {limit} the client reads"),
        None => format!("runs past the {limit} bytes the client reads"),
    }
}

impl ClientError {
    /// A stable name of a failure that is not the server's problem+json: `network`, `timeout`,
    /// `silent`, `too_large`, `line_too_long` or `protocol` (the server's own `code` otherwise).
    pub fn code(&self) -> &str {
        match self {
            ClientError::Refused(p) | ClientError::ServerError(p) => &p.code,
            ClientError::Network { .. } => "network",
            ClientError::Timeout { .. } => "timeout",
            ClientError::Silent { .. } => "silent",
            ClientError::TooLarge { .. } => "too_large",
            ClientError::LineTooLong { .. } => "line_too_long",
            ClientError::Protocol(_) => "protocol",
        }
    }

    /// 3: refused (4xx), 4: server error (5xx), 5: network, 6: timeout (or a silent stream),
    /// 7: protocol (an answer or line too large included).
    pub fn exit_code(&self) -> u8 {
        match self {
            ClientError::Refused(_) => 3,
            ClientError::ServerError(_) => 4,
            ClientError::Network { .. } => 5,
            ClientError::Timeout { .. } | ClientError::Silent { .. } => 6,
            ClientError::TooLarge { .. }
            | ClientError::LineTooLong { .. }
            | ClientError::Protocol(_) => 7,
        }
    }
}

/// How long an idle connection is kept for the next request: less than the keep-alive of the
/// service (`service::startup::KEEP_ALIVE`, 5 s) and of the usual proxies, so that a request
/// is never sent on a connection the server is closing that very moment (it would get no
/// answer — `IncompleteMessage` — and a move sent that way would be of unknown fate).
pub const IDLE_CONNECTION: Duration = Duration::from_secs(2);

/// The shortest wait before a new try, whatever `Retry-After` says: `Retry-After: 0` must not
/// make a client send its tries back to back.
pub const SHORTEST_RETRY_WAIT: Duration = Duration::from_millis(250);

/// A refusal that is only for now: `429` or `503` with the `Retry-After` (in seconds) the
/// server asked for, but at least [`SHORTEST_RETRY_WAIT`].
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let status = response.status();
    if status != reqwest::StatusCode::TOO_MANY_REQUESTS
        && status != reqwest::StatusCode::SERVICE_UNAVAILABLE
    {
        return None;
    }
    let secs: u64 = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs).max(SHORTEST_RETRY_WAIT))
}

/// The error for a redirect: the client follows none. A redirect is not an answer of the
/// API: following one could send a seat's token elsewhere (reqwest keeps it for the same host
/// on another scheme), and would turn a move's `POST` into a `GET` whose answer looks like a
/// move played.
fn redirected(response: &reqwest::Response) -> Option<ClientError> {
    let status = response.status();
    if !status.is_redirection() || status == reqwest::StatusCode::NOT_MODIFIED {
        return None;
    }
    let to = response
        .headers()
        .get(reqwest::header::LOCATION)
        .map(|l| {
            String::from_utf8_lossy(l.as_bytes())
                .chars()
                .take(200)
                .collect::<String>()
        })
        .unwrap_or_default();
    Some(ClientError::Protocol(format!(
        "{} answered {status} (to {to:?}): the client follows no redirect; \
         give the service's own address",
        response.url()
    )))
}

/// The error for a non-2xx answer: its problem+json, or one made of the status and the start
/// of the body when a proxy answered in something else.
fn refusal(status: reqwest::StatusCode, text: &str) -> ClientError {
    let problem: Problem = serde_json::from_str(text).unwrap_or_else(|_| Problem {
        kind: String::new(),
        title: status.to_string(),
        status: status.as_u16(),
        code: "http_error".into(),
        detail: text.chars().take(200).collect(),
        request_id: None,
    });
    if status.is_server_error() {
        ClientError::ServerError(Box::new(problem))
    } else {
        ClientError::Refused(Box::new(problem))
    }
}

#[derive(Clone)]
pub struct ApiClient {
    base: String,
    http: reqwest::Client,
    /// The client of event streams: only a connect timeout (a stream lasts as long as the
    /// server keeps it). One for all of them, so that `watch`'s resumptions reuse its
    /// connections instead of building a client each.
    streams: reqwest::Client,
    timeout: Duration,
}

impl ApiClient {
    pub fn new(base: &str, timeout: Duration) -> ApiClient {
        ApiClient {
            base: base.trim_end_matches('/').to_string(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(timeout)
                .pool_idle_timeout(IDLE_CONNECTION)
                .build()
                .expect("a client with a timeout builds"),
            streams: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(timeout)
                .pool_idle_timeout(IDLE_CONNECTION)
                .build()
                .expect("a client with a connect timeout builds"),
            timeout,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn transport(&self, e: reqwest::Error) -> ClientError {
        if e.is_timeout() {
            ClientError::Timeout {
                url: self.base.clone(),
                after: self.timeout,
            }
        } else {
            let mut detail = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                detail = format!("{detail}: {s}");
                source = s.source();
            }
            ClientError::Network {
                url: self.base.clone(),
                detail,
            }
        }
    }

    /// Reads a whole body, refusing one that declares or reaches more than [`MAX_BODY`].
    async fn body(&self, mut response: reqwest::Response) -> Result<String, ClientError> {
        let too_large = |declared| ClientError::TooLarge {
            url: self.base.clone(),
            declared,
            limit: MAX_BODY,
        };
        if let Some(declared) = response.content_length()
            && declared > MAX_BODY as u64
        {
            return Err(too_large(Some(declared)));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(e))? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(too_large(None));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// Sends a request; on failure, also the wait the server asked for before a new try.
    async fn send_once(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<Value, (ClientError, Option<Duration>)> {
        let response = request
            .send()
            .await
            .map_err(|e| (self.transport(e), None))?;
        if let Some(redirect) = redirected(&response) {
            return Err((redirect, None));
        }
        let status = response.status();
        let wait = retry_after(&response);
        let text = self.body(response).await.map_err(|e| (e, None))?;
        if status.is_success() {
            return serde_json::from_str(&text)
                .map_err(|e| (ClientError::Protocol(format!("{e}: {text:.200}")), None));
        }
        Err((refusal(status, &text), wait))
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, ClientError> {
        self.send_once(request).await.map_err(|(e, _)| e)
    }

    /// A non-JSON answer (an SVG board) as text.
    pub async fn get_text(&self, path: &str) -> Result<String, ClientError> {
        let response = self
            .http
            .get(self.url(path))
            .send()
            .await
            .map_err(|e| self.transport(e))?;
        if let Some(redirect) = redirected(&response) {
            return Err(redirect);
        }
        let status = response.status();
        let text = self.body(response).await?;
        if !status.is_success() {
            return Err(refusal(status, &text));
        }
        Ok(text)
    }

    /// Follows an NDJSON stream (after `last_event_id`, if given), calling `each` per line
    /// until the server ends it. Streams have no overall timeout (the server ends them), but
    /// the answer must begin within the client's timeout (a refusal must also end within
    /// it), and a stream that sends nothing for `idle` (the server sends heartbeats) is given
    /// up with [`ClientError::Silent`]. A line may be at most [`MAX_BODY`] bytes long. On a
    /// refusal, also the wait the server asked for before a new try, as `send_once` gives.
    /// An error of `each` (its own type: a line it cannot follow, or nowhere to put it) ends
    /// the stream and is returned as it is.
    pub async fn follow_lines<E: From<ClientError>>(
        &self,
        path: &str,
        last_event_id: Option<u64>,
        idle: Duration,
        each: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), (E, Option<Duration>)> {
        let response = self
            .open_stream(path, last_event_id)
            .await
            .map_err(|(e, wait)| (E::from(e), wait))?;
        self.read_lines(response, idle, each)
            .await
            .map_err(|e| (e, None))
    }

    /// The answer of a stream, once its head came with a 2xx status.
    async fn open_stream(
        &self,
        path: &str,
        last_event_id: Option<u64>,
    ) -> Result<reqwest::Response, (ClientError, Option<Duration>)> {
        let timeout = || ClientError::Timeout {
            url: self.base.clone(),
            after: self.timeout,
        };
        let mut request = self
            .streams
            .get(self.url(path))
            .header("accept", "application/x-ndjson");
        if let Some(version) = last_event_id {
            request = request.header("last-event-id", version.to_string());
        }
        let response = tokio::time::timeout(self.timeout, request.send())
            .await
            .map_err(|_| (timeout(), None))?
            .map_err(|e| (self.transport(e), None))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if let Some(redirect) = redirected(&response) {
            return Err((redirect, None));
        }
        // The client of a stream has no overall timeout: a refusal whose body never ends
        // would be waited on for ever.
        let wait = retry_after(&response);
        let text = tokio::time::timeout(self.timeout, self.body(response))
            .await
            .map_err(|_| (timeout(), None))?
            .map_err(|e| (e, None))?;
        Err((refusal(status, &text), wait))
    }

    /// Calls `each` per line of a stream until its end (see [`ApiClient::follow_lines`]).
    async fn read_lines<E: From<ClientError>>(
        &self,
        mut response: reqwest::Response,
        idle: Duration,
        mut each: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        // The start of a line whose end has not come yet: only the bytes of each new chunk
        // are searched for a newline.
        let mut pending: Vec<u8> = Vec::new();
        loop {
            let chunk = tokio::time::timeout(idle, response.chunk())
                .await
                .map_err(|_| ClientError::Silent {
                    url: self.base.clone(),
                    idle,
                })?
                .map_err(|e| self.transport(e))?;
            let Some(chunk) = chunk else { break };
            let mut rest: &[u8] = &chunk;
            loop {
                let end = rest.iter().position(|&b| b == b'\n');
                let taken = end.unwrap_or(rest.len());
                if pending.len() + taken > MAX_BODY {
                    return Err(ClientError::LineTooLong {
                        url: self.base.clone(),
                        limit: MAX_BODY,
                    }
                    .into());
                }
                pending.extend_from_slice(&rest[..taken]);
                let Some(end) = end else { break };
                each(String::from_utf8_lossy(&pending).trim())?;
                pending.clear();
                rest = &rest[end + 1..];
            }
        }
        Ok(())
    }

    pub async fn get(&self, path: &str) -> Result<Value, ClientError> {
        self.send(self.http.get(self.url(path))).await
    }

    pub async fn post(
        &self,
        path: &str,
        body: &impl Serialize,
        token: Option<&str>,
    ) -> Result<Value, ClientError> {
        let mut request = self.http.post(self.url(path)).json(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        self.send(request).await
    }

    /// Posts as [`ApiClient::post`] does, but when the server answers `429` or `503` with a
    /// `Retry-After` of at most `longest_wait`, waits that long and tries again, up to
    /// `retries` times: such a refusal is only for now (a full analysis pool, a caller's share
    /// of it), and a batch that stops at it fails lines the server would have done a second
    /// later. A longer wait (an exhausted quota) is an answer to report, not to wait out.
    pub async fn post_retrying(
        &self,
        path: &str,
        body: &impl Serialize,
        retries: u32,
        longest_wait: Duration,
    ) -> Result<Value, ClientError> {
        let mut tries = 0;
        loop {
            match self
                .send_once(self.http.post(self.url(path)).json(body))
                .await
            {
                // `wait` is at least `SHORTEST_RETRY_WAIT` (see `retry_after`).
                Err((_, Some(wait))) if tries < retries && wait <= longest_wait => {
                    tries += 1;
                    tokio::time::sleep(wait).await;
                }
                result => return result.map_err(|(e, _)| e),
            }
        }
    }
}

/// Decodes an answer into an API type.
pub fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, ClientError> {
    serde_json::from_value(value.clone()).map_err(|e| ClientError::Protocol(e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A server that keeps every connection open and answers each request `ok`, counting the
    /// connections it accepted.
    fn keep_alive_server() -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counter.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut buffer = [0; 4096];
                    while let Ok(n) = stream.read(&mut buffer) {
                        if n == 0 {
                            return;
                        }
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if stream.write_all(answer).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (base, accepted)
    }

    /// A connection idle for longer than `IDLE_CONNECTION` is not reused: the server may be
    /// closing it (its keep-alive ran out) just as the request is sent on it.
    #[tokio::test]
    async fn an_idle_connection_is_not_reused_after_its_idle_time() {
        let (base, accepted) = keep_alive_server();
        let client = ApiClient::new(&base, Duration::from_secs(5));
        assert_eq!(client.get_text("/a").await.unwrap(), "ok");
        assert_eq!(client.get_text("/b").await.unwrap(), "ok");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "a busy connection is reused"
        );
        tokio::time::sleep(IDLE_CONNECTION + Duration::from_millis(500)).await;
        assert_eq!(client.get_text("/c").await.unwrap(), "ok");
        assert_eq!(accepted.load(Ordering::SeqCst), 2, "an idle one is not");
    }
}
