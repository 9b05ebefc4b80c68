//! Requests with limits: a body that trickles in times out, the method never becomes an
//! unbounded metric label, compare-and-set conflicts and refreshes of stale cached games are
//! counted.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pillarz::api::Seat;
use pillarz::service::configuration::Settings;
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, settings_for};

/// Sends `head` and part of a body, then nothing: the answer must come within `within`.
fn answer_to_a_stalled_request(port: u16, sent: &[u8], within: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
    socket.write_all(sent).unwrap();
    socket.set_read_timeout(Some(within)).unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match socket.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buffer[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(e) => panic!(
                "no answer after {:?} ({e}); got {:?}",
                started.elapsed(),
                String::from_utf8_lossy(&answer)
            ),
        }
    }
    (
        String::from_utf8_lossy(&answer).into_owned(),
        started.elapsed(),
    )
}

pub fn port_of(app: &TestApp) -> u16 {
    app.address.rsplit(':').next().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_in_times_out() {
    let mut settings = Settings::for_tests();
    settings.request_timeout = Duration::from_secs(1);
    let app = TestApp::spawn_with(settings).await;
    let port = port_of(&app);
    let request = b"POST /v1/games HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"game\":";
    let (answer, took) = tokio::task::spawn_blocking(move || {
        answer_to_a_stalled_request(port, request, Duration::from_secs(6))
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("application/problem+json"),
        "{answer}"
    );
    assert!(took < Duration::from_secs(4), "cut off after {took:?}");
    // A head that never ends is cut off too.
    let (answer, took) = tokio::task::spawn_blocking(move || {
        answer_to_a_stalled_request(
            port,
            b"GET /v1/catalog HTTP/1.1\r\nHost: loc",
            Duration::from_secs(6),
        )
    })
    .await
    .unwrap();
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    assert!(took < Duration::from_secs(4), "cut off after {took:?}");
    // The service is fine.
    assert_eq!(app.get("/v1/catalog").await.status(), 200);
}

/// A connection's later requests are under a deadline too, not only its first (actix times
/// only the first head): a client that sends a request, reads its answer and then half of a
/// next head is cut off once it has had nothing in flight for the keep-alive time and the
/// request timeout. An event stream, in flight the whole time, is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_head_that_never_ends_is_cut_off() {
    let mut settings = Settings::for_tests();
    settings.request_timeout = Duration::from_secs(1);
    settings.events_heartbeat = Duration::from_secs(1);
    let app = TestApp::spawn_with(settings).await;
    let port = port_of(&app);
    let game = app.create(json!({"game": "pillarz"})).await.game.id;
    let stalled = tokio::task::spawn_blocking(move || {
        let mut socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
        socket
            .write_all(b"GET /healthz/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        // The whole first answer: its head, then as many bytes as it says.
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        let complete = |answer: &[u8]| {
            let text = String::from_utf8_lossy(answer);
            let Some((head, body)) = text.split_once("\r\n\r\n") else {
                return false;
            };
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .expect("a sized answer");
            body.len() >= length
        };
        while !complete(&answer) {
            let n = socket.read(&mut buffer).unwrap();
            assert!(n > 0, "closed before the first answer");
            answer.extend_from_slice(&buffer[..n]);
        }
        assert!(answer.starts_with(b"HTTP/1.1 200"));
        socket
            .write_all(b"GET /v1/catalog HTTP/1.1\r\nHost: loc")
            .unwrap();
        let started = Instant::now();
        let closed = match socket.read(&mut buffer) {
            Ok(0) => true,
            Ok(n) => panic!("answered {:?}", String::from_utf8_lossy(&buffer[..n])),
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        };
        (closed, started.elapsed())
    });
    // Meanwhile a stream outlives that deadline (keep-alive 5 s and 1 s): heartbeats still
    // come after 8 s.
    let client = reqwest::Client::new();
    let mut stream = client
        .get(app.url(&format!("/v1/games/{game}/events")))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let started = Instant::now();
    let mut last = started;
    while started.elapsed() < Duration::from_secs(8) {
        let chunk = tokio::time::timeout(Duration::from_secs(3), stream.chunk())
            .await
            .expect("a heartbeat every second")
            .unwrap()
            .expect("the stream goes on");
        assert!(!chunk.is_empty());
        last = Instant::now();
    }
    assert!(last - started >= Duration::from_secs(7));
    let (closed, took) = stalled.await.unwrap();
    assert!(closed, "still open after {took:?}");
    assert!(took < Duration::from_secs(10), "cut off after {took:?}");
    // The service is fine.
    assert_eq!(app.get("/v1/catalog").await.status(), 200);
}

/// Sends `head`, then one chunk of a never-ending chunked body every 300 ms; returns how long
/// the server took to close the connection (`None`: not within 8 s) and what it answered.
fn trickle_until_closed(port: u16, head: &'static [u8]) -> (Option<Duration>, String) {
    let started = Instant::now();
    let mut socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
    socket.write_all(head).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while started.elapsed() < Duration::from_secs(8) {
        if socket.write_all(b"1\r\na\r\n").is_err() {
            return (
                Some(started.elapsed()),
                String::from_utf8_lossy(&answer).into(),
            );
        }
        match socket.read(&mut buffer) {
            Ok(0) => {
                return (
                    Some(started.elapsed()),
                    String::from_utf8_lossy(&answer).into(),
                );
            }
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                return (
                    Some(started.elapsed()),
                    String::from_utf8_lossy(&answer).into(),
                );
            }
        }
    }
    (None, String::from_utf8_lossy(&answer).into())
}

/// A body sent to a route that never reads it is under the same deadline: a client cannot
/// hold a connection open for ever by trickling a chunked body at a health check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_body_that_trickles_in_is_cut_off() {
    let mut settings = Settings::for_tests();
    settings.request_timeout = Duration::from_secs(1);
    let app = TestApp::spawn_with(settings).await;
    let port = port_of(&app);
    for head in [
        &b"GET /healthz/live HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
        &b"GET /v1/catalog HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
    ] {
        let (closed, answer) =
            tokio::task::spawn_blocking(move || trickle_until_closed(port, head))
                .await
                .unwrap();
        let closed = closed.unwrap_or_else(|| panic!("still open after 8 s; got {answer:?}"));
        assert!(closed < Duration::from_secs(4), "closed after {closed:?}");
    }
    assert_eq!(app.get("/healthz/live").await.status(), 200);
}

