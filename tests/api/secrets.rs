//! The Redis URL's password never reaches a log line, the console or an error body: the real
//! `pillarz serve` with a password in `--redis` pointing at a dead port, debug logs on.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const SECRET: &str = "hunter2-SeCrEt";

fn dead_port() -> u16 {
    // Bound and released at once: nothing listens there.
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_redis_password_is_never_shown() {
    let url = format!("redis://:{SECRET}@127.0.0.1:{}", dead_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .args(["serve", "--listen", "127.0.0.1:0", "--redis", &url])
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained as it comes, so that a full pipe never blocks the server's logging.
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut err = String::new();
        stderr.read_to_string(&mut err).unwrap();
        err
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let base = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let mut bodies = Vec::new();
    let started = Instant::now();
    let game = "6a3e7f3a-0000-4000-8000-000000000000";
    let requests = [
        client
            .post(format!("{base}/v1/games"))
            .json(&json!({"game": "pyrga"})),
        client.get(format!("{base}/healthz/ready")),
        client.get(format!("{base}/v1/games/{game}")),
        client.get(format!("{base}/v1/games/{game}/events")),
        client
            .post(format!("{base}/v1/games/{game}/moves"))
            .bearer_auth("ab".repeat(32))
            .json(&json!({"move": "a1"})),
    ];
    for request in requests {
        let response = request.send().await.unwrap();
        assert!(response.status().is_server_error(), "{}", response.status());
        bodies.push(response.text().await.unwrap());
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    let _ = child.kill();
    let _ = child.wait();
    let mut out = first;
    stdout.read_to_string(&mut out).unwrap();
    let err = stderr.join().unwrap();
    assert!(err.contains("127.0.0.1"), "the logs name the store: {err}");
    assert!(!out.contains(SECRET), "stdout: {out}");
    assert!(!err.contains(SECRET), "stderr: {err}");
    for body in &bodies {
        assert!(body.contains("store_unavailable"), "{body}");
        assert!(!body.contains(SECRET), "body: {body}");
    }
}

#[test]
fn a_bad_redis_url_is_refused_without_showing_its_password() {
    let url = format!("redis://:{SECRET}@127.0.0.1:notaport");
    let output = Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .args(["serve", "--listen", "127.0.0.1:0", "--redis", &url])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(all.contains("--redis"), "{all}");
    assert!(!all.contains(SECRET), "{all}");
}
