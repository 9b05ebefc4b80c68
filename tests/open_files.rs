//! `pillarz serve` under a low limit of open files, as a container runtime may set it (containerd
//! 2 gives a soft limit of 1,024): every event stream holds a socket and, while it waits, a copy
//! of it (`service::peer`), so a replica that kept such a limit ran out of descriptors long
//! before its `--max-event-streams`, and then accepted no connection at all, a move's included.

#[path = "common/free_port.rs"]
mod free_port;
use free_port::free_port;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The soft limit the service is started with, and the streams opened: each stream costs two
/// descriptors, so they need more than twice the soft limit allows.
const SOFT_LIMIT: u32 = 256;
const STREAMS: usize = 300;

struct Server {
    child: Child,
    addr: String,
    /// What the service printed (its JSON log lines).
    log: tempfile::NamedTempFile,
    /// The hard limit it was started under, which it should raise its soft limit to.
    hard_limit: u64,
}

impl Server {
    fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `request` on a new connection and returns it with the answer's head.
fn ask(addr: &str, request: &str) -> std::io::Result<(TcpStream, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(request.as_bytes())?;
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            break;
        }
        head.push(byte[0]);
    }
    Ok((stream, String::from_utf8_lossy(&head).into_owned()))
}

fn get(addr: &str, path: &str) -> std::io::Result<(TcpStream, String)> {
    ask(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: pillarz\r\n\r\n"),
    )
}

fn start() -> Server {
    let (_, hard_limit) = rlimit::Resource::NOFILE.get().unwrap();
    assert!(
        hard_limit >= 1024,
        "this test needs a hard open-file limit of at least 1,024 (ulimit -Hn), not {hard_limit}"
    );
    let port = free_port();
    let log = tempfile::NamedTempFile::new().unwrap();
    let child = Command::new("prlimit")
        // The soft limit only: the hard one stays what the machine gives.
        .arg(format!("--nofile={SOFT_LIMIT}:"))
        .arg(env!("CARGO_BIN_EXE_pillarz"))
        .arg("serve")
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--anon-quotas", "off"])
        .arg("--json-logs")
        .stdout(Stdio::null())
        .stderr(log.reopen().unwrap())
        .spawn()
        .expect("prlimit runs (util-linux, on every Debian and Ubuntu)");
    let server = Server {
        child,
        addr: format!("127.0.0.1:{port}"),
        log,
        hard_limit,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while get(&server.addr, "/healthz/live").is_err() {
        assert!(
            Instant::now() < deadline,
            "the service did not start:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

#[test]
fn a_replica_under_a_low_open_file_limit_still_serves_its_streams_and_new_connections() {
    let server = start();
    // It says which limit it serves under: the hard one, not the soft one it was given.
    let limit = server
        .log()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|line| line["fields"]["message"] == "open-file limit")
        .and_then(|line| line["fields"]["limit"].as_u64());
    assert_eq!(limit, Some(server.hard_limit), "{}", server.log());
    let body = r#"{"game":"pillarz"}"#;
    let (mut created, head) = ask(
        &server.addr,
        &format!(
            "POST /v1/games HTTP/1.1\r\nHost: pillarz\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
    .unwrap();
    assert!(head.starts_with("HTTP/1.1 201"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .expect("a Content-Length")
        .trim()
        .parse()
        .unwrap();
    let mut game = vec![0; length];
    created.read_exact(&mut game).unwrap();
    let game: serde_json::Value = serde_json::from_slice(&game).unwrap();
    let id = game["game"]["id"].as_str().expect("the game's id");

    let mut streams = Vec::new();
    for n in 0..STREAMS {
        let (stream, head) = get(&server.addr, &format!("/v1/games/{id}/events"))
            .unwrap_or_else(|e| panic!("stream {n} of {STREAMS}: {e}\n{}", server.log()));
        assert!(head.starts_with("HTTP/1.1 200"), "stream {n}: {head}");
        streams.push(stream);
    }
    // With all of them open, a new connection is still answered.
    let (_, head) = get(&server.addr, "/healthz/live")
        .unwrap_or_else(|e| panic!("with {STREAMS} streams open: {e}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
}