/// Sends `request` from a client with a small receive window and segment size (so that a few
/// KB fill its window, and not much more the server's buffers), and then reads nothing.
pub fn client_that_reads_nothing(port: u16, request: &str) -> socket2::Socket {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    socket.set_tcp_mss(536).unwrap();
    let server = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    socket.connect(&server.into()).unwrap();
    (&socket).write_all(request.as_bytes()).unwrap();
    socket
}

/// Reads what `socket` was sent until it fails or ends (or nothing comes for 2 s): how many
/// bytes came, and the error that ended them (`None`: the connection is still open).
fn read_until_cut(socket: socket2::Socket) -> (usize, Option<std::io::ErrorKind>) {
    let mut socket = TcpStream::from(socket);
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut read = 0;
    let mut buffer = [0u8; 65536];
    loop {
        match socket.read(&mut buffer) {
            Ok(0) => return (read, Some(std::io::ErrorKind::UnexpectedEof)),
            Ok(n) => read += n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return (read, None);
            }
            Err(e) => return (read, Some(e.kind())),
        }
    }
}

/// A client that asks for a long answer and reads none of it does not hold its connection
/// for ever: it is dropped after `--stalled-client-timeout-secs`, mid-answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reads_nothing_is_dropped() {
    let mut settings = Settings::for_tests();
    settings.stalled_client_timeout = Duration::from_secs(2);
    let app = TestApp::spawn_with(settings).await;
    let bundle = app
        .get("/docs/swagger-ui-bundle.js")
        .await
        .bytes()
        .await
        .unwrap();
    assert!(
        bundle.len() > 1_000_000,
        "a long answer ({} bytes)",
        bundle.len()
    );
    let socket = client_that_reads_nothing(
        port_of(&app),
        "GET /docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: localhost\r\n\r\n",
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (read, cut) = tokio::task::spawn_blocking(move || read_until_cut(socket))
        .await
        .unwrap();
    assert_eq!(
        cut,
        Some(std::io::ErrorKind::ConnectionReset),
        "after {read} bytes"
    );
    assert!(read < bundle.len(), "cut mid-answer, after {read} bytes");
    assert_eq!(app.get("/healthz/live").await.status(), 200);
}

/// An event stream whose client reads nothing gives its place among the replica's
/// `--max-event-streams` back: actix stops polling a body nobody takes, so only dropping the
/// connection ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_whose_client_reads_nothing_gives_its_place_back() {
    let mut settings = Settings::for_tests();
    settings.max_event_streams = 1;
    settings.events_heartbeat = Duration::from_millis(500);
    settings.stalled_client_timeout = Duration::from_secs(2);
    let app = TestApp::spawn_with(settings).await;
    // A backlog longer than the client's receive window, in a game that goes on.
    let id = app.long_game("alcazar", 60).await.id;
    let stalled = client_that_reads_nothing(
        port_of(&app),
        &format!(
            "GET /v1/games/{id}/events HTTP/1.1\r\nHost: localhost\r\n\
             Accept: application/x-ndjson\r\nLast-Event-ID: 0\r\n\r\n"
        ),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let events = format!("/v1/games/{id}/events");
    crate::helpers::assert_problem(app.get(&events).await, 503, "busy").await;
    let started = Instant::now();
    loop {
        let again = app.get(&events).await;
        if again.status() == 200 {
            break;
        }
        crate::helpers::assert_problem(again, 503, "busy").await;
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the stalled stream still holds its place"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(stalled);
}

/// A route's requests are labelled with its own method or `other`: a client trying every
/// method, known or made up, on every route adds at most two series a route, not one for each
/// method it tries.
#[tokio::test]
async fn other_methods_share_one_metric_label() {
    let app = TestApp::spawn_in_memory().await;
    let routes: [(&str, &[&str]); 4] = [
        ("/v1/catalog", &["GET", "HEAD"]),
        ("/v1/games", &["POST"]),
        ("/healthz/live", &["GET", "HEAD"]),
        ("/metrics", &["GET", "HEAD"]),
    ];
    let methods = [
        "GET",
        "POST",
        "PUT",
        "DELETE",
        "PATCH",
        "HEAD",
        "OPTIONS",
        "TRACE",
        "FROBNICATE",
    ];
    for (route, allow) in routes {
        for method in methods {
            let response = app
                .client
                .request(
                    reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                    app.url(route),
                )
                .send()
                .await
                .unwrap();
            if !allow.contains(&method) {
                assert_eq!(response.status(), 405, "{method} {route}");
                assert_eq!(
                    response.headers()["allow"],
                    allow.join(", ").as_str(),
                    "{method} {route}"
                );
            }
        }
    }
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(!metrics.contains("FROBNICATE"), "{metrics}");
    for (route, allow) in routes {
        let mut labels: Vec<&str> = metrics
            .lines()
            .filter(|line| line.contains(&format!("route=\"{route}\"")))
            .filter_map(|line| line.split("method=\"").nth(1)?.split('"').next())
            .collect();
        labels.sort_unstable();
        labels.dedup();
        let mut expected = allow.to_vec();
        expected.push("other");
        expected.sort_unstable();
        assert_eq!(labels, expected, "{route}: {metrics}");
    }
}

/// `HEAD` is answered as `GET` is, without the body (RFC 9110, 9.3.2), on every route that
/// serves `GET` but the event stream, whose body would hold the replica for nothing.
#[tokio::test]
async fn head_is_answered_as_get_without_its_body() {
    let app = TestApp::spawn_in_memory().await;
    let game = app.create(json!({"game": "pillarz"})).await.game;
    for path in [
        "/v1/catalog".to_string(),
        "/healthz/live".to_string(),
        format!("/v1/games/{}", game.id),
        format!("/v1/games/{}/legal-moves", game.id),
        format!("/v1/games/{}/board.svg", game.id),
        "/openapi.json".to_string(),
    ] {
        let got = app.get(&path).await;
        assert_eq!(got.status(), 200, "GET {path}");
        let got_type = got.headers()["content-type"].clone();
        let got_length = got.bytes().await.unwrap().len();
        assert!(got_length > 0, "GET {path}");
        let head = app.client.head(app.url(&path)).send().await.unwrap();
        assert_eq!(head.status(), 200, "HEAD {path}");
        assert_eq!(head.headers()["content-type"], got_type, "HEAD {path}");
        assert_eq!(
            head.headers()["content-length"],
            got_length.to_string().as_str(),
            "HEAD {path}"
        );
        assert!(head.bytes().await.unwrap().is_empty(), "HEAD {path}");
    }
    let head = app
        .client
        .head(app.url(&format!("/v1/games/{}/events", game.id)))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 405);
    assert_eq!(head.headers()["allow"], "GET");
}

fn cas_conflicts(metrics: &str) -> f64 {
    counter(metrics, "pillarz_cas_conflicts_total")
}

fn counter(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// Racing writers through two replicas: the losers of the compare-and-set are counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn compare_and_set_conflicts_are_counted() {
    let redis = RedisServer::start();
    let a = Arc::new(TestApp::spawn_with(settings_for(Some(&redis), "cas")).await);
    let b = Arc::new(TestApp::spawn_with(settings_for(Some(&redis), "cas")).await);
    let before = cas_conflicts(&a.get("/metrics").await.text().await.unwrap());
    for _ in 0..10 {
        let created = a.create(json!({"game": "pillarz"})).await;
        let id = created.game.id.clone();
        let token = created.tokens[&Seat::P1].clone();
        let mut tasks = Vec::new();
        for (i, square) in ["a1", "b1", "c1", "d1", "e1", "a2", "b2", "c2"]
            .into_iter()
            .enumerate()
        {
            let app = if i % 2 == 0 { a.clone() } else { b.clone() };
            let (id, token) = (id.clone(), token.clone());
            tasks.push(tokio::spawn(async move {
                app.play(&id, &token, &format!("{square}+e5"))
                    .await
                    .status()
            }));
        }
        for task in tasks {
            let status = task.await.unwrap().as_u16();
            assert!(status == 200 || status == 409, "{status}");
        }
        let after = cas_conflicts(&a.get("/metrics").await.text().await.unwrap());
        if after > before {
            return;
        }
    }
    panic!("80 racing writes and not one compare-and-set conflict was counted");
}

/// A move sent to a replica whose cached game is behind another replica's write is played
/// after one fresh read, and that read is counted (metrics are per process: the count only
/// grows, whoever else adds to it).
#[tokio::test]
async fn stale_cached_games_are_refreshed_and_counted() {
    const NAME: &str = "pillarz_stale_cache_refreshes_total";
    let redis = RedisServer::start();
    let a = TestApp::spawn_with(settings_for(Some(&redis), "stale")).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "stale")).await;
    let created = a.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    // b keeps the game at ply 0; a plays the first move.
    let first = b.legal_moves(id).await[0].clone();
    let before = counter(&b.get("/metrics").await.text().await.unwrap(), NAME);
    let response = a.play(id, &created.tokens[&Seat::P1], &first).await;
    assert_eq!(response.status(), 200);
    let reply = a.legal_moves(id).await[0].clone();
    // On b's copy it is not P2's turn: b reads the game again, then plays the move.
    let response = b.play(id, &created.tokens[&Seat::P2], &reply).await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    assert_eq!(b.view(id).await.ply, 2);
    let after = counter(&b.get("/metrics").await.text().await.unwrap(), NAME);
    assert!(after > before, "{NAME}: {before} before, {after} after");
}

/// A zstd frame of `blocks` RLE blocks, each 4 bytes that stand for 128 KiB of spaces (JSON
/// whitespace): 4 KiB of body for 128 MiB of text with 1,024 blocks.
fn zstd_bomb(blocks: usize) -> Vec<u8> {
    // Magic number; frame header: no content size, no checksum, a window of 2^17 bytes.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        // Block header (3 bytes, little-endian): last flag, type 1 (RLE), size 128 KiB.
        let header = last | (1 << 1) | ((128 * 1024) << 3);
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.push(b' ');
    }
    frame
}

#[tokio::test]
async fn a_compressed_body_is_refused_before_it_is_inflated() {
    let replica = crate::helpers::Process::serve(&[]).await;
    let app = &replica.app;
    let before = replica.peak_memory();
    let bomb = app
        .client
        .post(app.url("/v1/games"))
        .header("content-type", "application/json")
        .header("content-encoding", "zstd")
        .body(zstd_bomb(1024))
        .send()
        .await
        .unwrap();
    assert_eq!(bomb.headers()["accept-encoding"], "identity");
    crate::helpers::assert_problem(bomb, 415, "unsupported_media_type").await;
    let grown = replica.peak_memory().saturating_sub(before);
    assert!(
        grown < 16 << 20,
        "4 KiB of body made the replica hold {} MiB more",
        grown >> 20
    );
    // Any coding but `identity` is refused, however small its body.
    let gzip = app
        .client
        .post(app.url("/v1/games"))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(r#"{"game":"pillarz"}"#)
        .send()
        .await
        .unwrap();
    crate::helpers::assert_problem(gzip, 415, "unsupported_media_type").await;
    let plain = app
        .client
        .post(app.url("/v1/games"))
        .header("content-encoding", "identity")
        .json(&json!({"game": "pillarz"}))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 201);
    // A request that declares no body has nothing to inflate: a stray header is no reason to
    // refuse it.
    let bodiless = app
        .client
        .get(app.url("/v1/catalog"))
        .header("content-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(bodiless.status(), 200);
}
